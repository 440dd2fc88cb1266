"""The next-token view's words: what each sampling control removed, what follows, every token visible.

Each sentence is :func:`attnlab.lab.said.said` with its claims; tokens are shown
by :func:`attnlab.lab.realmodel.tokens.token_label` (``␣Paris``, ``⏎``), their
exact text kept beside. The page and ``attnlab logits`` say the same sentences.
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.tokens import token_label
from attnlab.lab.said import said

CONTROL_NAMES = {"temperature": "Temperature", "top_k": "Top-k", "top_p": "Top-p"}
SHOWN_FIRST = 5  # entries the page shows before "more"
COLUMNS = ["rank", "token", "logit", "p (model)", "p (after the controls)"]


def temperature_words(t: float) -> dict:
    """What the temperature does to the distribution, in one sentence."""
    if t == 0:
        return said("Temperature 0 is greedy: the likeliest token gets all the probability.", temperature=0.0,
                    greedy=True)  # fmt: skip
    if t == 1:
        return said(
            "Temperature 1 is the model's own distribution, unchanged.", temperature=1.0, greedy=False
        )
    effect = (
        "sharpens it: likely tokens gain, unlikely ones lose"
        if t < 1
        else "flattens it: unlikely tokens gain"
    )
    return said(
        f"Temperature {fmt.rounded(t)} divides every logit by {fmt.rounded(t)}, which {effect}.",
        temperature=t,
        greedy=False,
        sharpens=t < 1,
    )


def cut_words(control: str, value: float | int | None, *, count: int, mass: float, off: bool) -> dict:
    """What top-k or top-p removed: how many tokens, and how much of the tempered probability."""
    name = CONTROL_NAMES[control]
    if off:
        return said(f"{name} is off, so it removes nothing.", control=control, off=True, count=0, mass=0.0)
    return said(
        f"{name} {fmt.rounded(value)} removed {fmt.plural(count, 'token')} holding {fmt.percent(mass)} of "
        "the tempered probability, and the rest are renormalised to add up to 100%.",
        control=control,
        off=False,
        count=count,
        mass=mass,
    )


def entry_labels(token: str, logit: float, p: float, p_model: float, kept: bool, rank: int) -> dict:
    """An entry's rank, visible token, logit and two probabilities, as the table shows them."""
    return {
        "rank_display": f"{rank:,}",
        **{f"token_{k}": v for k, v in token_label(token).items()},
        "logit_display": fmt.rounded(logit, 2),
        "p_model_display": fmt.percent(p_model),
        "p_display": fmt.percent(p),
        "p_cell": fmt.percent(p) + ("" if kept else " (removed)"),  # the table's cell
    }


def view_words(*, context: str, vocab: int, kept: int, kept_mass: float, shown: int,
               actual: dict | None) -> dict:  # fmt: skip
    """The view's context line, the kept line and what the text really does next (one sentence each)."""
    out = {
        "context": said(
            f"After token {context} (of a {vocab:,}-token vocabulary), the likeliest next tokens are:",
            context=context,
            vocab=vocab,
        ),  # fmt: skip
        "kept": said(
            f"{fmt.plural(kept, 'token')} {'is' if kept == 1 else 'are'} kept, holding "
            f"{fmt.percent(kept_mass)} of the model's own probability.",
            kept=kept,
            mass=kept_mass,
        ),
        "columns": COLUMNS,
        "shown_first": SHOWN_FIRST,
        "caption": "The likeliest next token" if min(shown, SHOWN_FIRST) == 1
        else f"The {min(shown, SHOWN_FIRST)} likeliest next tokens",
        "more": f"{fmt.plural(max(shown - SHOWN_FIRST, 0), 'more token')}",
        "more_caption": "The next likeliest tokens",
    }
    if actual is None:
        out["actual"] = said("This is the last token, so what follows is the model's to write.", last=True)
    else:
        label = token_label(actual["token"])["label"]
        out["actual"] = said(
            f"In the text the next token is {label}, at rank {actual['rank']:,} "
            f"with p {fmt.percent(actual['p'])}.",
            token=actual["token"],
            rank=actual["rank"],
            p=actual["p"],
            last=False,
        )
    return out


def step_display(step: dict) -> dict:
    """A generation step as the page shows it: each token visible (``label``/``exact``), each p printed.

    ``step`` is the worker's numbers (:func:`attnlab.models.jobs.kinds.step_of`): the token drawn, its
    ``p``, and its ``top`` entries (``id``, ``token``, ``logit``, ``p``).
    """

    def token(t: dict, drawn: bool) -> dict:
        p = fmt.percent(t["p"])
        return {**t, **token_label(t["token"]), "p_display": p, "cell": p + (" (drawn)" if drawn else "")}

    top = [token(t, t["id"] == step["id"]) for t in step["top"]]
    return {**token(step, True), "drawn": f"drawn with p {fmt.percent(step['p'])}", "top": top}
