"""The serving lab's sentences, each built beside its numbers with the claims it makes."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.live import Measured, status_words
from attnlab.lab.connections.serving.walk import LETTERS, Serve
from attnlab.lab.said import said

DOING = "{called} serves your prompts twice, one at a time and in a continuous batch"


def _s(n: int, word: str) -> str:
    return fmt.plural(n, word)


def seconds(x: float) -> str:
    return f"{fmt.rounded(x, 2)} s"


def same_tokens(s: Serve) -> dict:
    n = s.requests
    if all(s.same):
        text = (
            f"Each of the {_s(n, 'request')} got the same tokens both ways: a request's row in a batched "
            "step gives, bit for bit, the numbers of its own one-request step."
        )
    else:
        differ = ", ".join(LETTERS[r] for r, ok in enumerate(s.same) if not ok)
        text = f"The tokens differ between the two ways for request {differ}."
    return said(text, same=s.same, requests=n)


def throughput(s: Serve) -> dict:
    one, bat = s.throughput("one"), s.throughput("batched")
    more = s.ratio >= 1
    times = fmt.rounded(s.ratio if more else 1 / s.ratio, 2)
    how = f"{times} times the throughput" if more else f"{times} times less"
    return said(
        f"Measured in the same run: one request at a time made {_s(s.made('one'), 'token')} in "
        f"{seconds(s.seconds('one'))} ({fmt.rounded(one, 1)} tokens a second); continuous batching made "
        f"{_s(s.made('batched'), 'token')} in {seconds(s.seconds('batched'))} ({fmt.rounded(bat, 1)} "
        f"tokens a second): {how}.",
        tokens={"one": s.made("one"), "batched": s.made("batched")},
        seconds={"one": s.seconds("one"), "batched": s.seconds("batched")},
        throughput={"one": one, "batched": bat},
        ratio=s.ratio,
    )


def first_token(s: Serve) -> dict:
    last = s.longest_wait("one")
    return said(
        f"Time to first token (every request arrives at once): one at a time, request {LETTERS[last]} waited "
        f"{seconds(s.first('one')[last])}, behind every request before it; batched, the longest wait was "
        f"{seconds(max(s.first('batched')))}. On average {seconds(s.mean_first('one'))} against "
        f"{seconds(s.mean_first('batched'))}.",
        longest={"request": LETTERS[last], "one": s.first("one")[last], "batched": max(s.first("batched"))},
        mean={"one": s.mean_first("one"), "batched": s.mean_first("batched")},
    )


def steps(s: Serve) -> dict:
    alone = s.step_seconds("one")
    wide = s.widest
    together = s.step_seconds("batched", wide)
    n_one, n_bat = len(s.decode_steps("one")), len(s.decode_steps("batched"))
    claims = {"steps": {"one": n_one, "batched": n_bat}, "widest": wide, "alone": alone, "together": together}
    if alone is None or together is None or wide < 2:
        return said(
            f"One at a time took {_s(n_one, 'decoding step')}, continuous batching {n_bat}: with a batch of "
            f"{s.batch} no step decoded two requests together.",
            **claims,
        )
    return said(
        f"One at a time took {_s(n_one, 'decoding step')} of one request each; continuous batching took "
        f"{n_bat}, up to {wide} requests in one. A step of {wide} requests took {seconds(together)} on "
        f"average against {seconds(alone)} for one alone: every weight is read once for all the rows of a "
        "step.",
        **claims,
    )


def replayed(s: Serve) -> dict:
    same = s.schedule_matches("one") and s.schedule_matches("batched")
    text = (
        "The scheduling rule alone, given how many tokens each request made, gives both runs' steps again "
        "(the Python below does it without a model)."
        if same
        else "The scheduling rule does not give the recorded steps."
    )
    return said(text, one=s.schedule_matches("one"), batched=s.schedule_matches("batched"))


def sentences(s: Serve | None, m: Measured | None, called: str = "SmolLM2") -> list[dict]:
    """``called``: how the sentences name the model (``lab.connections.models.called``)."""
    if s is None:
        return [status_words(m, DOING.format(called=called))]
    return [same_tokens(s), throughput(s), first_token(s), steps(s), replayed(s)]
