"""Ablation in words: which heads were switched off and how, and what changed at each position.

Numbers in (``models/circuits/ablation``: :func:`next_token_change`'s arrays for a decoder,
:func:`layer_change`'s for the encoder), JSON out: every position's numbers before and after
with their display strings, the biggest changes named in sentences with their claims.

:func:`parse_heads` reads the page's heads field: ``"L18 H6, L17 H4"`` (the space may be left out).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from attnlab.engine.errors import FieldError
from attnlab.lab import numbers as fmt
from attnlab.lab.circuits import problems
from attnlab.lab.circuits.heatmap import signed
from attnlab.lab.circuits.marks import marked, number
from attnlab.lab.heads import head_name, heads_named
from attnlab.lab.realmodel.tokens import row_label, token_label
from attnlab.lab.said import said

MAX_HEADS = 64  # heads switched off at once
BIGGEST = 3  # positions named in words
_HEAD = re.compile(r"\s*L\s*(\d{1,4})\s*H\s*(\d{1,4})\s*", re.IGNORECASE)
_SEPARATORS = re.compile(r"[,;]|\s{1,}(?=L)", re.IGNORECASE)

HOWS = {
    "zero": "set to 0",
    "mean": "set to its mean over this text's positions",
}


def program_heads(heads: Sequence[tuple[int, int]]) -> str:
    """The heads as "How is this computed?" names them: ``"18.6,17.4"``."""
    return ",".join(f"{layer}.{head}" for layer, head in heads)


def _how(heads: Sequence[tuple[int, int]], how: str, quantity: str, **fields) -> dict:
    """One number of the ablation as "How is this computed?" names it (``lab/realmodel/program``)."""
    return {"kind": "ablation", "heads": program_heads(heads), "how": how, "quantity": quantity, **fields}


def _no_how(quantity: str, **fields) -> None:
    return None


Hows = Callable[..., dict | None]  # (quantity, **fields) -> a number's descriptor, None: no program


def parse_heads(text: object) -> list[tuple[int, int]]:
    """``"L18 H6, L17 H4"`` (the space may be left out) as ``[(18, 6), (17, 4)]`` (in order, each
    once); ``FieldError`` at ``heads``."""
    if not isinstance(text, str) or not text.strip():
        raise FieldError(("heads",), problems.no_heads())
    out: list[tuple[int, int]] = []
    for piece in _SEPARATORS.split(text):
        if not piece.strip():
            continue
        m = _HEAD.fullmatch(piece)
        if m is None:
            raise FieldError(("heads",), problems.unreadable_head(piece.strip()))
        pair = (int(m.group(1)), int(m.group(2)))
        if pair not in out:
            out.append(pair)
    if not out:
        raise FieldError(("heads",), problems.no_heads())
    if len(out) > MAX_HEADS:
        raise FieldError(("heads",), problems.too_many_heads(len(out), MAX_HEADS))
    return out


def check_heads(heads: Sequence[tuple[int, int]], *, model: str, n_layer: int, n_head: int) -> None:
    """Refuse a head the model does not have, at ``heads``, by its name (``L30 H2``)."""
    for layer, head in heads:
        if not (0 <= layer < n_layer and 0 <= head < n_head):
            problem = problems.no_such_head(head_name(layer, head), model, n_layer, n_head)
            raise FieldError(("heads",), problem)


def lede(heads: Sequence[tuple[int, int]], how: str, first: int) -> dict:
    """What was switched off, and how (claims ``heads``, ``how``, ``first``: the first layer run again)."""
    return said(
        f"{how.capitalize()} ablation of {heads_named(heads)}: each head's output before W_O is "
        f"{HOWS[how]} at every position, its attention pattern left alone, and every block from layer "
        f"{first} on runs again.",
        heads=[list(h) for h in heads], how=how, first=first,
    )  # fmt: skip


def prob(p: float, other: float | None = None) -> str:
    """A probability in percent (:func:`attnlab.lab.numbers.percent`: never ``0%`` unless it is 0), with
    more digits when it would read the same as a different ``other`` (``numbers.percent_pair``)."""
    return fmt.percent(p) if other is None else fmt.percent_pair(p, other)[0]


def _tops(ids: np.ndarray, ps: np.ndarray, texts: Mapping[int, str], how=None) -> list[dict]:
    return [{"id": int(i), **token_label(texts[int(i)]), "p": float(p), "display": fmt.percent(float(p)),
             **({"how": how(r)} if how else {})}
            for r, (i, p) in enumerate(zip(ids, ps))]  # fmt: skip


def next_token_view(change: Mapping[str, np.ndarray], *, heads: Sequence[tuple[int, int]], how: str,
                    tokens: list[str], texts: Mapping[int, str], job: str | None = None) -> dict:  # fmt: skip
    """JSON-ready: a decoder's ablation, position by position (see the module).

    ``change``: ``next_token_change``'s arrays; ``tokens`` the text's tokens; ``texts``: id ->
    token text for every id in ``change``'s top lists.
    """
    n = len(tokens)
    labels = [row_label(i, t) for i, t in enumerate(tokens)]
    pb, pa = change["p_next_before"], change["p_next_after"]
    lb, la = change["loss_before"], change["loss_after"]
    positions = []
    for i in range(n):
        entry = {
            "index": i,
            "label": labels[i],
            "exact": tokens[i],
            "top_before": _tops(change["top_ids_before"][i], change["top_p_before"][i], texts,
                                lambda r, i=i: _how(heads, how, "top_p_before", position=i, rank=r)),
            "top_after": _tops(change["top_ids_after"][i], change["top_p_after"][i], texts,
                               lambda r, i=i: _how(heads, how, "top_p_after", position=i, rank=r)),
            "kl": float(change["kl"][i]),
            "kl_display": fmt.significant(float(change["kl"][i])),
            "how": {"kl": _how(heads, how, "kl", position=i)},
        }
        if i < n - 1:
            b, a = float(pb[i]), float(pa[i])
            entry |= {
                "next": {"label": labels[i + 1], "exact": tokens[i + 1]},
                "p_before": b, "p_after": a, "p_before_display": prob(b, a), "p_after_display": prob(a, b),
                "loss_before": float(lb[i]), "loss_after": float(la[i]),
                "loss_before_display": fmt.rounded(lb[i]), "loss_after_display": fmt.rounded(la[i]),
                "title": f"After {labels[i]}, p({labels[i + 1]}): {fmt.precise(b)} before, "
                f"{fmt.precise(a)} after",
                "how": {"kl": _how(heads, how, "kl", position=i),
                        **{k: _how(heads, how, q, position=i) for k, q in (
                            ("p_before", "p_next_before"), ("p_after", "p_next_after"),
                            ("loss_before", "loss_before"), ("loss_after", "loss_after"))}},
            }  # fmt: skip
        positions.append(entry)
    first = min((layer for layer, _ in heads), default=0)

    def numbered(quantity: str, **fields) -> dict:
        return _how(heads, how, quantity, **fields)

    return {
        "kind": "next_token",
        "job": job,
        "heads": [list(h) for h in heads],
        "heads_label": heads_named(heads),
        "how": how,
        "lede": lede(heads, how, first),
        "positions": positions,
        "columns": ["Position", "Next token", "p before", "p after", "Loss before", "Loss after"],
        "top_columns": ["Top 5 before", "Top 5 after"],
        "mean_loss": mean_loss(lb, la, numbered),
        "biggest": biggest(labels, pb, pa, lb, la, numbered),
    }


def mean_loss(before: np.ndarray, after: np.ndarray, how: Hows = _no_how) -> dict:
    """The mean loss over the text's next tokens, before and after (claims: count, before, after).

    ``how(quantity)``: each number's descriptor (mean_loss_before, mean_loss_after, mean_loss_change).
    """
    n = len(before)
    if n == 0:
        text = "The text is one token long: it has no next token to score."
        return marked(text, count=0, before=None, after=None)
    b, a = float(np.mean(before)), float(np.mean(after))
    change = fmt.difference(fmt.rounded(a), fmt.rounded(b))  # of the two numbers shown beside it
    return marked(
        f"Mean loss over the {fmt.plural(n, 'next token')} of the text: ",
        number(fmt.rounded(b), how("mean_loss_before"), b), " before, ",
        number(fmt.rounded(a), how("mean_loss_after"), a), " after (",
        number(signed(float(change)), how("mean_loss_change"), a - b), " nats).",
        count=n, before=b, after=a, change_shown=change,
    )  # fmt: skip


def biggest(labels: list[str], pb, pa, lb, la, how: Hows = _no_how) -> list[dict]:
    """The ``BIGGEST`` positions whose loss changed most (ties: earlier), each in one sentence.

    Claims: ``position``, ``p_before``, ``p_after``, ``loss_before``, ``loss_after``, ``direction``
    ("falls", "rises" or "stays", of the next token's probability); ``how(quantity, position=)``:
    each number's descriptor.
    """
    delta = np.abs(np.asarray(la, dtype=np.float64) - np.asarray(lb, dtype=np.float64))
    order = [i for i in sorted(range(len(delta)), key=lambda i: (-delta[i], i)) if delta[i] > 0][:BIGGEST]
    if not order:
        return [marked("Switching these heads off changes no next token's probability in this text.",
                       position=None, changed=0)]  # fmt: skip
    out = []
    for i in order:
        b, a = float(pb[i]), float(pa[i])
        lb_i, la_i = float(lb[i]), float(la[i])
        direction = "falls" if a < b else "rises" if a > b else "stays"
        shown = prob(b) if direction == "stays" else prob(b, a)
        p_before = number(shown, how("p_next_before", position=i), b)
        move = ["stays at ", p_before] if direction == "stays" else [
            f"{direction} from ", p_before, " to ", number(prob(a, b), how("p_next_after", position=i), a)]
        out.append(marked(
            f"After {labels[i]}, the probability of the text's next token {labels[i + 1]} ", *move, " (loss ",
            number(fmt.rounded(lb_i), how("loss_before", position=i), lb_i), " → ",
            number(fmt.rounded(la_i), how("loss_after", position=i), la_i), " nats).",
            position=i, p_before=b, p_after=a, loss_before=lb_i, loss_after=la_i, direction=direction,
        ))  # fmt: skip
    return out


def layer_view(change: Mapping, *, heads: Sequence[tuple[int, int]], how: str, tokens: list[str],
               job: str | None = None) -> dict:  # fmt: skip
    """JSON-ready: the encoder's ablation, as how the residual stream leaving ``change["layer"]`` moved.

    ``change``: ``layer_change``'s ``norm_before``, ``change``, ``cosine`` (T,) and ``pooled_cosine``.
    """
    layer = int(change["layer"])
    labels = [row_label(i, t) for i, t in enumerate(tokens)]
    norm, moved, cos = (np.asarray(change[k], dtype=np.float64) for k in ("norm_before", "change", "cosine"))
    relative = np.divide(moved, norm, out=np.zeros_like(moved), where=norm > 0)
    positions = [
        {
            "index": i, "label": labels[i], "exact": tokens[i],
            "norm_before": float(norm[i]), "change": float(moved[i]), "relative": float(relative[i]),
            "cosine": float(cos[i]),
            "norm_display": fmt.rounded(norm[i]), "change_display": fmt.rounded(moved[i]),
            "relative_display": fmt.percent(relative[i]), "cosine_display": fmt.rounded(cos[i], 4),
            "title": f"{labels[i]}: moved by {fmt.precise(moved[i])} (length {fmt.precise(norm[i])}), "
            f"cosine {fmt.precise(cos[i])}",
            "how": {q: _how(heads, how, q, position=i, layer=layer)
                    for q in ("norm_before", "change", "relative", "cosine")},
        }
        for i in range(len(tokens))
    ]  # fmt: skip
    order = [i for i in sorted(range(len(tokens)), key=lambda i: (-relative[i], i)) if moved[i] > 0][:BIGGEST]

    def at(quantity: str, i: int) -> dict:
        return _how(heads, how, quantity, position=i, layer=layer)

    moved_words = [
        marked(
            f"{labels[i]}: its vector leaving layer {layer} moved by ",
            number(fmt.percent(relative[i]), at("relative", i), relative[i]),
            " of its length (cosine with the unablated one ",
            number(fmt.rounded(cos[i], 4), at("cosine", i), cos[i]), ").",
            position=i, relative=float(relative[i]), cosine=float(cos[i]),
        )
        for i in order
    ] or [marked(f"Switching these heads off moves no token's vector leaving layer {layer}.", position=None,
                 changed=0)]  # fmt: skip
    pooled = change.get("pooled_cosine")
    first = min((layer for layer, _ in heads), default=0)
    out = {
        "kind": "layer",
        "job": job,
        "layer": layer,
        "heads": [list(h) for h in heads],
        "heads_label": heads_named(heads),
        "how": how,
        "lede": lede(heads, how, first),
        "positions": positions,
        "columns": ["Token", f"Length leaving layer {layer}", "Moved by", "Moved (share of length)",
                    "Cosine"],
        "biggest": moved_words,
        "pooled": None,
    }
    if pooled is not None:
        out["pooled"] = marked(
            "The sentence embedding's cosine with the unablated one: ",
            number(fmt.rounded(pooled, 6), _how(heads, how, "pooled_cosine"), pooled), " (1 = unchanged).",
            cosine=float(pooled),
        )  # fmt: skip
        out["pooled_how"] = _how(heads, how, "pooled_cosine")
    if first > layer:
        out["note"] = said(
            f"Every head switched off is above layer {layer}, so the stream leaving layer {layer} "
            "cannot change.",
            first=first, layer=layer,
        )  # fmt: skip
    return out
