"""Activation patching in words: what a patch means, the two runs' metric, and a sweep as a map.

Numbers in (``models/circuits/patching``: a :class:`Pair`'s metric values and a
:class:`Sweep`, read by attribute), JSON out. A sweep's map shows the fraction recovered,
(patched - corrupted) / (clean - corrupted), per cell; its hover gives the metric itself at
full precision. A sweep stopped by Cancel keeps what it did: the cells not computed are
blank (``None``) and the status sentence says how many were done.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.circuits.heatmap import grid, signed_legend
from attnlab.lab.circuits.marks import marked, number
from attnlab.lab.realmodel.tokens import row_label, token_label
from attnlab.lab.said import said

KINDS = ("residual", "heads", "mlp", "pattern", "keys", "values")
SITES = {"pre": "entering", "mid": "between the attention and the MLP of", "post": "leaving"}
TOP = 3  # cells named in the sentence
METRICS = {"logit_difference": "logit difference", "cosine": "cosine with the clean embedding"}


def meaning(kind: str, site: str | None, *, decoder: bool, per_position: bool = False) -> dict:
    """What one cell of a sweep means, in words (claims ``kind``, ``site``)."""
    metric = (
        "the logit difference between the two answers"
        if decoder
        else "the cosine of the sentence embedding with the clean prompt's"
    )
    if kind == "residual":
        text = (
            f"A cell (layer l, token p): run the corrupted prompt, but put the clean run's residual stream "
            f"{SITES[site]} block l at token p in its place, and run every block from there on again. Its "
            f"colour is the fraction of {metric} that comes back: 1 = all of the clean run's, 0 = none."
        )
    elif kind == "heads":
        text = (
            "A cell (layer l, head h): run the corrupted prompt with query head h's output in layer l "
            "(before W_O, at every position) taken from the clean run, and run the layers above again. "
            "Only that query head's output is patched: where heads share keys and values (grouped-query "
            "attention), the shared key and value head is left alone, so no other head changes. Its "
            f"colour is the fraction of {metric} that comes back."
        )
    elif kind == "pattern":
        text = (
            "A cell (layer l, head h): run the corrupted prompt with query head h's attention pattern in "
            "layer l (how each query shares its attention over the keys) taken from the clean run, and run "
            "the layers above again. The values the head mixes stay the corrupted run's: only where it "
            f"looks comes from the clean prompt. Its colour is the fraction of {metric} that comes back."
        )
    elif kind in ("keys", "values"):
        what = "keys (after RoPE, what the scores read)" if kind == "keys" else "values"
        text = (
            f"A cell (layer l, KV head g): run the corrupted prompt with KV head g's {what} in layer l "
            "taken from the clean run at every position, and run the layers above again. A KV head is "
            "shared by its group of query heads (grouped-query attention), so the patch reaches every "
            f"query head of the group, named in the hover. Its colour is the fraction of {metric} that "
            "comes back."
        )
    else:
        where = "at token p" if per_position else "at every position"
        text = (
            f"A cell (layer l): run the corrupted prompt with layer l's MLP output {where} taken from the "
            f"clean run, and run the layers above again. Its colour is the fraction of {metric} that "
            "comes back."
        )
    return said(text, kind=kind, site=site if kind == "residual" else None)


def patch_how(quantity: str, *, position: int | None, answer_ids: Sequence[int] | None, **fields) -> dict:
    """One number of a patch as "How is this computed?" names it (``lab/realmodel/program``)."""
    out = {"kind": "patch", "quantity": quantity, **fields}
    if answer_ids is not None:  # a decoder's metric: the logit difference of two answers at a position
        out |= {"position": position, "answers": f"{answer_ids[0]},{answer_ids[1]}"}
    return out


def pair_view(*, metric: str, clean_value: float, corrupt_value: float, clean_ids: Sequence[int],
              corrupt_ids: Sequence[int], clean_tokens: list[str], corrupt_tokens: list[str],
              answers: tuple[str, str] | None, position: int | None,
              answer_ids: Sequence[int] | None = None) -> dict:  # fmt: skip
    """JSON-ready: the two runs' metric, where the prompts differ, and what 'recovered' measures."""
    differ = [i for i, (a, b) in enumerate(zip(clean_ids, corrupt_ids)) if a != b]
    gap = clean_value - corrupt_value
    out: dict = {
        "metric": metric,
        "metric_name": METRICS[metric],
        "clean_value": clean_value,
        "corrupt_value": corrupt_value,
        "clean_display": fmt.rounded(clean_value, 4 if metric == "cosine" else 3),
        "corrupt_display": fmt.rounded(corrupt_value, 4 if metric == "cosine" else 3),
        "n_tokens": len(clean_ids),
        "differ": differ,
        "how": {q: patch_how(q, position=position, answer_ids=answer_ids) for q in ("clean", "corrupt")},
    }
    clean = number(fmt.rounded(clean_value, 4 if metric == "cosine" else 3), out["how"]["clean"], clean_value)
    corrupt = number(fmt.rounded(corrupt_value, 4 if metric == "cosine" else 3), out["how"]["corrupt"],
                     corrupt_value)  # fmt: skip
    if metric == "logit_difference":
        right, other = (token_label(t)["label"] for t in answers)
        at = row_label(position, clean_tokens[position])
        out["answers"] = [token_label(t) for t in answers]
        out["position_label"] = at
        out["values"] = marked(
            f"After {at}: logit({right}) − logit({other}) is ", clean, " on the clean prompt and ", corrupt,
            " on the corrupted one.",
            clean=clean_value, corrupt=corrupt_value, position=position,
        )  # fmt: skip
    else:
        out["values"] = marked(
            "The corrupted prompt's sentence embedding has cosine ", corrupt, " with the clean prompt's (the "
            "clean one with itself: ", clean, ").",
            clean=clean_value, corrupt=corrupt_value,
        )  # fmt: skip
    if gap == 0:
        out["recovered"] = said(
            f"Both prompts give the same {METRICS[metric]}, so there is nothing to recover: every "
            "fraction is undefined and drawn blank.",
            gap=0.0,
        )
    else:
        out["recovered"] = said(
            "Recovered = (patched − corrupted) / (clean − corrupted): 1 brings back the clean run's "
            f"{METRICS[metric]}, 0 leaves the corrupted run's, below 0 pushes further away.",
            gap=gap,
        )
    if differ:
        labels = [f"{row_label(i, clean_tokens[i])} / {token_label(corrupt_tokens[i])['label']}"
                  for i in differ[:4]]  # fmt: skip
        more = f" and {len(differ) - 4} more" if len(differ) > 4 else ""
        noun = "tokens" if len(differ) > 1 else "token"
        text = f"The prompts differ at {len(differ)} {noun} ({', '.join(labels)}{more})."
        if metric == "logit_difference" and differ[0] > 0:
            text += (
                f" Before token {differ[0]} the two runs are the same bits (causal attention), so a "
                "residual patch there recovers exactly 0."
            )
        out["differ_words"] = said(text, positions=differ, first=differ[0])
    else:
        out["differ_words"] = said("The two prompts are the same tokens.", positions=[], first=None)
    return out


def _columns(sweep, clean_tokens: list[str], kv_heads: Sequence[int] | None) -> tuple[list[str], list[str]]:
    """The sweep's columns: short names (the map's axis) and full names (the hover)."""
    if sweep.kind in ("heads", "pattern"):
        short = [f"H{h}" for h in sweep.columns]
        full = [f"head {h}" + (f" (KV head {kv_heads[h]})" if kv_heads else "") for h in sweep.columns]
        return short, full
    if sweep.kind in ("keys", "values"):
        groups = [[h for h, g in enumerate(kv_heads or []) if g == kv] for kv in sweep.columns]
        short = [f"KV{kv}" for kv in sweep.columns]
        full = [f"KV head {kv}" + (f" (query heads {', '.join(map(str, grp))})" if len(grp) > 1 else "")
                for kv, grp in zip(sweep.columns, groups)]  # fmt: skip
        return short, full
    if sweep.columns == (None,):
        return ["all"], ["every token"]
    labels = [row_label(p, clean_tokens[p]) for p in sweep.columns]
    return labels, [f"token {label}" for label in labels]


def sweep_view(sweep, *, total: int, cancelled: bool, metric: str, clean_tokens: list[str],
               kv_heads: Sequence[int] | None = None, position: int | None = None,
               answer_ids: Sequence[int] | None = None, job: str | None = None) -> dict:  # fmt: skip
    """JSON-ready: a sweep's map of fractions recovered, its most recovered cells and its status.

    ``sweep``: the numerics' ``Sweep`` (``kind``, ``site``, ``layers``, ``columns``, ``values``,
    ``recovered``, ``skipped``, ``done``); ``total``: the patches it was asked for; ``kv_heads``:
    each query head's KV head (heads sweeps); ``position`` and ``answer_ids``: a decoder's metric
    (for each cell's "How is this computed?" descriptor).
    """
    values = np.asarray(sweep.values, dtype=np.float64)
    recovered = np.asarray(sweep.recovered, dtype=np.float64)
    skipped = np.asarray(sweep.skipped, dtype=bool)
    short, full = _columns(sweep, clean_tokens, kv_heads)
    rows = [f"L{layer}" for layer in sweep.layers]
    name = METRICS[metric]

    def cell(i: int, j: int, r: float | None) -> str:
        return "" if r is None else fmt.rounded(r, 2)

    target = {"residual": f"resid_{sweep.site}", "heads": "head", "mlp": "mlp", "pattern": "pattern",
              "keys": "keys", "values": "values"}[sweep.kind]  # fmt: skip

    def how(i: int, j: int, quantity: str = "recovered") -> dict:
        column = {} if sweep.columns[j] is None else {"column": int(sweep.columns[j])}
        return patch_how(quantity, position=position, answer_ids=answer_ids, target=target,
                         layer=int(sweep.layers[i]), **column)  # fmt: skip

    def title(i: int, j: int, r: float | None) -> list:
        """The cell's words, its numbers marked: the fraction recovered and the metric after the patch."""
        where = f"Layer {sweep.layers[i]}, {full[j]}"
        v = values[i, j]
        if np.isnan(v):
            return [f"{where}: not computed (the sweep was cancelled first)"]
        after = how(i, j, "value")
        if r is None:
            return [f"{where}: {name} ", number(fmt.precise(v), after, v),
                    "; no fraction (both prompts give the same value)"]  # fmt: skip
        same = "; the clean and corrupted activations are the same bits, so not rerun" * bool(skipped[i, j])
        return [f"{where}: recovered ", number(fmt.rounded(r, 3), how(i, j), r), f" ({name} ",
                number(fmt.rounded(v, 4), after, v), f", exactly {fmt.precise(v)}){same}"]  # fmt: skip

    finite = [tuple(c) for c in np.argwhere(np.isfinite(recovered)).tolist()]
    order = sorted(finite, key=lambda c: (-recovered[c], c))[:TOP]
    if order:
        parts: list = ["Most recovered: "]
        for k, (i, j) in enumerate(order):
            r = float(recovered[i, j])
            parts += ["; " if k else "", f"layer {sweep.layers[i]} at {full[j]} (",
                      number(fmt.rounded(r, 2), how(i, j), r), ")"]  # fmt: skip
        claims = [[sweep.layers[i], sweep.columns[j], float(recovered[i, j])] for i, j in order]
        top = marked(*parts, ".", top=claims)
    else:
        top = marked("No cell has a fraction recovered yet.", top=[])
    done = int(sweep.done)
    if cancelled:
        status = said(
            f"Cancelled after {done} of {total} patches: the {total - done} not computed are blank.",
            done=done, total=total, cancelled=True,
        )  # fmt: skip
    else:
        status = said(f"All {total} patches done.", done=done, total=total, cancelled=False)
    n_skipped = int(skipped.sum())
    kind_name = {"residual": "residual stream", "heads": "query heads' outputs", "mlp": "MLP outputs",
                 "pattern": "query heads' attention patterns", "keys": "KV heads' keys",
                 "values": "KV heads' values"}  # fmt: skip
    kind_name = kind_name[sweep.kind]
    return {
        "kind": sweep.kind,
        "site": sweep.site,
        "layers": list(sweep.layers),
        "columns": [None if c is None else int(c) for c in sweep.columns],
        "done": done,
        "total": total,
        "cancelled": cancelled,
        "recovered_values": [[None if not np.isfinite(x) else float(x) for x in row] for row in recovered],
        "map": grid(
            recovered, rows=rows, columns=short, cell=cell, title=title, scale="signed", limit=1.0,
            legend=signed_legend(1.0, above="the patch brings the clean answer back (1 = all of it)",
                                 below="it pushes further toward the corrupted answer",
                                 blank="not computed, or no fraction"),
            label=f"Patching the {kind_name}: rows are layers, columns "
            + ("query heads" if sweep.kind in ("heads", "pattern") else "KV heads"
               if sweep.kind in ("keys", "values") else "tokens" if short != ["all"] else "every token"),
            how=how,
        ),  # fmt: skip
        "top": top,
        "status": status,
        "skipped": said(
            f"{n_skipped} of these patches put back the same bits the corrupted run already had, so they "
            "give its value without a rerun.",
            skipped=n_skipped,
        ) if n_skipped else None,  # fmt: skip
        "job": job,
    }
