"""The patching view on MiniLM: the sweep's own numbers, its progress, and a cancel's partial cells."""

from __future__ import annotations

import pytest

from attnlab.models.circuits.patching import pair, residual_sweep
from attnlab.models.circuitviews.patching import patching_view

pytestmark = pytest.mark.models


def test_the_patching_view_is_the_sweep_and_a_cancel_keeps_its_partial_cells(minilm):
    clean = minilm.tokenize(["The cat sat on the mat."]).ids[0].tolist()
    corrupt = minilm.tokenize(["The dog sat on the rug."]).ids[0].tolist()
    p = pair(minilm, clean, corrupt)
    seen = []
    v = patching_view(minilm, p, sweep="residual", layers=[4, 5], progress=lambda d, t: seen.append((d, t)))
    s = residual_sweep(minilm, p, layers=[4, 5])
    assert v["sweep"]["recovered_values"] == s.recovered.tolist()
    assert seen == [(d, 18) for d in range(1, 19)] and v["sweep"]["total"] == 18
    assert v["pair"]["values"]["claims"] == {"clean": p.clean_value, "corrupt": p.corrupt_value}
    stops = iter([False, False, False, True])
    partial = patching_view(minilm, p, sweep="residual", layers=[4, 5], cancel=lambda: next(stops))
    assert partial["sweep"]["cancelled"] is True and partial["sweep"]["done"] == 3
    assert partial["sweep"]["recovered_values"][0][:3] == s.recovered[0, :3].tolist()
    assert partial["sweep"]["recovered_values"][0][3:] == [None] * 6
