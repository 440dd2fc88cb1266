"""The words every page's shared modules place: served once, in the page."""

from attnlab.lab.page import real_model_page, shared_words


def test_the_http_modules_words_are_whole_sentences():
    words = shared_words()["http"]
    assert set(words) == {"refused", "failed"}
    for sentence in words.values():
        assert sentence[0].isupper() and sentence.endswith(".") and "HTTP" not in sentence


def test_the_real_model_page_gets_only_the_shared_words():
    assert real_model_page() == {"words": shared_words(), "fills": {}}
