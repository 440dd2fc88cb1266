"""A sentence with its numbers marked: its pieces join to its text, each number keeps its descriptor."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from attnlab.lab.circuits.marks import marked, number

HOW = {"kind": "lens", "position": 8, "layer": 27, "quantity": "token_p"}


def test_a_marked_sentence_is_its_text_its_claims_and_its_pieces_in_order():
    s = marked("After block 27: ", number("77%", HOW, 0.77), " (", number("3", None, 3.0), " ahead).", p=0.77)
    assert s == {
        "text": "After block 27: 77% (3 ahead).",
        "claims": {"p": 0.77},
        "pieces": ["After block 27: ", {"display": "77%", "how": HOW, "value": 0.77}, " (3 ahead)."],
    }


def test_a_sentence_without_a_program_number_is_one_piece():
    assert marked("No cell has a fraction recovered yet.", top=[])["pieces"] == [
        "No cell has a fraction recovered yet."
    ]
    assert marked("", number("0", None, 0.0), "")["pieces"] == ["0"]


text = st.text(max_size=12)
parts = st.lists(text | st.builds(number, text, st.none() | st.just(HOW), st.floats(allow_nan=False)))


@given(parts)
def test_the_pieces_join_to_the_text_and_keep_every_number_with_a_program(drawn):
    s = marked(*drawn)
    placed = "".join(p if isinstance(p, str) else p["display"] for p in s["pieces"])
    assert placed == s["text"]
    assert [p for p in s["pieces"] if not isinstance(p, str)] == [
        p for p in drawn if not isinstance(p, str) and p["how"] is not None
    ]
    kinds = [isinstance(p, str) for p in s["pieces"]]
    assert not any(a and b for a, b in zip(kinds, kinds[1:]))  # no two strings side by side
    assert "" not in s["pieces"]
