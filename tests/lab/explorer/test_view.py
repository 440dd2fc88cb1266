"""The held table as the page draws it: every string it places, for the worked sequence and an own example."""

from attnlab.lab.explorer import sequence as seq
from attnlab.lab.explorer.view import sequence_view


def test_the_worked_sequences_table_strings():
    view = sequence_view(seq.STARTING)
    assert view["title"]["text"] == "Held example · 3 queries · 3 sources"
    assert view["caption"]["text"] == (
        "Scaled scores s = q·k/√2 and shares, one row per token’s query; checked cells may attend"
    )
    assert view["sources"] == ["Source A", "Source B", "Source C"]
    row = view["rows"][1]
    assert (row["name"], row["query_text"]) == ("Row 1 (B)", "q = [1, 2]")
    assert row["score_marks"] == ["s 2.121", "s 0.707", None]  # C is blocked in row 1: no score shown
    assert row["mask_labels"][2] == "Row 1 (B) may attend to C"
    assert row["summary"]["text"].startswith("Row 1: q lines up most with A's key (score 2.121)")
    assert view["worked_fit"] == {"sequence": None, "labels": None, "keys": None}
    assert view["explorer"]["heading"]["text"] == "Row 0 (A) · unmasked projection."


def test_an_own_example_of_four_sources_with_a_scale():
    held = seq.held_from_dict({
        "labels": ["W", "X", "Y", "Z"], "queries": [[1, 0]], "keys": [[1, 0], [0, 1], [1, 1], [-1, 0]],
        "values": [[1, 0], [0, 1], [1, 1], [-1, 0]], "mask": [[True, True, False, True]], "masked": True,
        "scale": 0.0005,
    })
    view = sequence_view(held)
    assert view["title"]["text"] == "Held example · 1 query · 4 sources"
    assert view["caption"]["text"] == (
        "Scaled scores s = q·k × 0.0005 and shares, one row: the query; checked cells may attend"
    )
    fit = view["worked_fit"]
    assert fit["sequence"]["text"].startswith("This challenge is written for the worked A/B/C sequence")
    assert fit["labels"]["text"].endswith("yours are W, X, Y, Z.")
    assert fit["keys"]["claims"]["yours"] == [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]]
    assert view["explorer"]["heading"]["text"] == "Your own example · one query over 4 sources."
