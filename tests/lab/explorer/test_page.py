"""The explorer's words on the page: the fixed ones, and the first answer's, written in by the server."""

import inspect
import math
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer import sequence
from attnlab.lab.explorer.display import display_strings
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.explorer.page import (
    RESET_HINT,
    STEPS,
    first_sentences,
    page_text,
    page_words,
    reference_words,
    widget_words,
)
from attnlab.lab.explorer.program import to_python
from attnlab.lab.explorer.state import example_answer
from attnlab.lab.limits import MAX_SOURCES, limit_words


def test_the_first_sentences_are_the_worked_examples_answer():
    answer = example_answer()
    said = first_sentences()
    assert said["caption"] == answer["explorer"]["display"]["labels"]["caption"]["text"]
    assert said["caption"] == "q = [2, 1] · Compare the query with each key."
    assert said["row_label"] == "Row 0 (A) · unmasked projection."
    assert said["mix_hint"] == answer["explorer"]["display"]["labels"]["mix_hint"]["text"]
    assert said["challenge_goal"] == "Give the second source more than 90% of the attention."
    assert said["own_hint"] == limit_words()["own_example"]["text"]
    assert said["match_help"].startswith(answer["explorer"]["display"]["words"]["match_help"])
    assert said["match_help"].startswith("Drag anywhere in the plane, or focus q and use the arrow keys "
                                         "(Shift for steps of 1).")
    assert {said[f"step_{name}"] for name in STEPS} == set(STEPS.values())


def test_the_reference_sentences_name_the_worked_query():
    words = reference_words()
    for said in words.values():
        assert said["claims"]["q"] == list(WORKED.q)
        assert "with q = [2, 1]" in said["text"]


def test_the_own_example_form_has_words_for_every_source_it_can_hold():
    own = page_words()["own"]
    assert len(own["sources"]) == MAX_SOURCES
    assert own["sources"][2] == {"legend": "Source 3", "remove": "Remove source 3"}
    # a new source takes the first name not in use: with at most MAX_SOURCES - 1 in use, one is free
    assert len(set(own["names"])) == MAX_SOURCES


def test_the_widget_titles_its_steps_as_the_page_does():
    steps = widget_words()["steps"]
    assert [s["number"] for s in steps] == ["1", "2", "3"]
    assert [s["title"] for s in steps] == list(STEPS.values())


TEXT = page_text()
coordinate = st.floats(min_value=-20, max_value=20, allow_nan=False, allow_infinity=False)
vector = st.lists(coordinate, min_size=2, max_size=2)


def test_every_fixed_text_is_plain_words_or_a_sentence_with_claims():
    assert first_sentences()["reset_hint"] == RESET_HINT["text"] == TEXT["reset_hint"]["text"]
    for name, text in TEXT.items():
        words = text if isinstance(text, str) else text["text"]
        assert words and words == words.strip() and first_sentences()[name] == words, name
        if isinstance(text, dict):
            assert text["claims"], name


@settings(max_examples=200, deadline=None)
@given(q=vector, keys=st.lists(vector, min_size=1, max_size=8), shift=coordinate)
def test_only_differences_between_scores_matter_as_the_share_hint_and_the_mz_note_say(q, keys, shift):
    """A third coordinate q₃ = 1 with the same k₃ = shift on every key adds shift to every score."""
    assert TEXT["share_hint"]["claims"]["shift_invariant"]
    assert TEXT["normalization_note"]["claims"]["shift_invariant"]
    values = [[float(i), 1.0 - i] for i in range(len(keys))]
    t = trace_query(q, keys, values, scale=1.0)
    shifted = trace_query([*q, 1.0], [[*k, shift] for k in keys], values, scale=1.0)
    assert t.m == max(t.scores)  # "m is the shared maximum scaled score"
    assert math.isclose(t.z, math.fsum(math.exp(s - t.m) for s in t.scores), rel_tol=1e-12)
    for w, w_shifted in zip(t.weights, shifted.weights):
        assert math.isclose(w, w_shifted, rel_tol=1e-9, abs_tol=1e-12)
    for j, o in enumerate(t.output):  # "sum the contributions coordinate by coordinate for output o"
        assert math.isclose(o, math.fsum(c[j] for c in t.carries), rel_tol=1e-12, abs_tol=1e-12)


def test_the_precise_note_keeps_minus_zero_and_underflow_is_not_a_mask():
    claims = TEXT["precise_note"]["claims"]
    assert claims == {"negative_zero_kept": True, "underflow_is_not_mask": True}
    assert fmt.precise(-0.0) != fmt.precise(0.0) and repr(float(fmt.precise(-0.0))) == "-0.0"
    t = trace_query([1000.0, 0.0], [[1.0, 0.0], [-1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], scale=1.0)
    assert t.underflowed == (1,) and t.blocked == () and t.weights[1] == 0.0 and all(t.allowed)


def test_the_rounding_note_says_the_displays_digits():
    assert TEXT["rounding_note"]["claims"] == {"digits": 3, "shares_total": 100}
    assert inspect.signature(fmt.rounded).parameters["digits"].default == 3
    assert fmt.rounded(2 / 3) == "0.667" and fmt.vector([1 / 3, 2.0]) == "[0.333, 2]"
    # "shares shown as percentages ... add up to 100": the explorer's own set at q = [0, 0]
    at_zero = display_strings(trace_query([0.0, 0.0], WORKED.keys, WORKED.values))
    shown = [s["percent"] for s in at_zero["sources"]]
    assert shown == ["34%", "33%", "33%"] and sum(int(p.rstrip("%")) for p in shown) == 100


def test_the_worked_note_names_the_worked_examples_vectors():
    claims = TEXT["worked_note"]["claims"]
    trace = example_answer()["explorer"]["trace"]
    assert claims["example"] == "worked"
    assert claims["q"] == trace["q"] == list(WORKED.q)
    assert claims["keys"] == trace["keys"] and claims["values"] == trace["values"]


def test_the_python_note_is_true_the_program_prints_the_engines_exact_numbers(tmp_path):
    assert TEXT["python_note"]["claims"] == {"exact": True}
    trace = trace_query(list(WORKED.q), [list(k) for k in WORKED.keys], [list(v) for v in WORKED.values])
    path = tmp_path / "attention.py"
    path.write_text(to_python(trace), encoding="utf-8")
    out = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True, check=True).stdout
    assert f"output={list(trace.output)!r}" in out


def test_reset_restores_what_the_reset_hint_says_and_keeps_the_rest():
    claims = RESET_HINT["claims"]
    start = sequence.STARTING
    edited = sequence.edit_value(sequence.edit_query(start, [4.0, -2.0]), 0, 0, 7.0)
    edited = sequence.edit_value(sequence.edit_value(edited, 0, 1, 9.0), 2, 0, 3.0)
    after = sequence.reset(edited)
    source, coord = claims["value"]
    assert after.queries[claims["query_row"]] == start.queries[claims["query_row"]]
    assert after.values[source][coord] == start.values[source][coord] != 7.0
    assert after.values[0][1] == 9.0 and after.values[2][0] == 3.0
