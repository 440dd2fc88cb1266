"""Display rounding shared by the page, the words, the CLI and the generated program."""

import math

import pytest

from attnlab.lab import numbers as fmt


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (0.14002924504337802, "0.14"),
        (0.575975345215362, "0.576"),
        (1.414213562373095, "1.414"),
        (2.0, "2"),
        (-0.00393691965450399, "-0.004"),
        (0.0, "0"),
        (-0.0, "0"),
        (-0.0001, "0"),
        (1e20, "1e+20"),
        (0.0005, "0.001"),
        (0.0015, "0.002"),
    ],
)
def test_rounded_three_decimals_trimmed(x, text):
    assert fmt.rounded(x) == text


@pytest.mark.parametrize(
    ("x", "text"),
    [(0.14002924504337802, "0.14002924504337802"), (2.0, "2"), (-0.0, "-0"), (1e-320, "1e-320")],
)
def test_precise_round_trips(x, text):
    assert fmt.precise(x) == text
    assert float(text) == x and str(float(text)) == str(x)


@pytest.mark.parametrize(
    ("w", "text"),
    [(0.14002924504337802, "14%"), (0.575975345215362, "58%"), (1.0, "100%"), (0.0, "0%"),
     (0.001, "0.10%"), (0.999, "99.90%"), (0.99, "99%"), (0.01, "1%"), (0.996, "99.60%"),
     (0.0099, "0.99%"), (0.00996, "1.0%"), (1e-9, "1.0e-7%"), (0.9999999, ">99.9999%")],
)  # fmt: skip
def test_percent_never_claims_zero_or_all_when_it_is_not(w, text):
    # a share alone: whole percents from 1% to 99%, two significant digits beyond (once "<1%", ">99%")
    assert fmt.percent(w) == text


def test_a_small_probability_keeps_two_significant_digits():
    # the ablation table's cells: a loss of 9.978 nats is p = 0.0046%, 5.293 nats is 0.50% (once "0%", "1%")
    assert fmt.percent(math.exp(-9.978)) == "0.0046%"
    assert fmt.percent(math.exp(-5.293)) == "0.50%"
    assert fmt.percent(0.9345, 1) == "93.5%" and fmt.percent(0.14, 2) == "14%"
    assert fmt.percent(-0.471, 1) == "-47.1%" and fmt.percent(2.071, 1) == "207.1%"  # an interval's ends


@pytest.mark.parametrize(
    ("shares", "texts"),
    [([1 / 3] * 3, ["34%", "33%", "33%"]),  # q = [0, 0]: once 33% three times, 99 in all
     ([0.006492683346735343, 0.9163728948072766, 0.0771344218459882], ["1%", "91%", "8%"]),  # q = [3, -0.5]
     ([0.7679179361387025, 0.04538836291379466, 0.18669370094750285], ["77%", "4%", "19%"]),  # row 2
     ([0.941, 0.0033, 0.0557], ["94.1%", "0.3%", "5.6%"]),  # B would read 0%: tenths
     ([0.0000029619993199981557, 0.9982774749160941, 0.001719563084586008], ["<0.01%", "99.83%", "0.17%"]),
     ([0.5, 0.5], ["50%", "50%"]), ([0.0, 1.0, 0.0], ["0%", "100%", "0%"]), ([1.0], ["100%"]),
     ([1e-9, 1 - 1e-9], ["<0.01%", ">99.99%"])],
)  # fmt: skip
def test_a_set_of_percents_adds_up_to_exactly_100(shares, texts):
    assert fmt.percents(shares) == texts


def test_ties_go_to_the_larger_share_then_the_earlier_index():
    # 20.5 / 20.5 / 59.0: two equal remainders, one unit left over: the earlier index takes it
    assert fmt.percents([0.205, 0.205, 0.59]) == ["21%", "20%", "59%"]
    # equal remainders (.5), unequal shares: the larger share takes the unit
    assert fmt.percents([0.125, 0.375, 0.5]) == ["12%", "38%", "50%"]
    assert fmt.share_units([1 / 3] * 3, 1) == ([334, 333, 333], 1)


def test_a_set_is_the_whole_set():
    with pytest.raises(ValueError, match="not 1"):
        fmt.percents([0.2, 0.3])
    with pytest.raises(ValueError, match="negative"):
        fmt.percents([1.5, -0.5])
    assert fmt.percents([]) == []


def test_the_rest_is_100_less_the_named_shares_as_shown():
    shares = [0.404, 0.303, 0.196, 0.097]
    assert fmt.percents(shares) == ["40%", "30%", "20%", "10%"]
    # the last two hold 29.3% together, but the words beside 40% and 30% say 100 - 70
    assert fmt.percent_together(shares, [2, 3]) == "30%" and fmt.percent_together(shares, []) == "0%"
    assert fmt.percent_together(shares, [0, 1, 2, 3]) == "100%"
    assert fmt.percent_together(shares, [0, 1]) == "70%"
    assert fmt.percent_together([1 - 1e-9, 1e-9], [1]) == "<0.01%"


def test_a_difference_is_that_of_the_shown_numbers():
    # 94.34 -> 94.46 "rises from 94.3% to 94.5%": a rise of 0.2 points, though 94.46 - 94.34 is 0.1
    assert fmt.percent(0.9434, 1) == "94.3%" and fmt.percent(0.9446, 1) == "94.5%"
    assert fmt.rounded(94.46 - 94.34, 1) == "0.1"
    assert fmt.difference("94.5%", "94.3%") == "0.2"
    assert fmt.difference("14.00%", "28.40%") == "-14.4" and fmt.difference("3", "3") == "0"
    assert fmt.difference("−1.5", "2") == "-3.5" and fmt.difference("0.0046%", "0.0055%") == "-0.0009"
    with pytest.raises(ValueError, match="bound"):
        fmt.difference("<0.01%", "1%")


def test_a_count_agrees_with_its_noun():
    assert fmt.plural(1, "token") == "1 token" and fmt.plural(2, "token") == "2 tokens"
    assert fmt.plural(0, "token") == "0 tokens" and fmt.plural(1024, "token") == "1,024 tokens"
    assert fmt.plural(1, "entry", "entries") == "1 entry" and fmt.plural(3, "entry", "entries") == "3 entries"


def test_vectors_and_points():
    assert fmt.vector([-0.00393691965450399, 0.8679552806894639]) == "[-0.004, 0.868]"
    assert fmt.precise_vector([0.28005849008675604, 0.0]) == "[0.28005849008675604, 0]"
    assert fmt.point([-1.0, 2.0]) == "(\u22121, 2)"


@pytest.mark.parametrize(
    ("x", "text"),
    [(0.5, "0.5"), (1 / 2**0.5, "0.707"), (1e6, "1000000"), (0.05, "0.05"), (0.0005, "0.0005"),
     (0.000123456, "0.000123"), (1e-9, "1e-09"), (0.0, "0")],
)
def test_significant_never_shows_a_small_factor_as_zero(x, text):
    assert fmt.significant(x) == text


@pytest.mark.parametrize(
    "x,digits,text",
    [(2.220446049250313e-16, 2, "2.2e-16"), (1e-15, 1, "1e-15"), (-3.5e-5, 2, "-3.5e-5"), (1e10, 2, "1e10"),
     (0.000125, 3, "1.25e-4"), (0.0, 2, "0")],
)  # fmt: skip
def test_scientific_keeps_the_significant_digits(x, digits, text):
    assert fmt.scientific(x, digits) == text


@pytest.mark.parametrize(
    ("x", "text"),
    [(-3.0, "−3"), (0.0, "0"), (4.5, "4.5"), (-7.5, "−7.5"), (99999.0, "99999"), (1e5, "1e5"),
     (-2e5, "−2e5"), (2.5e6, "2.5e6"), (5e149, "5e149"), (3 * 10.0**23, "3e23")],
)  # fmt: skip
def test_a_tick_has_a_true_minus_and_short_exponents(x, text):
    assert fmt.tick(x) == text
