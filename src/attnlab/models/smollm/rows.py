"""SmolLM2 decoding several steps in one pass: a speculative verification, or a batch of requests.

``step_rows(model, tokens, caches)`` gives the next-token logits (R, vocab) after
each row's token: row r appends ``tokens[r]`` to the sequence whose caches (one
per layer) are ``caches[r]``. Rows may share one list of caches: they are then
consecutive tokens of that sequence, in order (draft tokens verified together);
rows with lists of their own are a batch of requests, each at its own position.

Row r's logits are the bits ``model.forward([tokens[r]], cache=caches[r])[-1]``
gives, one step at a time, on the same caches (``engine.fast.decode.rows``:
every row through the one-row step's calls, only the products shared, each row
in the one-row order). So verifying drafts or batching requests changes no
number, and greedy tokens are the same (tests/models/test_rows.py). Where the
fast path does not apply (float64 weights, say), each row runs that very
one-row step, layer by layer, in row order: the same numbers, without the
shared products.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnlab.engine.cache import KVCache
from attnlab.engine.errors import FieldError
from attnlab.engine.fast.block import transformer_block
from attnlab.engine.fast.decode.rows import decoder_rows_block, rows_apply
from attnlab.engine.fast.quant import QuantMatrix
from attnlab.engine.fast.quant.rows import product_rows
from attnlab.engine.layers import rms_norm
from attnlab.engine.positions import embed
from attnlab.engine.threads import one_blas_thread
from attnlab.lab.realmodel import problems


def positions_of(caches: Sequence[list[KVCache]]) -> np.ndarray:
    """Each row's position: its caches' length, plus the rows before it on the same caches."""
    seen: dict[int, int] = {}
    out = []
    for c in caches:
        at = seen.get(id(c), c[0].length)
        out.append(at)
        seen[id(c)] = at + 1
    return np.asarray(out, dtype=np.int64)


def step_rows(model, tokens: Sequence[int], caches: Sequence[list[KVCache]]) -> np.ndarray:
    """Next-token logits (R, vocab) after each row's token (see the module docstring)."""
    ids = model._check_ids(tokens)
    if len(caches) != len(ids):
        raise ValueError(f"{len(ids)} tokens and {len(caches)} caches: give one list of caches a row")
    positions = positions_of(caches)
    top = int(positions.max()) + 1
    if top > model.config.context:
        raise FieldError(("ids",), problems.over_context(top, model.config.context))
    with one_blas_thread():  # as SmolLM2's own forward: BLAS never splits a sum by the thread count
        # 1) embed: each row's stored row (exact values, whatever the other rows)
        if isinstance(model.embedding, QuantMatrix):
            x = model.embedding.stored_rows(ids)
        else:
            x = embed(model.embedding, np.asarray(ids, dtype=np.int64))  # (R, d_model)
        c = model.config
        # 2) the blocks, every row a step of its own
        for i, params in enumerate(model.layers):
            layer = [row[i] for row in caches]
            options = dict(n_head=c.n_head, n_kv_head=c.n_kv_head, rope=model.rope, positions=positions)
            out = None
            if rows_apply(x, params, caches=layer, **options):
                out = decoder_rows_block(x, params, caches=layer, **options)
            if out is None:  # one row at a time, in order: the one-row step itself
                rows = [_one_row(x, r, params, positions, layer[r], model) for r in range(len(ids))]
                out = np.concatenate(rows)
            x = out
        # 3) the final norm row by row, and the tied output layer (each row the one-row bits)
        h = np.concatenate([rms_norm(x[r : r + 1], model.final_norm) for r in range(len(ids))])
        if isinstance(model.embedding, QuantMatrix):
            return product_rows(h, model.embedding)
        return np.concatenate([model._logits(h[r : r + 1]) for r in range(len(ids))])


def _one_row(x, r: int, params, positions, cache: KVCache, model) -> np.ndarray:
    c = model.config
    return transformer_block(
        x[r : r + 1],
        params,
        n_head=c.n_head,
        n_kv_head=c.n_kv_head,
        norm="pre",
        causal="bottom_right",
        rope=model.rope,
        positions=positions[r : r + 1],
        cache=cache,
    ).output
