"""The circuits lab's challenges, checked on synthetic recorded runs."""

from __future__ import annotations

import pytest
from copykit import measured, run_data

from attnlab.engine.errors import FieldError
from attnlab.lab.connections.circuits import CONTROLS, LAB
from attnlab.lab.connections.circuits.copying import Copying
from attnlab.lab.connections.controls import read

VALUES = read(CONTROLS, {"tested": 3}, "inputs")


def test_the_feeder_is_the_largest_drop_through_the_keys():
    data = run_data(4, tested=3)
    c = Copying(data)
    right = list(c.tested[c.feeder])
    met = LAB.check("feeder", VALUES, right, measured(data))
    assert met["met"] and met["words"]["claims"]["drop"] == max(c.drops)
    other = next(list(h) for h in c.tested if list(h) != right)
    missed = LAB.check("feeder", VALUES, other, measured(data))
    assert not missed["met"] and missed["words"]["text"].endswith("another tested head takes more.")
    untested = LAB.check("feeder", VALUES, [c.head[0], c.head[1]], measured(data))
    assert not untested["met"] and "is not one of the heads tested" in untested["words"]["text"]
    half = LAB.check("feeder", VALUES, [1.5, 0], measured(data))
    assert not half["met"] and half["words"]["text"].startswith("A layer and a head are whole numbers")
    assert not LAB.check("feeder", VALUES, right, {})["met"]
    with pytest.raises(FieldError):
        LAB.check("feeder", VALUES, [1], measured(data))


def test_keys_or_queries_follows_the_two_drops():
    for seed in range(12):
        data = run_data(seed, tested=3)
        c = Copying(data)
        if not c.tested:  # the induction head in layer 0: nothing to test
            continue
        i = c.feeder
        right = "keys" if c.clean - c.keys[i] >= (c.clean - c.every[i]) / 2 else "queries"
        wrong = "queries" if right == "keys" else "keys"
        assert LAB.check("path", VALUES, right, measured(data))["met"]
        answered = LAB.check("path", VALUES, wrong, measured(data))
        assert not answered["met"] and answered["words"]["claims"]["right"] == right
