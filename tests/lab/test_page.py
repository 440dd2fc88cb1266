"""The words every page's shared modules place: served once, in the page."""

from attnlab.lab.page import fill_texts, shared_fills, shared_words
from attnlab.lab.said import said


def test_the_http_modules_words_are_whole_sentences():
    words = shared_words()["http"]
    assert set(words) == {"refused", "failed"}
    for sentence in words.values():
        assert sentence[0].isupper() and sentence.endswith(".") and "HTTP" not in sentence


def test_every_page_shows_the_brand_and_a_fill_is_a_said_sentences_text():
    assert shared_fills() == {"brand": "attnlab"}
    fixed = {"a": "Layer", "b": said("3 px per cell", px=3)}
    assert fill_texts(fixed) == {"a": "Layer", "b": "3 px per cell"}
