"""The state-space lab's challenges."""

from __future__ import annotations

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.ssm import CONTROLS, LAB


def check(cid: str, response=None, **given) -> dict:
    return LAB.check(cid, read(CONTROLS, given, "inputs"), response)


def test_state_size():
    assert check("state-size", [20.0])["met"]
    low = check("state-size", [16.0])
    assert (
        not low["met"]
        and low["words"]["claims"]["direction"] == "too low"
        and "20" not in low["words"]["text"]
    )


def test_copy_all_needs_no_more_tokens_than_key_numbers():
    assert check("copy-all", n=8, d=8)["met"]
    assert check("copy-all", n=3, d=4)["met"]
    missed = check("copy-all", n=12, d=4)
    assert not missed["met"] and missed["words"]["claims"]["linear_right"] < 12
