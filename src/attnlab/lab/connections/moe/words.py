"""The MoE lab's sentences, each built beside its numbers with the claims it makes."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.moe.walk import MoEWalk
from attnlab.lab.said import said


def expert(e: int) -> str:
    return f"E{e + 1}"


def _count(n: int, noun: str) -> str:
    return fmt.plural(n, noun)


def _listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def router(w: MoEWalk) -> dict:
    r, t = w.routing, w.token
    top = [int(e) for e in r.top[t]]
    best = top[0]
    # as the router's bars show them (one set); the top k together: the sum of their shown shares
    shown, kept = fmt.percents(r.probs[t])[best], fmt.percent_together(r.probs[t], top)
    return said(
        f"Token {t}'s router is a softmax over the {w.experts} experts: {expert(best)} gets the largest "
        f"probability, {shown}. Its top {w.k} ({_listing([expert(e) for e in top])}) "
        f"{'holds' if w.k == 1 else 'hold'} {kept} of the probability.",
        token=t,
        best=best,
        best_probability=float(r.probs[t][best]),
        top=top,
        kept=float(r.kept[t]),
    )


def gates(w: MoEWalk) -> dict:
    r, t = w.routing, w.token
    top = [int(e) for e in r.top[t]]
    texts = fmt.percents(r.gates[t])  # one set, as the gates' bars show it
    shown = _listing([f"{expert(e)} {texts[e]}" for e in top])
    dropped = w.experts - w.k
    tail = (
        f"the other {dropped} expert{'s get' if dropped != 1 else ' gets'} exactly 0 and "
        f"do{'es' if dropped == 1 else ''}"
        " no work for this token."
        if dropped
        else "no expert is left out: with k = E top-k changes nothing."
    )
    return said(
        f"Divided by what the top {w.k} hold, the gates are {shown}, adding up to 1 again; {tail}",
        token=t,
        gates={expert(e): float(r.gates[t][e]) for e in top},
        dropped=dropped,
    )


def dense(w: MoEWalk) -> dict:
    weights = w.attention.weights[w.token]
    smallest = float(weights.min())
    smallest_shown = fmt.percents(weights)[int(weights.argmin())]  # as the attention bars show it
    positive = int((weights > 0).sum())
    return said(
        f"Attention is dense: token {w.token}'s weights over the {_count(w.tokens, 'position')} are "
        + ("all positive" if positive == w.tokens else f"positive for {positive} of them")
        + f" (the smallest {smallest_shown}), and every position's value is mixed in. A router keeps "
        f"{w.k} of {w.experts} experts and drops the rest.",
        token=w.token,
        positive=positive,
        positions=w.tokens,
        smallest=smallest,
    )


def load(w: MoEWalk) -> dict:
    counts = [int(c) for c in w.routing.load]
    busiest = max(range(w.experts), key=lambda e: counts[e])
    idle = sum(1 for c in counts if c == 0)
    fair = w.tokens * w.k / w.experts
    return said(
        f"Over the batch of {_count(w.tokens, 'token')}, {expert(busiest)} is the busiest expert with "
        f"{counts[busiest]} of the {_count(w.tokens * w.k, 'token slot')} and {idle} "
        f"expert{'s get' if idle != 1 else ' gets'} none; a "
        f"balanced router would give each {fmt.rounded(fair)}.",
        load=counts,
        busiest=busiest,
        idle=idle,
        balanced=fair,
    )


def sentences(w: MoEWalk) -> list[dict]:
    return [router(w), gates(w), dense(w), load(w)]
