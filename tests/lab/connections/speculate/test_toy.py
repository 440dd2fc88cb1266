"""The sampling rule on a toy vocabulary (lab/connections/speculate/toy.py): the output is p, exactly."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab.connections.speculate.toy import fraction_text, rule

weights = st.tuples(*[st.integers(1, 9)] * 4)


@settings(max_examples=300, deadline=None)
@given(weights, weights)
def test_the_output_distribution_is_p_exactly(p_w, q_w):
    t = rule(p_w, q_w)
    assert t.output == t.p and t.exact
    assert t.beta == sum(min(a, b) for a, b in zip(t.p, t.q))
    assert all(k == min(a, b) for k, a, b in zip(t.kept, t.p, t.q))
    if t.residual is not None:
        assert sum(t.residual) == 1 and all(r >= 0 for r in t.residual)
        assert all((r > 0) == (a > b) for r, a, b in zip(t.residual, t.p, t.q))
    assert all(abs(f - float(a)) <= 4e-16 for f, a in zip(t.output_float, t.p))  # float64: to rounding


def test_a_worked_case():
    t = rule((5, 2, 2, 1), (2, 4, 1, 3))
    assert [fraction_text(x) for x in t.accept] == ["1", "1/2", "1", "1/3"]
    assert t.beta == Fraction(3, 5)
    assert [fraction_text(x) for x in t.residual] == ["3/4", "0", "1/4", "0"]
    assert [fraction_text(x) for x in t.output] == ["1/2", "1/5", "1/5", "1/10"]


def test_q_equal_to_p_never_rejects():
    t = rule((2, 4, 6, 8), (1, 2, 3, 4))
    assert t.beta == 1 and t.residual is None and t.output == t.p
