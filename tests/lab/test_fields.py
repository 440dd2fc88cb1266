"""The problems lab/fields.py words: a number's examples inside its field's range, one text check's words."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.lab.fields import half_character, must_be_number, number_examples, over_share, problem_words


@pytest.mark.parametrize(
    ("whole", "limits", "examples"),
    [
        (True, None, [-1, 2]),  # no range known: the old pair
        (True, {"ge": 0, "le": 10_000}, [0, 2]),  # a layer, a head, a seed: never -1
        (True, {"ge": 1, "le": 64}, [1, 2]),  # new tokens
        (True, {"ge": 0, "le": 1}, [0, 1]),  # a coordinate's index
        (True, {"ge": 5, "le": 9}, [5, 9]),  # none of the usual ones: the bounds themselves
        (False, None, [-0.5, 2]),
        (False, {"ge": 0, "le": 5}, [0.5, 2]),  # temperature
        (False, {"gt": 0, "le": 1}, [0.5, 1]),  # top-p: more than 0
        (False, {"ge": -1e6, "le": 1e6}, [-0.5, 2]),
    ],
)
def test_examples_are_inside_the_fields_range(whole, limits, examples):
    assert number_examples(whole=whole, limits=limits) == examples


def test_the_sentence_gives_the_examples():
    assert must_be_number(whole=True, limits={"ge": 0}) == "must be a whole number, such as 0 or 2"
    assert must_be_number(whole=False) == "must be a number, such as -0.5 or 2"
    assert problem_words("int_parsing", None, {"ge": 1, "le": 64}) == "must be a whole number, such as 1 or 2"
    assert problem_words("float_type", {}, {"gt": 0, "le": 1}) == "must be a number, such as 0.5 or 1"


BOUND = st.integers(-1000, 1000)


@given(low=BOUND, span=st.integers(0, 1000), whole=st.booleans(), open_low=st.booleans())
def test_every_example_is_taken_by_its_field(low, span, whole, open_low):
    span += open_low  # a range with room for a number
    limits = {"gt" if open_low else "ge": low, "le": low + span}
    examples = number_examples(whole=whole, limits=limits)
    assert examples == sorted(set(examples)) and 1 <= len(examples) <= 2
    for x in examples:
        assert (x > low if open_low else x >= low) and x <= low + span
        assert not whole or x == int(x)


def test_one_sentence_for_a_lone_surrogate_wherever_it_is():
    assert problem_words("string_unicode", None) == half_character()
    assert half_character() == "holds half of a character (a lone surrogate): paste the text again"


@pytest.mark.parametrize(
    ("seconds", "computer", "text"),
    [
        (1, False, "This page has asked for more than its share of the server's time: try again in 1 second"),
        (3, True,
         "This computer has asked for more than its share of the server's time: try again in 3 seconds"),
    ],
)
def test_over_share_says_who_and_when(seconds, computer, text):
    assert over_share(seconds, computer=computer) == text


def test_an_error_names_a_block_matrix_as_the_editor_labels_it():
    """W₂ in the editor's picker is W₂ in an error about one of its cells, never W_2."""
    from attnlab.lab.block.view import matrices
    from attnlab.lab.fields import BLOCK_MATRICES

    editor = {tuple(m["path"]): m["label"].split(" (")[0] for m in matrices()}
    named = {path: label.split(" (")[0] for path, label in BLOCK_MATRICES.items() if path != ("x",)}
    assert named == {path: label for path, label in editor.items() if path != ("x",)}
