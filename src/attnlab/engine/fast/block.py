"""One transformer block, the fast way when it applies: ``transformer_block``.

The same call as :func:`attnlab.engine.block.transformer_block` (the readable
reference). A pre-norm Llama-style block on a 2-D float array with no trace,
no masks and a bottom-right causal alignment runs :func:`decode.numpy_decoder_block`
(its weights may be :class:`~attnlab.engine.fast.quant.QuantMatrix` blocks);
anything else runs the reference, on the weights' float values, which also
produces the errors. Tests compare the two (``tests/engine/fast/test_decode.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnlab.engine import block as reference
from attnlab.engine._arrays import Array, as_array
from attnlab.engine.block import NORM_PLACEMENTS, BlockEdits, BlockParams, BlockResult
from attnlab.engine.cache import KVCache
from attnlab.engine.errors import FieldError
from attnlab.engine.fast.decode import fast_block_applies, numpy_decoder_block
from attnlab.engine.fast.quant import with_values
from attnlab.engine.multihead import MultiHeadResult
from attnlab.engine.positions import RoPE
from attnlab.engine.threads import holds_one_blas_thread


@holds_one_blas_thread
def transformer_block(
    x: Array,
    params: BlockParams,
    *,
    n_head: int,
    n_kv_head: int | None = None,
    norm: str = "pre",
    mask: Array | None = None,
    causal: str | None = None,
    key_padding_mask: Array | None = None,
    rope: RoPE | None = None,
    positions: Array | Sequence[int] | None = None,
    cache: KVCache | None = None,
    scale: float | None = None,
    return_trace: bool = False,
    edits: BlockEdits | None = None,
) -> BlockResult:
    """Run one transformer block on ``x`` (..., L, d_model), as the reference does (``edits`` too)."""
    if norm not in NORM_PLACEMENTS:
        raise FieldError("norm", f"norm={norm!r}; use 'pre' (GPT-2, Llama) or 'post' (BERT)")
    x = as_array(x, "x")
    options = dict(
        n_head=n_head, n_kv_head=n_kv_head, rope=rope, positions=positions, cache=cache, scale=scale
    )
    if fast_block_applies(
        x,
        params,
        norm=norm,
        mask=mask,
        causal=causal,
        key_padding_mask=key_padding_mask,
        return_trace=return_trace,
        **options,
    ):
        done = numpy_decoder_block(x, params, edits=edits, **options)
        if done is not None:
            out, attn_out, weights, heads = done
            fully = np.zeros(weights.shape[:-1], dtype=bool)  # bottom-right, S >= L: no empty row
            att = MultiHeadResult(output=attn_out, weights=weights, fully_masked=fully, heads=heads)
            return BlockResult(output=out, attention=att)
    # weights kept as quantized blocks: the reference takes their values
    return reference.transformer_block(
        x,
        with_values(params),
        norm=norm,
        mask=mask,
        causal=causal,
        key_padding_mask=key_padding_mask,
        return_trace=return_trace,
        edits=edits,
        **options,
    )
