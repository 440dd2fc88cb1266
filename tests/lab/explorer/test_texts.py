"""The sentences about the row the explorer shows, exactly, for the worked sequence's rows."""

from attnlab.lab.explorer import sequence as seq
from attnlab.lab.explorer.texts import explorer_line, explorer_note, explorer_texts


def test_the_starting_rows_sentences():
    texts = explorer_texts(seq.STARTING)
    assert texts["row"]["text"] == (
        "This is token A's query in the held sequence below, unmasked: it may attend to every source "
        "(A, B, C)."
    )
    assert texts["row"]["claims"] == {"row": 0, "label": "A", "masked": False, "allowed": ["A", "B", "C"],
                                      "blocked": []}
    assert texts["q_legend"] == {"text": "Change the query · one unmasked row",
                                 "claims": {"query_edit": {"row": 0, "masked": False}}}


def test_a_masked_row_names_what_it_blocks_and_where_a_query_edit_goes():
    held = seq.select_row(seq.STARTING, 1, True)
    texts = explorer_texts(held)
    assert texts["row"]["text"] == (
        "This is token B's query in the held sequence below, masked: the mask decides what it may attend to "
        "(C blocked)."
    )
    assert texts["allowed"]["text"] == "This is row 1's masked sequence output: C blocked."
    assert texts["q_legend"]["text"] == "Change the query · returns the explorer to row 0, unmasked"
    note = explorer_note(held)
    assert note["text"] == (
        "Row 1's masked output (C blocked). Query edits return to row 0; value edits are shared. "
        "Other rows and the held mask stay unchanged."
    )
    assert explorer_line(held)["text"] == "The explorer shows Row 1 (B) · masked row. " + note["text"]
