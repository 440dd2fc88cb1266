"""Places, pacing and what a push may open."""

from __future__ import annotations

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.classroom import places

HOSTS = frozenset({"127.0.0.1", "localhost", "mylaptop.local"})


def test_every_place_is_a_page_of_the_lab():
    from attnlab.web.assets import PAGES

    assert {p["page"] for p in places.places()} <= set(PAGES)
    assert places.sections() == {"/": ["explorer", "practice", "block"]}
    assert len({p["id"] for p in places.places()}) == len(places.places())


def test_a_page_report_is_read_as_its_place():
    assert places.place_of({"page": "/", "section": "practice"})["id"] == "practice"
    assert places.place_of({"page": "/connections/flash", "section": None})["id"] == "lab:flash"
    assert places.place_of({"page": "/", "section": "why"}) is None
    assert places.place_of({"page": "/elsewhere"}) is None


def test_pacing_to_practice_keeps_the_explorer_open():
    assert places.allowed("explorer", ["practice"]) and places.allowed("practice", ["practice"])
    assert not places.allowed("block", ["practice"]) and not places.allowed(None, ["practice"])
    assert places.allowed("block", []) and places.allowed(None, None)
    assert places.part_place("notebook") == "practice" and places.part_place("connections/kv") == "lab:kv"


def test_a_pace_is_checked_and_kept_in_the_pickers_order():
    assert places.check_pace(["block", "explorer"]) == ["explorer", "block"]
    with pytest.raises(FieldError) as refused:
        places.check_pace(["explorer", "nowhere"])
    assert refused.value.loc == ("places", 1)


@pytest.mark.parametrize("text, href", [
    ("/", "/"), ("/real-model?text=hi", "/real-model?text=hi"),
    ("http://mylaptop.local:8000/#example=abc", "/#example=abc"),
    ("  http://127.0.0.1:8000/connections/rope?x=1  ", "/connections/rope?x=1"),
])
def test_a_pushed_link_is_cut_to_a_path_of_the_lab(text, href):
    assert places.push_link(text, HOSTS)["href"] == href


@pytest.mark.parametrize("text", [
    "", "https://evil.example/", "javascript:alert(1)", "/admin", "//evil.example/", "data:text/html,x",
    "/" + "x" * 9000,
])
def test_a_pushed_link_outside_the_lab_is_refused(text):
    with pytest.raises(FieldError) as refused:
        places.push_link(text, HOSTS)
    assert refused.value.loc == ("link",)


def test_a_pushed_challenge_is_one_of_the_practice():
    assert places.push_challenge("zero-q") == {
        "href": "/#practice", "challenge": "zero-q", "title": "Predict the shares at q = [0, 0]",
        "place": "practice",
    }
    with pytest.raises(FieldError):
        places.push_challenge("nope")
