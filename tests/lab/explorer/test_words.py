"""The page's sentences, generated from the trace's numbers."""

from attnlab.engine.single import trace_query
from attnlab.lab.explorer.words import explain

KEYS = [[-1, 2], [1, 0], [0, 1]]
VALUES = [[2, 0], [0, 2], [-1, -1]]


def test_worked_example_words_match_the_page():
    words = explain(trace_query([2, 1], KEYS, VALUES))
    assert words.summary == (
        "q lines up most with B's key (score 1.414), so B takes 58% of the attention; "
        "C gets 28% and A gets 14%. Output o = [-0.004, 0.868]."
    )
    assert words.match == (
        "Match: query (2, 1) meets keys A = (\u22121, 2), B = (1, 0), C = (0, 1). "
        "Their dot products are [0, 2, 1]. Divide by \u221a2, the square root of the key "
        "width, to get [0, 1.414, 0.707]."
    )
    assert words.share == (
        "Share: softmax subtracts the largest score, exponentiates and divides by the sum. "
        "The weights, in A/B/C order, are [0.14, 0.576, 0.284]. "
        "They sum to one, and a higher score never gets a smaller share."
    )
    assert words.mix == (
        "Mix: multiply values A = (2, 0), B = (0, 2), C = (\u22121, \u22121) by those weights, "
        "then add their contributions. The output is [-0.004, 0.868]. "
        "The values carry the content; the query and keys determine its weighting."
    )


def test_words_follow_the_numbers_when_q_moves():
    words = explain(trace_query([-2, 2], KEYS, VALUES))
    # Independently: softmax([6, -2, 2] / sqrt2) = [0.941, 0.0033, 0.0556]. In whole percents B
    # would read 0%, so the set is shown in tenths: 94.1 + 0.3 + 5.6 = 100.
    assert words.summary == (
        "q lines up most with A's key (score 4.243), so A takes 94.1% of the attention; "
        "C gets 5.6% and B gets 0.3%. Output o = [1.827, -0.049]."
    )


def test_tie_between_two_sources():
    # q = [1, 1] gives every key the dot 1: a three-way tie.
    all_tied = explain(trace_query([1, 1], KEYS, VALUES))
    # a third each cannot show as three equal whole percents that add up to 100: the extra point
    # goes to the first source, and the words say why the numbers differ
    assert all_tied.summary.startswith(
        "q lines up equally with every allowed key (score 0.707), so A, B and C share the "
        "attention equally (A 34%, B 33% and C 33%, rounded to add up to 100)."
    )
    two = explain(trace_query([1, 1], [[1, 0], [0, 1], [-1, -1]], VALUES))
    assert two.summary.startswith(
        "q lines up equally with A's and B's keys (score 0.707), so A and B take 47% of "
        "the attention each; C gets 6%."
    )


def test_blocked_sources_are_named():
    words = explain(trace_query([2, 1], KEYS, VALUES, allowed=[True, False, True]))
    # Independently: softmax([0, 1/sqrt2]) = [0.33, 0.67].
    assert "C takes 67% of the attention; A gets 33%." in words.summary
    assert "B is blocked by the mask and gets 0%." in words.summary
    assert "B is blocked: scored, but not shared." in words.match


def test_single_allowed_source():
    words = explain(trace_query([2, 1], KEYS, VALUES, allowed=[False, True, False]))
    assert words.summary == (
        "Only B is allowed, so B takes 100% of the attention and the output is its value. "
        "A and C are blocked by the mask and get 0%. Output o = [0, 2]."
    )
    assert "With one allowed source, that source takes all the weight." in words.share


def test_underflowed_weight_is_not_called_a_mask():
    words = explain(trace_query([1000.0], [[1.0], [0.0]], [[1.0], [2.0]], scale=1.0))
    assert "B gets 0% (B underflows to exactly 0 but is not masked)" in words.summary
    assert "B's weight underflows to exactly 0" in words.share
    assert "which is not a mask" in words.share
    assert "Multiply by the scale 1" in words.match
