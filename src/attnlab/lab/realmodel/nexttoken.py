"""The next-token view's words: what each sampling control removed, what follows, every token visible.

Each sentence is :func:`attnlab.lab.said.said` with its claims; tokens are shown
by :func:`attnlab.lab.realmodel.tokens.token_label` (``␣Paris``, ``⏎``), their
exact text kept beside. The page and ``attnlab logits`` say the same sentences.

The view: next-token probabilities from real logits, with temperature, top-k and top-p, and what each removed.

``next_token(logits_row, sampling, decode=..., top=N)`` ranks the vocabulary
by logit (largest first; ties: the lower id), and gives the top ``N`` with
``p_model`` (softmax of the raw logits), ``p`` (what sampling draws from, after
:func:`attnlab.models.sampling.cut`) and whether the token survived the cuts.
``removed`` says, control by control, how many tokens it removed and how much
of the tempered distribution they held. Greedy (temperature 0) is the
arg-max with all the probability. ``trace_next(trace, position, ...)`` is the view of a kept
trace: the row of its logits after token ``position``, the token that really followed, and the
controls as the page sends them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.query import row_labels
from attnlab.lab.realmodel.tokens import token_label
from attnlab.lab.said import said
from attnlab.models.sampling import Sampling, cut

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


MAX_TOKENS_SHOWN = 100


def _ranked(logits: np.ndarray, n: int) -> np.ndarray:
    """The ids of the ``n`` largest logits, largest first, ties to the lower id."""
    n = min(n, logits.size)
    part = np.argpartition(-logits, n - 1)[:n] if n < logits.size else np.arange(logits.size)
    return part[np.lexsort((part, -logits[part]))]


def next_token(
    logits: np.ndarray,
    sampling: Sampling,
    *,
    decode: Callable[[int], str],
    top: int = 10,
    actual: int | None = None,
    context: str = "",
) -> dict:
    """JSON-ready distribution for one row of ``logits`` (``(V,)``), with its words.

    ``actual``: the id that really followed in the text (its rank and shares are added);
    ``context``: the label of the token the distribution follows (for the words).
    """
    row = np.asarray(logits, dtype=np.float64)
    c = cut(row, sampling)
    ids = _ranked(row, top)
    entries = [
        {
            "rank": r + 1,
            "id": int(i),
            "token": decode(int(i)),
            "logit": float(row[i]),
            "p_model": float(c.p_model[i]),
            "p": float(c.p[i]),
            "kept": bool(c.p[i] > 0.0),
            **entry_labels(
                decode(int(i)), float(row[i]), float(c.p[i]), float(c.p_model[i]), bool(c.p[i] > 0.0), r + 1
            ),
        }
        for r, i in enumerate(ids)
    ]
    removed = [
        {"control": "temperature", "count": 0, "mass": 0.0, "words": temperature_words(sampling.temperature)}
    ]
    if not sampling.greedy:
        finite = np.isfinite(row)
        for control, before, after, value in (
            ("top_k", finite, c.after_top_k, sampling.top_k),
            ("top_p", c.after_top_k, c.after_top_p, sampling.top_p),
        ):
            gone = before & ~after
            count, mass = int(gone.sum()), float(c.p_tempered[gone].sum())
            off = (control == "top_k" and not value) or (control == "top_p" and value >= 1.0)
            words = cut_words(control, value, count=count, mass=mass, off=off)
            removed.append({"control": control, "count": count, "mass": mass, "words": words})
    kept = int((c.p > 0).sum())
    out = {
        "vocab": int(row.size),
        "entries": entries,
        "kept": kept,
        "kept_mass_model": float(c.p_model[c.p > 0].sum()),
        "removed": removed,
        "actual": None,
    }
    if actual is not None:
        rank = int((row > row[actual]).sum() + (row[:actual] == row[actual]).sum()) + 1
        out["actual"] = {
            "id": int(actual),
            "token": decode(int(actual)),
            "rank": rank,
            "p_model": float(c.p_model[actual]),
            "p": float(c.p[actual]),
            **entry_labels(
                decode(int(actual)), float(row[actual]), float(c.p[actual]), float(c.p_model[actual]),
                True, rank,
            ),
        }
    out["words"] = view_words(
        context=context, vocab=out["vocab"], kept=kept, kept_mass=out["kept_mass_model"], shown=len(entries),
        actual=out["actual"],
    )  # fmt: skip
    return out


def trace_next(trace, position: int, *, temperature: float, top_k: int, top_p: float, top: int) -> dict:
    """The next-token view after token ``position`` of ``trace`` (a decoder's, with logits).

    ``top_k`` 0 is off. ``FieldError`` at ``position`` past the text, or at a bad control.
    """
    from attnlab.models import registry

    trace.check_token("position", position)
    sampling = Sampling(temperature=temperature, top_k=top_k or None, top_p=top_p)
    n = len(trace.tokens)
    actual = int(trace.ids[position + 1]) if position + 1 < n else None
    context = row_labels(trace)[position]
    decode = registry.counter(trace.model).text
    row = trace.logits[position]
    view = next_token(row, sampling, decode=decode, top=top, actual=actual, context=context)
    controls = {"temperature": temperature, "top_k": top_k, "top_p": top_p}
    return {"position": position, "context_label": context, **controls, **view}
