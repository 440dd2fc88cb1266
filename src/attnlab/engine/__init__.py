"""Pure numerics: attention and transformer layers. No I/O, no web.

``trace_query`` is the exact one-query calculation behind the lab's explorer.
The rest works on whole arrays of any array-API namespace (NumPy,
array-api-strict, PyTorch): ``attention`` and ``tiled_attention`` (attention.py,
tiled.py), ``multi_head_attention`` (multihead.py), norms, activations and
feed-forward networks (layers.py), positions and RoPE (positions.py),
``KVCache`` (cache.py), blocks and stacks (block.py), named intermediates
(trace.py), and the one forward over a model description (model.py:
``Architecture``, ``Weights``; forward.py; hooks.py: TransformerLens hook
points). ``engine.fast`` swaps faster steps into that same forward; nothing
here imports it. Conventions: boolean masks True = may attend; causal alignment
named ("top_left" or "bottom_right"); weights pre-transposed (``Q = X @ W_Q``);
float64 unless every input is float32.
"""

from attnlab.engine.attention import (
    CAUSAL_ALIGNMENTS,
    AttentionResult,
    attention,
    causal_mask,
)
from attnlab.engine.block import (
    NORM_PLACEMENTS,
    BlockParams,
    BlockResult,
    StackResult,
    decoder_stack,
    encoder_stack,
    transformer_block,
)
from attnlab.engine.cache import KVCache, new_caches
from attnlab.engine.layers import (
    ACTIVATIONS,
    LayerNormParams,
    MLPParams,
    RMSNormParams,
    SwiGLUParams,
    activate,
    erf,
    gelu,
    layer_norm,
    linear,
    mlp,
    norm,
    relu,
    rms_norm,
    sigmoid,
    silu,
    swiglu,
)
from attnlab.engine.multihead import (
    AttentionParams,
    MultiHeadResult,
    merge_heads,
    multi_head_attention,
    split_heads,
)
from attnlab.engine.positions import (
    ROPE_CONVENTIONS,
    RoPE,
    embed,
    learned_positions,
    sinusoidal_positions,
)
from attnlab.engine.single import (
    MAX_DIM,
    MAX_LABEL_LENGTH,
    MAX_SOURCES,
    QueryTrace,
    default_labels,
    ordered_sum,
    trace_query,
)
from attnlab.engine.tiled import TiledResult, tiled_attention
from attnlab.engine.trace import Trace

__all__ = [
    "ACTIVATIONS",
    "CAUSAL_ALIGNMENTS",
    "MAX_DIM",
    "MAX_LABEL_LENGTH",
    "MAX_SOURCES",
    "NORM_PLACEMENTS",
    "ROPE_CONVENTIONS",
    "AttentionParams",
    "AttentionResult",
    "BlockParams",
    "BlockResult",
    "KVCache",
    "LayerNormParams",
    "MLPParams",
    "MultiHeadResult",
    "QueryTrace",
    "RMSNormParams",
    "RoPE",
    "StackResult",
    "SwiGLUParams",
    "TiledResult",
    "Trace",
    "activate",
    "attention",
    "causal_mask",
    "decoder_stack",
    "default_labels",
    "embed",
    "encoder_stack",
    "erf",
    "gelu",
    "layer_norm",
    "learned_positions",
    "linear",
    "merge_heads",
    "mlp",
    "multi_head_attention",
    "new_caches",
    "norm",
    "ordered_sum",
    "relu",
    "rms_norm",
    "sigmoid",
    "silu",
    "sinusoidal_positions",
    "split_heads",
    "swiglu",
    "tiled_attention",
    "trace_query",
    "transformer_block",
]
