"""The cross-attention lab's challenges."""

from __future__ import annotations

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.cross import CONTROLS, LAB


def check(cid: str, response=None, **given) -> dict:
    return LAB.check(cid, read(CONTROLS, given, "inputs"), response)


def test_one_word_needs_a_patch_that_shows_something_and_sharpness():
    met = check("one-word", grid=6, row=5, col=0, sharpness=8.0)  # a grass patch: only "grass" names grass
    assert met["met"] and met["words"]["claims"]["word"] == "grass"
    dull = check("one-word", grid=6, row=5, col=0, sharpness=0.5)
    assert not dull["met"] and dull["words"]["claims"]["share"] < 0.8
    shared = check("one-word", grid=6, row=3, col=3, sharpness=8.0)  # the ball: "red" names it too
    assert not shared["met"] and shared["words"]["claims"]["word"] == "ball"
    empty = check("one-word", grid=6, row=3, col=0, sharpness=8.0)  # shows nothing: every word alike
    assert not empty["met"] and abs(empty["words"]["claims"]["share"] - 0.2) < 1e-15


def test_shared_text_is_never():
    met = check("shared-text", "never")
    assert met["met"] and 0 < met["words"]["claims"]["text_share"] < 1
    assert not check("shared-text", "sometimes")["met"]
