"""The control's words: what a program says it reproduces is true; every number a view lists has a program."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.lab.realmodel.program.answer import KINDS, program_answer
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.words import PROGRAM_PATH, VIEWS, control_words, path_said

SMOLLM2 = Source(model="smollm2", title="SmolLM2-135M-Instruct", ids=(504, 2914, 4289, 335, 260, 2914),
                 tokens=("The", " cat", " sat", " on", " the", " cat"), path="q4_1", n_layer=30, n_head=9,
                 d_head=64, vocab=49152)  # fmt: skip
# a value each picker may give (a token, a coordinate, a block, a rank)
PICKED = {"query": 4, "key": 2, "coordinate": 63, "layer": 29, "rank": 4, "token": 11}


@given(st.sampled_from(["float32", "q4_1", "unknown"]))
def test_the_path_sentence_claims_what_it_says(page_path):
    s = path_said(page_path)
    claims = s["claims"]
    assert claims == {"page_path": page_path, "program_path": PROGRAM_PATH,
                      "bit_for_bit": page_path == PROGRAM_PATH}  # fmt: skip
    assert "float32 path" in s["text"] and ("bit for bit" in s["text"]) == (page_path != "q4_1")
    assert ("agree up to rounding" in s["text"]) == (page_path == "q4_1")
    assert s["text"].startswith("This page shows the float32 path, and so does") == claims["bit_for_bit"]
    assert (f"This page shows the {page_path} path" in s["text"]) == (page_path != "unknown")


@pytest.mark.models  # a program reads SmolLM2's file (its description) to be written
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_every_number_a_view_lists_has_a_program(view):
    """Each choice, with the view's fields and the pickers' values, is a descriptor the lab answers."""
    fixed = {"layer": 3, "head": 5, "query": 4, "key": 1, "index": 2, "position": 3}  # what the views fix
    for choice in VIEWS[view]:
        assert choice["kind"] in KINDS
        fields = {
            "kind": choice["kind"],
            **fixed,
            **choice["fixed"],
            **{n: PICKED[n] for n in choice["needs"]},
        }
        answer = program_answer(SMOLLM2, fields)
        assert answer["kind"] == choice["kind"] and answer["program"].endswith("print(repr(float(value)))\n")


def test_the_controls_words_name_every_picker_its_views_need():
    words = control_words()
    needs = {n for choices in words["views"].values() for c in choices for n in c["needs"]}
    assert needs <= set(words["fields"]) and "choice" in words["fields"]
    assert words["ranks"] == ["1", "2", "3", "4", "5"]
    assert "{file}" in words["download"]
    for choices in words["views"].values():
        assert len({c["value"] for c in choices}) == len(choices)  # one value per choice in a view
