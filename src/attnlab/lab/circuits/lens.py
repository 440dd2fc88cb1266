"""The logit lens in words: each block's output read as if it were the last, at one position.

Numbers in (``models/circuits/lens.logit_lens``'s :class:`Lens`, read by attribute:
``position``, ``top_ids`` (L, top), ``top_p`` (L, top), ``answer``, ``token``, ``token_p``
(L,), ``token_rank`` (L,), ``first_top1``, ``settled``), JSON out: per block the top tokens
and the followed token's probability and rank, and the block where the model's final answer
first becomes the top token, named.
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.lab import numbers as fmt
from attnlab.lab.circuits.marks import marked, number
from attnlab.lab.realmodel.status import ordinal
from attnlab.lab.realmodel.tokens import row_label, token_label
from attnlab.lab.said import said

LENS_WORDS = (
    "The plain logit lens: the residual stream leaving each block goes through the model's own final "
    "RMSNorm (with its learned γ) and its unembedding, as if no block came after. No learned "
    "translator per layer is used (that would be a tuned lens)."
)


def rank_words(rank: int) -> str:
    """A 0-based rank as the page prints it: ``"1st"``, ``"13,673rd"``."""
    n = rank + 1
    return ordinal(n).replace(str(n), f"{n:,}", 1)


def named(answer: str, first: int, settled: int, n_layer: int, label: str) -> dict:
    """The block where the answer first becomes top-1, and from which it stays (claims ``first_top1``,
    ``settled``, ``answer``)."""
    stays = (
        " and stays on top from there on"
        if settled == first
        else f", drops, and stays on top from block {settled} on"
    )
    return said(
        f"After {label}, the model's answer is {answer}. It first becomes the top token after block "
        f"{first} of 0..{n_layer - 1}{stays}.",
        answer=answer, first_top1=first, settled=settled,
    )  # fmt: skip


def lens_view(lens, *, tokens: list[str], texts: Mapping[int, str], job: str | None = None) -> dict:
    """JSON-ready: the lens at ``lens.position`` of a text of ``tokens``; ``texts``: id -> token text."""
    n_layer = len(lens.token_p)
    label = row_label(lens.position, tokens[lens.position])
    answer = token_label(texts[int(lens.answer)])
    token = token_label(texts[int(lens.token)])
    layers = []
    for layer in range(n_layer):
        p = float(lens.token_p[layer])
        rank = int(lens.token_rank[layer])
        at = {"kind": "lens", "position": int(lens.position), "layer": layer}
        top = [{"id": int(i), **token_label(texts[int(i)]), "p": float(q), "display": fmt.percent(float(q)),
                "how": {**at, "quantity": "top_p", "rank": r}}
               for r, (i, q) in enumerate(zip(lens.top_ids[layer], lens.top_p[layer]))]  # fmt: skip
        layers.append({
            "layer": layer,
            "label": f"after block {layer}",
            "top": top,
            "token_p": p,
            "token_p_display": fmt.percent(p),
            "token_rank": rank,
            "rank_display": rank_words(rank),
            "is_top": rank == 0,
            "title": f"After block {layer}: p({token['label']}) = {fmt.precise(p)}, rank {rank + 1}",
            "how": {q: {**at, "quantity": q, "token": int(lens.token)} for q in ("token_p", "logit")},
        })  # fmt: skip
    out = {
        "job": job,
        "position": int(lens.position),
        "label": label,
        "answer": {"id": int(lens.answer), **answer},
        "token": {"id": int(lens.token), **token},
        "layers": layers,
        "columns": ["Block", "Top 5 tokens", f"p({token['label']})", "Rank"],
        "lens_words": said(LENS_WORDS, lens="plain", norm="final RMSNorm with γ"),
        "named": named(answer["label"], int(lens.first_top1), int(lens.settled), n_layer, label),
        "followed": None,
    }
    if int(lens.token) != int(lens.answer):
        p, rank = float(lens.token_p[-1]), int(lens.token_rank[-1])
        out["followed"] = marked(
            f"The token followed, {token['label']}, has probability ",
            number(fmt.percent(p), layers[-1]["how"]["token_p"], p),
            f" after the last block ({rank_words(rank)} of the vocabulary).",
            token=token["label"], p=p, rank=rank,
        )  # fmt: skip
    return out
