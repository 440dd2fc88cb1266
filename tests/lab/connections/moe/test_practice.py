"""The MoE lab's challenges."""

from __future__ import annotations

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.moe import CONTROLS, LAB
from attnlab.lab.connections.moe.walk import walk


def check(cid: str, response=None, **given) -> dict:
    return LAB.check(cid, read(CONTROLS, given, "inputs"), response)


def test_keep_90_is_met_by_the_smallest_k_only():
    w = walk(tokens=8, experts=8, k=1, token=0, scale=1.0, seed=0)
    best = next(k for k in range(1, 9) if w.kept_with(k) >= 0.9)
    assert check("keep-90", k=best)["met"]
    if best > 1:
        assert "keep more" in check("keep-90", k=best - 1)["words"]["text"]
    if best < 8:
        assert "smallest" in check("keep-90", k=best + 1)["words"]["text"]


def test_renormalising_keeps_the_ratio():
    met = check("ratio", "same", k=3)
    assert met["met"] and met["words"]["claims"]["same"] is True
    assert not check("ratio", "grows", k=3)["met"]
    assert not check("ratio", "same", k=1)["met"]
