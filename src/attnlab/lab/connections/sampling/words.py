"""The sampling lab's sentences, each built beside its numbers with the claims it makes."""

from __future__ import annotations

import math

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.live import Measured, status_words
from attnlab.lab.connections.sampling.walk import SWEEP, SamplingWalk
from attnlab.lab.realmodel.tokens import token_label
from attnlab.lab.said import said

DOING = "SmolLM2 reads your text for its next-token logits"


def shown(text: str) -> str:
    """A candidate as the page writes it: its visible label in quotes (“␣Paris”), or a rank (#1)."""
    return text if text.startswith("#") else f"“{token_label(text)['label']}”"


def temperature_text(t: float) -> str:
    return fmt.significant(t)


def source(w: SamplingWalk, text: str, seed: int) -> dict:
    if w.source == "random":
        return said(
            f"The logits are {w.k} seeded random numbers (seed {seed}), largest first: "
            f"{fmt.vector(w.logits[: min(w.k, 5)].tolist(), 2)[:-1]}{', …]' if w.k > 5 else ']'}.",
            source="random",
            k=w.k,
            seed=seed,
        )
    assert w.context is not None and w.coverage is not None
    n = len(w.context)
    return said(
        f"SmolLM2 read your text ({fmt.plural(n, 'token')}); its {w.k} largest next-token logits, "
        f"of {w.vocab:,}, start with {shown(w.labels[0])} at {fmt.rounded(float(w.logits[0]), 2)}. At "
        f"temperature 1 these {w.k} hold {fmt.percent(w.coverage)} of its whole distribution.",
        source="smollm2",
        k=w.k,
        tokens=n,
        vocab=w.vocab,
        top=w.labels[0],
        top_logit=float(w.logits[0]),
        coverage=w.coverage,
    )


def at_temperature(w: SamplingWalk) -> dict:
    p = w.p()
    top, last = int(p.argmax()), int(p.argmin())
    texts = fmt.percents(p)  # as the candidates' bars show them
    h = w.spread()
    return said(
        f"At temperature T = {temperature_text(w.temperature)}, softmax(logit ÷ T) gives "
        f"{shown(w.labels[top])} {texts[top]} and {shown(w.labels[last])} {texts[last]}; "
        f"the entropy is {fmt.rounded(h, 2)} nats, of at most ln {w.k} = {fmt.rounded(math.log(w.k), 2)} "
        "(every candidate alike).",
        temperature=w.temperature,
        top=w.labels[top],
        top_share=float(p[top]),
        last=w.labels[last],
        last_share=float(p[last]),
        entropy=h,
        most=math.log(w.k),
    )


def attention(w: SamplingWalk) -> dict:
    t = w.temperature
    return said(
        f"Attention divides each q·k by √d_k before its softmax: a temperature of √d_k on the dot products. "
        f"T = {temperature_text(t)} is √d_k for d_k = {fmt.significant(w.d_k)}; a head of 64 dimensions "
        "weighs its keys at temperature √64 = 8.",
        temperature=t,
        d_k=w.d_k,
        head_temperature=8.0,
    )


def limits(w: SamplingWalk) -> dict:
    cold, hot = SWEEP[0], SWEEP[-1]
    top = w.argmax
    winners = [w.labels[i] for i in range(w.k) if top[i] > 0]
    gets = (
        f"{shown(winners[0])} gets 100%"
        if len(winners) == 1
        else f"the {len(winners)} tied largest split it evenly"
    )
    near, far = w.from_argmax(cold), w.from_uniform(hot)
    return said(
        f"As T → 0 the shares tend to the argmax: {gets}; at T = {temperature_text(cold)} no share is more "
        f"than {fmt.scientific(near)} from it. As T → ∞ they tend to uniform, {fmt.percent(w.uniform)} each "
        f"(1/{w.k}); at T = {temperature_text(hot)} none is more than {fmt.scientific(far)} from it.",
        argmax=winners,
        cold=cold,
        from_argmax=near,
        hot=hot,
        uniform=w.uniform,
        from_uniform=far,
    )


def same_as_sampling(w: SamplingWalk) -> dict:
    return said(
        f"Sampling with top-k = {w.k} at temperature {temperature_text(w.temperature)} draws from exactly "
        f"these shares: dividing by T keeps the logits' order, so the same {w.k} candidates survive the cut.",
        k=w.k,
        temperature=w.temperature,
    )


def sentences(w: SamplingWalk | None, values: dict, m: Measured | None) -> list[dict]:
    if w is None:
        return [status_words(m, DOING)]
    out = [source(w, values["text"], values["seed"]), at_temperature(w), attention(w), limits(w)]
    if w.source == "smollm2":
        out.append(same_as_sampling(w))
    return out
