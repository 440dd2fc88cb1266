"""Trace: the ordered, read-only name -> array mapping behind every view."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine.trace import Trace, TraceBuilder


def test_trace_mapping_behaviour():
    t = Trace(entries=(("a.x", np.ones((2, 3))), ("a.y", np.zeros(4)), ("b", np.ones(1))))
    assert t.shapes() == {"a.x": (2, 3), "a.y": (4,), "b": (1,)}
    assert t.child("a").shapes() == {"x": (2, 3), "y": (4,)}
    assert t.shape("b") == (1,) and len(t) == 3 and "a.x" in t
    assert "a.x: (2, 3)" in repr(t)
    with pytest.raises(KeyError, match="no step 'c' in this trace"):
        t["c"]
    with pytest.raises(ValueError, match="trace names repeat"):
        Trace(entries=(("a", 1), ("a", 2)))


def test_builder_records_only_when_enabled():
    on, off = TraceBuilder(), TraceBuilder(enabled=False)
    for b in (on, off):
        b.add("x", np.ones(2))
        b.extend("attn", Trace(entries=(("q", np.zeros((1, 3))),)))
    assert off.build() is None
    assert on.build().shapes() == {"x": (2,), "attn.q": (1, 3)}
