"""The registry: every lab has a folder with the one shape, a route and the connections it opens from."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from attnlab.lab.connections import registry
from attnlab.lab.connections.controls import ControlError, read
from attnlab.lab.connections.shape import ConnectionLab


def connection_titles() -> set[str]:
    content = json.loads(resources.files("attnlab.lab").joinpath("data", "content.json").read_text("utf-8"))
    return {item["title"] for g in content["connections"]["groups"] for item in g["items"]}


@pytest.mark.parametrize("name", registry.NAMES)
def test_each_lab_has_the_shape_and_opens_from_real_connections(name):
    lab = registry.lab(name)
    assert isinstance(lab, ConnectionLab)
    entry = registry.entry(name)
    assert entry.route == f"/connections/{name}"
    assert set(entry.opens_from) <= connection_titles()
    values = read(lab.controls, {}, "query")
    answer = lab.answer_for(values)  # a lab with a model part: nothing measured, what it draws without
    assert set(answer) == {"pictures", "words", "numbers", "data"}
    assert {c["id"] for c in lab.challenges.listed()}, "at least one challenge"


def test_no_two_labs_open_from_the_same_connection():
    opened = [t for e in registry.ENTRIES for t in e.opens_from]
    assert len(opened) == len(set(opened))


def test_an_unknown_lab_is_refused_at_its_path():
    with pytest.raises(ControlError) as err:
        registry.entry("nope")
    assert err.value.item() == {
        "loc": ["path", "name"],
        "field": "name",
        "type": "value_error",
        "msg": f"Lab 'nope' does not exist; the labs are {', '.join(registry.NAMES)}",
    }
