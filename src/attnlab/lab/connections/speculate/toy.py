"""Speculative sampling's rule on a toy vocabulary, exactly: the output distribution is the target's p.

The target's distribution p and the draft's q over a few tokens are whole-number
weights the learner sets, normalised as fractions (``fractions.Fraction``: no
rounding anywhere). The draft proposes x with probability q(x); the target
accepts it with probability min(1, p(x)/q(x)); on a rejection it draws from the
residual max(0, p − q), renormalised (Leviathan et al., 2023; Chen et al., 2023).
The chance that token y comes out is then

    P(y) = q(y) · min(1, p(y)/q(y)) + (1 − β) · r(y),    β = Σ_x min(p(x), q(x)),

where the first term is min(p(y), q(y)) (a proposal of y kept) and the second
the residual's share after a rejection; r = max(0, p − q) / (1 − β), so the
second term is max(0, p(y) − q(y)), and P(y) = min(p, q) + max(0, p − q) = p(y).
:func:`rule` computes every term as a fraction and the output is compared with
p by ``==``; the float64 sums of the same terms are kept beside them.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

TOKENS = "ABCD"


@dataclass(frozen=True)
class Rule:
    """Every term of the rule, per token, as fractions (and the float64 output, summed in order)."""

    p: tuple[Fraction, ...]
    q: tuple[Fraction, ...]
    accept: tuple[Fraction | None, ...]  # min(1, p/q); None where q = 0 (never proposed)
    kept: tuple[Fraction, ...]  # q · min(1, p/q) = min(p, q): proposed and accepted
    beta: Fraction  # Σ kept: the chance a proposal is accepted
    residual: tuple[Fraction, ...] | None  # max(0, p − q) / (1 − β); None when nothing is rejected
    output: tuple[Fraction, ...]  # kept + (1 − β) · residual
    output_float: tuple[float, ...]  # the same sum in float64: q·a + (1 − β)·r term by term

    @property
    def exact(self) -> bool:
        return self.output == self.p


def normalised(weights: tuple[int, ...]) -> tuple[Fraction, ...]:
    total = sum(weights)
    return tuple(Fraction(w, total) for w in weights)


def rule(p_weights: tuple[int, ...], q_weights: tuple[int, ...]) -> Rule:
    """The rule for target weights ``p_weights`` and draft weights ``q_weights`` (each sum positive)."""
    p, q = normalised(p_weights), normalised(q_weights)
    # 1) accept a proposal of x with probability min(1, p(x)/q(x))
    accept = tuple(None if b == 0 else min(Fraction(1), a / b) for a, b in zip(p, q))
    kept = tuple(b * (a if a is not None else 0) for a, b in zip(accept, q))
    beta = sum(kept, Fraction(0))
    # 2) on a rejection (probability 1 − β), draw from max(0, p − q), renormalised
    excess = tuple(max(Fraction(0), a - b) for a, b in zip(p, q))
    residual = None if beta == 1 else tuple(e / (1 - beta) for e in excess)
    # 3) the output: kept, plus the rejections' share of the residual
    shares = residual if residual is not None else excess
    output = tuple(k + ((1 - beta) * r if residual is not None else 0) for k, r in zip(kept, shares))
    floats = []
    for a, b, r in zip(accept, q, residual or excess):
        x = float(b) * (float(a) if a is not None else 0.0)
        if residual is not None:
            x += (1.0 - float(beta)) * float(r)
        floats.append(x)
    return Rule(p, q, accept, kept, beta, residual, output, tuple(floats))


def fraction_text(x: Fraction) -> str:
    """A fraction as the page writes it: ``3/10``, ``0``, ``1``."""
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
