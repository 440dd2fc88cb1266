"""Next-token probabilities from real logits, with temperature, top-k and top-p, and what each removed.

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

from attnlab.lab.realmodel.nexttoken import cut_words, entry_labels, temperature_words, view_words
from attnlab.models.sampling import Sampling, cut

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
    context = trace.labels()[position]
    decode = registry.counter(trace.model).text
    row = trace.logits[position]
    view = next_token(row, sampling, decode=decode, top=top, actual=actual, context=context)
    controls = {"temperature": temperature, "top_k": top_k, "top_p": top_p}
    return {"position": position, "context_label": context, **controls, **view}
