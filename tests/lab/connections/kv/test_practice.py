"""The KV-cache lab's challenges."""

from __future__ import annotations

from synthetic import shapes_measured

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.kv import CONTROLS, LAB


def check(cid: str, response=None, **given) -> dict:
    return LAB.check(cid, read(CONTROLS, given, "inputs"), response, shapes_measured())


def test_mha_ratio_and_waste_bound():
    assert check("mha-ratio", "3")["met"] and check("mha-ratio", "3")["words"]["claims"]["ratio"] == 3
    assert not check("mha-ratio", "9")["met"]
    met = check("waste-bound", "15", requests=8)
    assert met["met"] and 0 <= met["words"]["claims"]["here"] <= 15
    assert not check("waste-bound", "16")["met"]


def test_the_ratio_needs_the_shapes():
    out = LAB.check("mha-ratio", read(CONTROLS, {}, "inputs"), "3", {})
    assert not out["met"] and out["words"]["text"] == (
        "The model's shapes are not in: this runs where the lab is served."
    )
