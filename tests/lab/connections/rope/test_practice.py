"""The RoPE lab's challenges."""

from __future__ import annotations

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.rope import CONTROLS, LAB


def check(cid: str, response=None, **given) -> dict:
    return LAB.check(cid, read(CONTROLS, given, "inputs"), response)


def test_fit_wants_the_smallest_factor():
    assert check("fit", train=512, offset=1500, factor=3)[
        "met"
    ]  # 1500 / 3 = 500 <= 511; 1500 / 2 = 750 > 511
    assert "divide by more" in check("fit", train=512, offset=1500, factor=2)["words"]["text"]
    assert "smallest" in check("fit", train=512, offset=1500, factor=4)["words"]["text"]
    assert not check("fit", train=512, offset=100, factor=1)["met"]


def test_depends_on_the_offset():
    met = check("depends", "offset")
    assert met["met"] and met["words"]["claims"]["same"] is True
    assert not check("depends", "positions")["met"]


def test_smollm2s_slowest_pair():
    from synthetic import rope_measured

    values = read(CONTROLS, {"own": "on"}, "inputs")
    met = LAB.check("slowest", values, "440k", rope_measured())
    assert met["met"] and round(met["words"]["claims"]["slowest"]) == 438_460
    assert not LAB.check("slowest", values, "100k", rope_measured())["met"]
    assert not LAB.check("slowest", values, "440k", {})["met"]
