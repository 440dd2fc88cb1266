"""The notebook's fixed prose in index.html: each sentence's claims hold against the lab's numbers."""

import pytest

from attnlab.lab.block.page import block_page
from attnlab.lab.explorer import sequence
from attnlab.lab.explorer.state import example_answer
from attnlab.lab.notebook.prose import page_text
from attnlab.models import registry

TEXT = page_text()


def floats(tree) -> list:
    """Every number in a nested answer (lists, tuples, dicts)."""
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in floats(v)]
    if isinstance(tree, (list, tuple)):
        return [x for v in tree for x in floats(v)]
    return [tree] if isinstance(tree, (int, float)) and not isinstance(tree, bool) else []


def causal(allowed) -> bool:
    """Row r may attend to sources 0..r and no later one (top-left causal mask)."""
    return all(bool(a) == (j <= r) for r, row in enumerate(allowed) for j, a in enumerate(row))


def test_the_block_intro_says_the_first_walks_heads_norm_and_dtype():
    claims = TEXT["block_intro"]["claims"]
    page = block_page()
    assert claims == {"heads": 2, "norm": "pre", "dtype": "float64"}
    assert len(page["heads"]) == page["inputs"]["n_head"] == claims["heads"]
    assert page["inputs"]["norm"] == claims["norm"]
    numbers = floats(page["output"]) + floats([h["weights"] for h in page["heads"]])
    assert numbers and all(type(x) is float for x in numbers)  # a Python float is an IEEE float64
    assert TEXT["block_intro"]["text"].startswith("Two heads of the single-head calculation above")


def test_the_block_eyebrow_names_the_held_tokens_and_the_causal_mask():
    claims = TEXT["block_eyebrow"]["claims"]
    page = block_page()
    assert claims["labels"] == list(page["inputs"]["labels"]) == list(example_answer()["sequence"]["labels"])
    assert claims["mask"] == "causal" and all(causal(h["allowed"]) for h in page["heads"])
    assert TEXT["block_eyebrow"]["text"] == "Second half · the same A/B/C tokens · the same causal mask"


def test_the_held_hint_names_the_sequences_tokens_and_its_causal_mask():
    claims = TEXT["held_hint"]["claims"]
    held = example_answer()["sequence"]
    assert claims == {"labels": ["A", "B", "C"], "mask": "causal"}
    assert held["labels"] == claims["labels"] and causal(held["example"]["mask"])
    assert TEXT["held_unmasked"]["claims"]["row"] == held["example"]["row"] == 0


def test_reset_restores_exactly_the_query_row_and_value_the_held_note_names():
    claims = TEXT["held_note"]["claims"]
    start = sequence.STARTING
    edited = sequence.edit_query(start, [5.0, -3.0])
    edited = sequence.set_values(edited, [[9.0, 8.0], [7.0, 6.0], [5.0, 4.0]])
    after = sequence.reset(edited)
    row, (source, coord) = claims["query_row"], claims["value"]
    assert after.queries[row] == start.queries[row] and after.row == row
    assert after.values[source][coord] == start.values[source][coord] != edited.values[source][coord]
    kept = [(s, c) for s in range(3) for c in range(2) if (s, c) != (source, coord)]
    assert all(after.values[s][c] == edited.values[s][c] for s, c in kept)


def test_the_lede_says_every_number_is_a_python_float():
    assert TEXT["lede"]["claims"] == {"dtype": "float64"}
    trace = example_answer()["explorer"]["trace"]
    computed = ("q", "keys", "values", "dots", "scores", "m", "exps", "z", "weights", "carries", "output")
    numbers = floats([trace[name] for name in computed])
    assert len(numbers) > 30 and all(type(x) is float for x in numbers)


def test_the_real_model_note_names_the_shipped_models():
    claims = TEXT["real_model_note"]["claims"]
    assert claims["models"] == ["minilm", "smollm2"]
    for name in claims["models"]:
        assert registry.title(name).startswith({"minilm": "all-MiniLM", "smollm2": "SmolLM2"}[name])
    note = TEXT["real_model_note"]["text"]
    assert "(MiniLM and SmolLM2)" in note and "two real" in note


def test_the_stepper_summary_and_first_title_are_the_steppers_own():
    stepper = example_answer()["stepper"]
    assert TEXT["stepper_title"] == stepper["steps"][0]["title"] == "Step 1 of 4 · Vectors"
    assert TEXT["stepper_summary"] == "Step through one query: Vectors → Match → Share → Mix"


@pytest.mark.parametrize("name", sorted(TEXT))
def test_every_fixed_text_is_plain_words_or_a_sentence_with_claims(name):
    text = TEXT[name]
    if isinstance(text, dict):
        assert set(text) == {"text", "claims"} and text["claims"] and text["text"].strip() == text["text"]
    else:
        assert text and text.strip() == text
