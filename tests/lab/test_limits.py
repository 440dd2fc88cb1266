"""The limits, declared once, and the sentences that state them say those limits."""

from attnlab.lab.limits import MAX_MAGNITUDE, MAX_SOURCES, MIN_SOURCES, bound, limit_words, page_limits


def test_the_own_example_hint_states_the_declared_limits():
    hint = limit_words()["own_example"]
    limits = {"min_sources": MIN_SOURCES, "max_sources": MAX_SOURCES, "max_magnitude": MAX_MAGNITUDE}
    assert hint["claims"] == limits
    assert f"({MIN_SOURCES} to {MAX_SOURCES})" in hint["text"]
    assert f"within ±{bound(MAX_MAGNITUDE)}." in hint["text"]
    assert "±1,000,000" in hint["text"] and "(1 to 8)" in hint["text"]


def test_the_own_example_count_has_a_sentence_for_every_number_of_sources():
    counts = limit_words()["sources_count"]
    assert [c["claims"]["sources"] for c in counts] == list(range(MIN_SOURCES, MAX_SOURCES + 1))
    assert counts[0]["text"] == "1 of at most 8 sources."
    assert counts[-1]["text"] == "8 of at most 8 sources."
    assert all(c["claims"]["max_sources"] == MAX_SOURCES for c in counts)


def test_the_page_is_served_the_same_limits_and_words():
    limits = page_limits()
    assert (limits["max_sources"], limits["max_magnitude"]) == (MAX_SOURCES, MAX_MAGNITUDE)
    assert limits["words"] == limit_words()
