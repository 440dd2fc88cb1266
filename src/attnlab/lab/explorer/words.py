"""The page's sentences, generated from a trace's numbers, each with its claims.

``explain(trace)`` returns the one-line summary and the three "Read the same
calculation" paragraphs (Match, Share, Mix). Every number in the words is the
trace's number through ``attnlab.lab.numbers``; nothing is recomputed here.

Each paragraph comes with the facts it asserts as data (``claims``), e.g. the
summary's ``{"top": ["B"], "shares": {"B": 0.576, ...}, "order": [...]}``;
``tests/lab/explorer/test_claims.py`` checks every claim against the trace over
own examples of 1 to 8 sources, any scale, masks and ties.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.display import scale_claims, share_percents


@dataclass(frozen=True)
class Explanation:
    """The summary sentence and the Match / Share / Mix paragraphs."""

    summary: str
    match: str
    share: str
    mix: str
    claims: dict = field(default_factory=dict)  # {"summary": {...}, "match": ..., "share": ..., "mix": ...}

    def to_dict(self) -> dict:
        return {
            "summary": self.summary, "match": self.match, "share": self.share, "mix": self.mix,
            "claims": self.claims,
        }


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    if len(items) == 2:
        return f"{items[0]} and {items[1]}"
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def _possessive_keys(labels: list[str]) -> str:
    if len(labels) == 1:
        return f"{labels[0]}'s key"
    return _join([f"{label}'s" for label in labels]) + " keys"


def _tied(t: QueryTrace, tied: list[int], pct: list[str]) -> str | None:
    """Equal shares as shown, when rounding to 100 split them: ``"A 34%, B 33% and C 33%, rounded to
    add up to 100"``; None when they all show the same text."""
    if len({pct[i] for i in tied}) == 1:
        return None
    return _join([f"{t.labels[i]} {pct[i]}" for i in tied]) + ", rounded to add up to 100"


def summary_words(t: QueryTrace) -> str:
    return summary_said(t)[0]


def summary_said(t: QueryTrace) -> tuple[str, dict]:
    """The summary and its claims: who is allowed and blocked, the top score, each share.

    Shares are written as the explorer shows them (:func:`share_percents`, one set adding up to
    100); ``claims["shown"]`` maps each allowed label to its text.
    """
    allowed = list(t.allowed_indices)
    pct = share_percents(t)
    output = f"Output o = {fmt.vector(t.output)}."
    blocked = [t.labels[i] for i in t.blocked]
    blocked_note = ""
    if blocked:
        verb, get = ("is", "gets") if len(blocked) == 1 else ("are", "get")
        blocked_note = f" {_join(blocked)} {verb} blocked by the mask and {get} 0%."
    claims = {
        "allowed": [t.labels[i] for i in allowed],
        "blocked": blocked,
        "output": list(t.output),
        "shown": {t.labels[i]: pct[i] for i in allowed},
    }
    if len(allowed) == 1:
        (i,) = allowed
        claims.update(only=t.labels[i], shares={t.labels[i]: t.weights[i]}, output_is_value=t.labels[i])
        return (
            f"Only {t.labels[i]} is allowed, so {t.labels[i]} takes 100% of the attention "
            f"and the output is its value.{blocked_note} {output}"
        ), claims
    # Sort by score, highest first; ties keep source order.
    order = sorted(allowed, key=lambda i: -t.scores[i])
    top_score = t.scores[order[0]]
    top = [i for i in order if t.scores[i] == top_score]
    rest = [i for i in order if t.scores[i] != top_score]
    claims.update(
        top=[t.labels[i] for i in top],
        top_score=top_score,
        order=[t.labels[i] for i in rest],
        shares={t.labels[i]: t.weights[i] for i in order},
        underflowed=[t.labels[i] for i in t.underflowed],
        equal=len(top) == len(allowed),
    )
    if len(top) == len(allowed):
        return (
            f"q lines up equally with every allowed key (score {fmt.rounded(top_score)}), "
            f"so {_join([t.labels[i] for i in top])} share the attention equally "
            f"({_tied(t, top, pct) or pct[top[0]] + ' each'}).{blocked_note} {output}"
        ), claims
    if len(top) == 1:
        (i,) = top
        head = (
            f"q lines up most with {_possessive_keys([t.labels[i]])} "
            f"(score {fmt.rounded(top_score)}), so {t.labels[i]} takes "
            f"{pct[i]} of the attention"
        )
    else:
        head = (
            f"q lines up equally with {_possessive_keys([t.labels[i] for i in top])} "
            f"(score {fmt.rounded(top_score)}), so {_join([t.labels[i] for i in top])} take "
            + (f"{pct[top[0]]} of the attention each" if _tied(t, top, pct) is None
               else f"equal shares of the attention ({_tied(t, top, pct)})")
        )  # fmt: skip
    tail = _join([f"{t.labels[i]} gets {pct[i]}" for i in rest])
    under = [t.labels[i] for i in t.underflowed]
    under_note = ""
    if under:
        verb, be = ("underflows", "is") if len(under) == 1 else ("underflow", "are")
        under_note = f" ({_join(under)} {verb} to exactly 0 but {be} not masked)"
    return f"{head}; {tail}{under_note}.{blocked_note} {output}", claims


def match_words(t: QueryTrace) -> str:
    return match_said(t)[0]


def match_said(t: QueryTrace) -> tuple[str, dict]:
    """The Match paragraph and its claims: the dots, how they were scaled, the scores."""
    keys = ", ".join(f"{label} = {fmt.point(k)}" for label, k in zip(t.labels, t.keys))
    if t.scale is None:
        root = "√" + fmt.rounded(t.d_k)
        divide = f"Divide by {root}, the square root of the key width,"
    else:
        divide = f"Multiply by the scale {fmt.significant(t.scale)}"
    text = (
        f"Match: query {fmt.point(t.q)} meets keys {keys}. "
        f"Their dot products are {fmt.vector(t.dots)}. "
        f"{divide} to get {fmt.vector(t.scores)}."
    )
    if t.blocked:
        blocked = _join([t.labels[i] for i in t.blocked])
        text += f" {blocked} {'is' if len(t.blocked) == 1 else 'are'} blocked: scored, but not shared."
    claims = {
        "dots": list(t.dots),
        "scale": scale_claims(t),
        "scores": list(t.scores),
        "blocked": [t.labels[i] for i in t.blocked],
    }
    return text, claims


def share_words(t: QueryTrace) -> str:
    return share_said(t)[0]


def share_said(t: QueryTrace) -> tuple[str, dict]:
    """The Share paragraph and its claims: the weights, their sum, the order they keep."""
    order = "/".join(t.labels)
    text = (
        "Share: softmax subtracts the largest score, exponentiates and divides by the sum. "
        f"The weights, in {order} order, are {fmt.vector(t.weights)}. "
    )
    if len(t.allowed_indices) == 1:
        text += "With one allowed source, that source takes all the weight."
    else:
        text += "They sum to one, and a higher score never gets a smaller share."
    if t.underflowed:
        under = _join([t.labels[i] for i in t.underflowed])
        text += (
            f" {under}'s weight underflows to exactly 0: too small for a float, "
            "which is not a mask."
        )
    claims = {
        "weights": list(t.weights),
        "sum": 1.0,
        "monotone": len(t.allowed_indices) > 1,
        "single": t.labels[t.allowed_indices[0]] if len(t.allowed_indices) == 1 else None,
        "underflowed": [t.labels[i] for i in t.underflowed],
    }
    return text, claims


def mix_said(t: QueryTrace) -> tuple[str, dict]:
    """The Mix paragraph and its claims: the output, and that the weights ignore the values."""
    values = ", ".join(f"{label} = {fmt.point(v)}" for label, v in zip(t.labels, t.values))
    text = (
        f"Mix: multiply values {values} by those weights, then add their contributions. "
        f"The output is {fmt.vector(t.output)}. "
        "The values carry the content; the query and keys determine its weighting."
    )
    return text, {"output": list(t.output), "weights_ignore_values": True}


def explain(trace: QueryTrace) -> Explanation:
    """Return the page's words for ``trace``: summary, Match, Share and Mix, with their claims."""
    said = {
        "summary": summary_said(trace),
        "match": match_said(trace),
        "share": share_said(trace),
        "mix": mix_said(trace),
    }
    return Explanation(
        **{name: text for name, (text, _) in said.items()},
        claims={name: claims for name, (_, claims) in said.items()},
    )

