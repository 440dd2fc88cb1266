"""The explorer's words on the page: the fixed ones, and the first answer's, written in by the server."""

from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.explorer.page import STEPS, first_sentences, page_words, reference_words, widget_words
from attnlab.lab.explorer.state import example_answer
from attnlab.lab.limits import MAX_SOURCES, limit_words


def test_the_first_sentences_are_the_worked_examples_answer():
    answer = example_answer()
    said = first_sentences()
    assert said["caption"] == answer["explorer"]["display"]["labels"]["caption"]["text"]
    assert said["caption"] == "q = [2, 1] · Compare the query with each key."
    assert said["row_label"] == "Row 0 (A) · unmasked projection."
    assert said["mix_hint"] == answer["explorer"]["display"]["labels"]["mix_hint"]["text"]
    assert said["challenge_goal"] == "Give source B more than 90% of the attention."
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
