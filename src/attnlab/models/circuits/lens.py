"""The logit lens: the residual stream after each block, read as if it were the last.

For block l = 0..L-1, the residual stream leaving it at one position goes through the
model's own final RMSNorm (with its learned gain γ) and the tied unembedding: logits
(L, V), computed as the model computes its output (the same calls on those rows; on the
q4_1 path the last block's row gives the model's logits at that position bit for bit).
This is the plain lens: no learned translator per layer (that would be a "tuned lens").

The model's answer at the position is its top token after the last block (ties: the
lower id). ``first_top1``: the first block after which the answer is top-1;
``settled``: the first block from which it stays top-1 to the end.
Decoder only: an encoder has no unembedding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.engine.threads import one_blas_thread
from attnlab.models.circuits import checks, metrics
from attnlab.models.circuits.runs import Cache
from attnlab.models.errors import Refusal


@dataclass(frozen=True, eq=False, kw_only=True)
class Lens:
    """The lens at ``position``: rows are blocks 0..L-1 (the residual stream after each).

    ``logits`` (L, V) in the model's dtype; ``top_ids`` (L, top), ``top_p`` (L, top)
    float64; ``answer``: the model's top token after the last block; ``token``: the token
    followed (default the answer) with ``token_p`` (L,) float64 and ``token_rank`` (L,)
    (0 = top-1); ``first_top1`` / ``settled``: block indices, or None.
    """

    position: int
    logits: np.ndarray
    top_ids: np.ndarray
    top_p: np.ndarray
    answer: int
    token: int
    token_p: np.ndarray
    token_rank: np.ndarray
    first_top1: int | None
    settled: int | None


def logit_lens(model, cache: Cache, position: int = -1, *, top: int = 5, token: int | None = None) -> Lens:
    """The lens of ``cache`` (a decoder's run) at ``position`` (-1: the last token)."""
    if model.kind != "decoder":
        raise Refusal(("model",), "circuits.no_unembedding", model.name)
    at = checks.position(position, cache.n_tokens, loc=("position",))
    with one_blas_thread():
        logits = model.head(np.ascontiguousarray(cache.resid[1:, at]))  # (L, V)
    answer = int(metrics.ranked(logits[-1], 1)[0])
    if token is None:
        token = answer
    token = checks.index(token, model.arch.d_vocab, loc=("token",), model="the vocabulary", what="token")
    p = metrics.probabilities(logits)
    top_ids = metrics.ranked(logits, top)
    is_top = metrics.ranked(logits, 1)[:, 0] == answer
    first = int(np.argmax(is_top)) if is_top.any() else None
    settled = None
    for layer in range(len(is_top) - 1, -1, -1):
        if not is_top[layer]:
            break
        settled = layer
    return Lens(
        position=at,
        logits=logits,
        top_ids=top_ids,
        top_p=np.take_along_axis(p, top_ids, axis=-1),
        answer=answer,
        token=token,
        token_p=p[:, token],
        token_rank=metrics.rank_of(logits, token),
        first_top1=first,
        settled=settled,
    )
