"""The circuits lab's sentences, each built beside its numbers with the claims it makes."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.circuits.copying import Copying
from attnlab.lab.heads import head_name
from attnlab.lab.said import said

FEEDS = 0.1  # a drop through the keys of at least 10 points: the head feeds the induction head
HOWS = {
    "mean": "set to its mean over the probe's positions",
    "zero": "set to 0",
}


def pct(x: float) -> str:
    """A share as the lab prints it: a percentage to one decimal (``93.4%``; never ``0%`` unless it is 0)."""
    return fmt.percent(x, 1)


def points(x: float) -> str:
    """A threshold in percentage points, to one decimal (``10``)."""
    return fmt.rounded(100 * x, 1)


def drop_points(clean: float, after: float) -> str:
    """How far a score fell from ``clean`` to ``after``, in points: the difference of the two shown
    percentages (``94.5%`` to ``94.3%`` is ``0.2``, whatever the unrounded drop rounds to); negative
    for a rise."""
    return fmt.difference(pct(clean), pct(after))


def listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def census_head(c: Copying) -> dict:
    layer, head = c.head
    score = float(c.scores("induction")[layer, head])
    return said(
        f"On this probe the census names layer {layer}, head {head} the strongest induction head: tokens "
        f"that repeat an earlier token put {pct(score)} of their attention in it, on average, on the tokens "
        "right after every earlier occurrence of them.",
        layer=layer, head=head, induction=score,
    )  # fmt: skip


def tested(c: Copying) -> dict:
    layer, head = c.head
    if not c.tested:
        return said(
            f"The induction head is in layer {layer}: no earlier head can write what its keys read, so "
            "no head is tested.",
            layer=layer, heads=[], previous=[],
        )  # fmt: skip
    shares = [c.previous(h) for h in c.tested]
    names = [f"{head_name(*h)} ({pct(s)})" for h, s in zip(c.tested, shares)]
    count = "The head" if len(names) == 1 else f"The {len(names)} heads"
    return said(
        f"{count} tested: the highest previous-token scores in layers 0 to {layer - 1}, {listed(names)}. "
        "A previous-token head puts each token's attention on the token just before it.",
        layer=layer, heads=[list(h) for h in c.tested], previous=shares,
    )  # fmt: skip


def method(c: Copying) -> dict:
    layer, head = c.head
    return said(
        f"K-composition, measured by ablation: each tested head's output before W_O is {HOWS[c.how]} at "
        f"every position, every block from its layer on runs again, and layer {layer}, head {head}'s "
        "keys are recomputed while its queries stay the run's own. The induction score of the pattern "
        f"those queries and keys make is compared with the clean one, {pct(c.clean)} (recomputed the "
        "same way, in float64, from the head's own queries and keys).",
        how=c.how, layer=layer, head=head, clean=c.clean,
    )  # fmt: skip


def result(c: Copying, i: int) -> dict:
    h, keys, every = c.tested[i], c.keys[i], c.every[i]
    drop = c.clean - keys
    direction = "falls" if keys < c.clean else "rises" if keys > c.clean else "stays"
    move = f"stays at {pct(c.clean)}" if direction == "stays" else (
        f"{direction} from {pct(c.clean)} to {pct(keys)}"
    )  # fmt: skip
    shown = drop_points(c.clean, keys)
    change = f"a drop of {fmt.plural(shown, 'point')}" if drop >= 0 else (
        f"a rise of {fmt.plural(shown.removeprefix('-'), 'point')}")  # fmt: skip
    return said(
        f"Without {head_name(*h)}, the induction score {move} through the keys alone ({pct(every)} with the "
        f"queries recomputed too): {change}.",
        head=list(h), clean=c.clean, keys=keys, all=every, drop=drop, direction=direction, drop_shown=shown,
    )  # fmt: skip


def verdict(c: Copying) -> dict:
    i = c.feeder
    if i is None:
        return said("With no head tested there is nothing to compare.", feeds=False, head=None, drop=None)
    h, drop = c.tested[i], c.drops[i]
    shown = drop_points(c.clean, c.keys[i])  # as the sentences above show it
    if drop >= FEEDS:
        return said(
            f"{head_name(*h)} feeds the induction head: switching it off takes the most through the keys, "
            f"{shown} of {pct(c.clean)}. It writes, at each token, what the token before it was; "
            f"the induction head's key at the token after an earlier occurrence reads that, and so its "
            "query finds the token that came next last time.",
            feeds=True, head=list(h), drop=drop, threshold=FEEDS,
        )  # fmt: skip
    if drop < 0:
        return said(
            "No head tested feeds the induction head's keys: switching any of them off raises its "
            f"induction score ({head_name(*h)}'s the least, by "
            f"{fmt.plural(shown.removeprefix('-'), 'point')}). Test more heads.",
            feeds=False, head=list(h), drop=drop, threshold=FEEDS,
        )  # fmt: skip
    return said(
        f"No head tested feeds the induction head's keys much: the largest drop, {head_name(*h)}'s, is "
        f"{fmt.plural(shown, 'point')} (under {points(FEEDS)}). Test more heads.",
        feeds=False, head=list(h), drop=drop, threshold=FEEDS,
    )  # fmt: skip


def sentences(c: Copying) -> list[dict]:
    out = [census_head(c), tested(c)]
    if c.tested:
        out.append(method(c))
        out += [result(c, i) for i in range(len(c.tested))]
    out.append(verdict(c))
    return out
