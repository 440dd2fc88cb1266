"""Compare a trace with a reference trace, number by number.

A number is *changed* when it differs from the reference's by more than
``TOLERANCE`` (1e-12, absolute); otherwise it is *same*. The default reference
is the same keys, values, labels, mask and scale with the worked example's
query (``lab.explorer.examples.WORKED``: q = [2, 1]), padded with zeros, or
cut, to d_k coordinates. The summary is a sentence with its claims
(``lab.said``): which of the scores, the shares and the output changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.engine.errors import FieldError
from attnlab.engine.single import QueryTrace, trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.said import said

TOLERANCE = 1e-12
REFERENCE_Q = WORKED.q  # the worked example's query, [2, 1]


def reference_query(d_k: int) -> tuple[float, ...]:
    """Return the worked example's q = [2, 1] fitted to ``d_k`` coordinates."""
    return (REFERENCE_Q + (0.0,) * d_k)[:d_k]


def reference_for(trace: QueryTrace) -> QueryTrace:
    """Return the default reference: ``trace``'s inputs with q = [2, 1]."""
    return trace_query(
        reference_query(trace.d_k),
        trace.keys,
        trace.values,
        labels=trace.labels,
        allowed=trace.allowed,
        scale=trace.scale,
    )


def _changed(a: float, b: float) -> bool:
    return abs(a - b) > TOLERANCE


def _changed_all(xs, ys) -> tuple[bool, ...]:
    return tuple(_changed(a, b) for a, b in zip(xs, ys))


@dataclass(frozen=True)
class Comparison:
    """Which numbers changed (True) or stayed the same (False) against ``reference``."""

    reference: QueryTrace
    dots: tuple[bool, ...]
    scores: tuple[bool, ...]
    m: bool
    z: bool
    weights: tuple[bool, ...]
    carries: tuple[tuple[bool, ...], ...]
    output: tuple[bool, ...]
    summary: dict  # said: "Scores changed; shares same; output same." with {"scores", "shares", "output"}

    def to_dict(self) -> dict:
        return {
            "reference": self.reference.to_dict(),
            "changed": {
                "dots": list(self.dots),
                "scores": list(self.scores),
                "m": self.m,
                "z": self.z,
                "weights": list(self.weights),
                "carries": [list(c) for c in self.carries],
                "output": list(self.output),
            },
            "summary": self.summary,
        }


def compare(trace: QueryTrace, reference: QueryTrace | None = None) -> Comparison:
    """Compare ``trace`` with ``reference`` (default: the same inputs with q = [2, 1])."""
    if reference is None:
        reference = reference_for(trace)
    if (reference.n_sources, reference.d_v) != (trace.n_sources, trace.d_v):
        raise FieldError(
            "reference",
            f"has {fmt.plural(reference.n_sources, 'source')} of width {reference.d_v}; "
            f"trace has {trace.n_sources} of width {trace.d_v}"
        )
    scores = _changed_all(trace.scores, reference.scores)
    weights = _changed_all(trace.weights, reference.weights)
    output = _changed_all(trace.output, reference.output)
    changed = {"scores": any(scores), "shares": any(weights), "output": any(output)}
    word = {True: "changed", False: "same"}
    text = (
        f"Scores {word[changed['scores']]}; shares {word[changed['shares']]}; "
        f"output {word[changed['output']]}."
    )
    return Comparison(
        reference=reference,
        dots=_changed_all(trace.dots, reference.dots),
        scores=scores,
        m=_changed(trace.m, reference.m),
        z=_changed(trace.z, reference.z),
        weights=weights,
        carries=tuple(_changed_all(c, r) for c, r in zip(trace.carries, reference.carries)),
        output=output,
        summary=said(text, **changed, tolerance=TOLERANCE),
    )
