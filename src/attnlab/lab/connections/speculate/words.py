"""The speculative-decoding lab's sentences, each built beside its numbers with the claims it makes."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.live import Measured, status_words
from attnlab.lab.connections.speculate.toy import TOKENS, Rule, fraction_text
from attnlab.lab.connections.speculate.walk import Run
from attnlab.lab.said import said

DOING = "{called} decodes your prompt twice, plainly and speculatively"


def _s(n: int, word: str) -> str:
    """``n`` and ``word``, plural unless n is 1: "1 token", "8 forward passes"."""
    return fmt.plural(n, word, word + "es" if word.endswith("s") else None)


def seconds(x: float) -> str:
    return f"{fmt.rounded(x, 2)} s"


def same_tokens(r: Run) -> dict:
    n = len(r.spec["ids"])
    if r.identical:
        text = (
            f"Speculative decoding gave the same {_s(n, 'token')} as plain greedy decoding, token for token: "
            "a draft is kept only when it is the target's own argmax after the same tokens."
        )
    else:
        text = (
            f"Speculative decoding's tokens differ from plain greedy decoding's at position "
            f"{r.first_difference}: the verified rows did not give the one-token passes' numbers."
        )
    return said(text, identical=r.identical, tokens=n, first_difference=r.first_difference)


def acceptance(r: Run) -> dict:
    steps = len(r.verified)
    claims = {"proposed": r.proposed, "accepted": r.accepted, "rate": r.rate, "passes": steps,
              "no_draft": r.no_draft, "ngram": r.ngram}  # fmt: skip
    if not steps:
        return said("The first token ended the text at once: no pass was left to draft for.", **claims)
    if not r.proposed:
        return said(
            f"The last {_s(r.ngram, 'token')} never occurred earlier in the context with a token after them, "
            f"so the draft proposed nothing: each of the {_s(steps, 'pass')} verified the target's own token "
            "alone, as plain decoding does.",
            **claims,
        )
    found = steps - r.no_draft
    none = (
        f"; {r.no_draft} found no earlier match and verified the target's token alone" if r.no_draft else ""
    )
    return said(
        f"Looking up the last {_s(r.ngram, 'token')} earlier in the context, the draft proposed "
        f"{_s(r.proposed, 'token')} in {_s(found, 'pass')} and the target accepted {r.accepted} of them "
        f"({fmt.percent(r.rate)}){none}.",
        **claims,
    )


def speed(r: Run) -> dict:
    n = len(r.spec["ids"])
    faster = r.speedup >= 1
    how = (
        f"{fmt.rounded(r.speedup, 2)} times as fast"
        if faster
        else f"{fmt.rounded(1 / r.speedup, 2)} times as long: verifying drafts that are rejected costs more "
        "than it saves"
    )
    return said(
        f"The {_s(n, 'token')} took {_s(r.passes_spec, 'forward pass')} instead of {r.passes_plain} (the "
        f"prompt pass included). Measured in the same run: {seconds(r.seconds_spec)} against "
        f"{seconds(r.seconds_plain)} ({fmt.rounded(r.rate_of('speculative'), 1)} against "
        f"{fmt.rounded(r.rate_of('plain'), 1)} tokens a second), {how}.",
        tokens=n,
        passes=r.passes_spec,
        plain_passes=r.passes_plain,
        seconds=r.seconds_spec,
        plain_seconds=r.seconds_plain,
        speedup=r.speedup,
        faster=faster,
    )


def replayed(r: Run) -> dict:
    same = r.replay_matches and r.argmax_rule
    text = (
        "The rule alone, applied to plain decoding's tokens, gives every step again: the same drafts, the "
        "same tokens accepted and rejected (the Python below does it without a model)."
        if same
        else "The rule applied to plain decoding's tokens does not give the recorded steps."
    )
    return said(text, replay_matches=r.replay_matches, argmax_rule=r.argmax_rule)


def toy_rule(t: Rule) -> dict:
    p = ", ".join(f"{c} {fraction_text(x)}" for c, x in zip(TOKENS, t.output))
    if t.residual is None:
        middle = (
            "q equals p, so every draft is accepted (β = 1) and the residual is never drawn from"
        )
    else:
        middle = (
            f"on a rejection (chance {fraction_text(1 - t.beta)}) the residual max(0, p − q), renormalised, "
            "gives the rest"
        )
    out = f"the output is exactly p: {p}" if t.exact else f"the output, {p}, is not p"
    return said(
        f"Toy rule: accepting a draft x with probability min(1, p(x)/q(x)) keeps min(p, q) of each token, "
        f"{fraction_text(t.beta)} in all; {middle}. So {out} (fractions, no rounding).",
        output=[fraction_text(x) for x in t.output],
        p=[fraction_text(x) for x in t.p],
        beta=fraction_text(t.beta),
        exact=t.exact,
        rejected=t.residual is not None,
    )


def sentences(r: Run | None, m: Measured | None, t: Rule, called: str = "SmolLM2") -> list[dict]:
    """``called``: how the sentences name the model (``lab.connections.models.called``)."""
    if r is None:
        return [status_words(m, DOING.format(called=called)), toy_rule(t)]
    return [same_tokens(r), acceptance(r), speed(r), replayed(r), toy_rule(t)]
