"""Display rounding shared by the page, the words, the CLI and the generated program."""

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
     (0.001, "<1%"), (0.999, ">99%")],
)
def test_percent_never_claims_zero_or_all_when_it_is_not(w, text):
    assert fmt.percent(w) == text


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
