"""The page's answer for a lab: the shared parts around the lab's own, and the page's fixed words."""

from __future__ import annotations

import json

import pytest

from attnlab.lab.connections import registry
from attnlab.lab.connections.page import WORDS, connections_page, lab_page


@pytest.mark.parametrize("name", registry.NAMES)
def test_a_labs_page_answer(name):
    page = lab_page(name, {}, "query")
    json.dumps(page, allow_nan=False)  # plain JSON all through: no NumPy scalar, no NaN
    entry = registry.entry(name)
    assert page["lab"]["title"] == entry.title and page["lab"]["route"] == entry.route
    assert page["lab"]["opens_from"]["claims"] == {"connections": list(entry.opens_from)}
    assert all(f"“{t}”" in page["lab"]["opens_from"]["text"] for t in entry.opens_from)
    assert page["link"].startswith(entry.route + "?")
    assert page["files"]["program"] == {
        "name": f"attnlab_{name}.py",
        "done": f"Downloaded attnlab_{name}.py.",
    }
    assert [c["name"] for c in page["controls"]] == [c.name for c in registry.lab(name).controls]
    assert page["practice"]["challenges"] and all("answer" not in c for c in page["practice"]["challenges"])
    for p in page["pictures"]:
        assert p["kind"] in ("heatmap", "lines", "bars", "bands") and p["title"] and p["caption"]


def test_the_one_connection_sentence():
    assert lab_page("moe", {})["lab"]["opens_from"]["text"] == (
        "Opened from the main page's connections “Softmax routing” and “Sparse selection”."
    )


def test_what_the_server_writes_into_the_page():
    served = connections_page("flash")
    assert served["words"]["connections"]["back_href"] == "/#connections"
    assert served["words"]["connections"]["numbers"] == WORDS["numbers"] == served["fills"]["numbers"]
    assert served["fills"]["title"] == registry.entry("flash").title
    assert "http" in served["words"]  # the shared modules' words come too
