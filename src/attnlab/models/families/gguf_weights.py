"""A Llama-style GGUF file's weights, two ways: the stored blocks (the q4_1 path) or float32 (reference).

llama.cpp names a decoder's tensors ``token_embd``, ``blk.{i}.attn_{q,k,v,output}``,
``blk.{i}.ffn_{gate,up,down}``, ``blk.{i}.{attn,ffn}_norm``, ``output_norm`` and, when the
output layer is not tied, ``output``. SmolLM2's file keeps every layer matrix as Q4_1 blocks,
the token embeddings (tied to the output layer) as Q8_0 blocks and the norms as float32.

- ``"q4_1"`` (:func:`block_weights`): nothing is converted or copied. Each matrix is a
  :class:`attnlab.engine.fast.quant.QuantMatrix` over a read-only view of the memory-mapped
  file; the engine's products run on the blocks. The embedding is the output layer's ``E^T``
  (d_model, vocab) as blocks: a token's embedding is one stored row, made float32 when looked
  up, and the logits are a product on the blocks too. Norms are views of the file's float32
  values.
- ``"float32"`` (:func:`float32_weights`): every matrix dequantized by ``gguf.quants`` (the
  reference: it does not use our kernels, so it stays right where they cannot run), laid out
  for the engine (transposed, q|k|v and gate|up side by side) and kept in the weight cache
  (:mod:`attnlab.models.weight_cache`): built once, then memory-mapped.

Both give every weight the same float32 value (tested block by block).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from attnlab.engine.block import BlockParams
from attnlab.engine.fast.ops import side_by_side
from attnlab.engine.fast.quant import QuantMatrix
from attnlab.engine.layers import RMSNormParams, SwiGLUParams
from attnlab.engine.model import Architecture, Weights
from attnlab.engine.multihead import AttentionParams
from attnlab.models.gguf_file import GGUFFile

PATHS = ("q4_1", "float32")
CACHE_KIND = "smollm2-float32"  # the weight cache's name for these arrays (kept: users' caches stay valid)


def _norm(g: GGUFFile, name: str, eps: float) -> RMSNormParams:
    return RMSNormParams(g.array(name), eps)


def block_weights(g: GGUFFile, arch: Architecture) -> Weights:
    """The q4_1 path: matrices as the file's blocks (read-only views of its memory map)."""

    def blocks(name: str) -> QuantMatrix:
        return QuantMatrix(g.info(name).type, g.raw(name))

    layers = []
    for i in range(arch.n_layer):
        p = f"blk.{i}."
        layers.append(
            BlockParams(
                attn=AttentionParams(*(blocks(p + f"attn_{n}.weight") for n in ("q", "k", "v", "output"))),
                mlp=SwiGLUParams(*(blocks(p + f"ffn_{n}.weight") for n in ("gate", "up", "down"))),
                norm_1=_norm(g, p + "attn_norm.weight", arch.norm_eps),
                norm_2=_norm(g, p + "ffn_norm.weight", arch.norm_eps),
            )
        )
    return Weights(
        embed=blocks("token_embd.weight"),
        blocks=tuple(layers),
        final_norm=_norm(g, "output_norm.weight", arch.norm_eps),
    )


def _float32_arrays(g: GGUFFile, n_layer: int) -> Iterator[tuple[str, np.ndarray]]:
    """The float32 path's matrices, dequantized by gguf and laid out for the engine, one at a time."""

    def linear(name: str) -> np.ndarray:  # stored (out, in); the engine wants (in, out)
        return g.dequantized(name).T

    for i in range(n_layer):
        p = f"blk.{i}."
        yield p + "qkv", np.hstack([linear(p + f"attn_{n}.weight") for n in "qkv"])
        yield p + "attn_output", linear(p + "attn_output.weight")
        yield p + "gate_up", np.hstack([linear(p + "ffn_gate.weight"), linear(p + "ffn_up.weight")])
        yield p + "ffn_down", linear(p + "ffn_down.weight")
    yield "token_embd", g.dequantized("token_embd.weight")


def _float32_shapes(g: GGUFFile, n_layer: int) -> dict[str, tuple[int, ...]]:
    """The shape of each array :func:`_float32_arrays` makes, read off the file's own tensor table."""

    def t(name: str) -> tuple[int, int]:  # stored (out, in); laid out (in, out)
        n_out, n_in = g.info(name).shape
        return n_in, n_out

    def joined(*names: str) -> tuple[int, int]:
        shapes = [t(n) for n in names]
        return shapes[0][0], sum(s[1] for s in shapes)

    shapes: dict[str, tuple[int, ...]] = {}
    for i in range(n_layer):
        p = f"blk.{i}."
        shapes[p + "qkv"] = joined(*(p + f"attn_{n}.weight" for n in "qkv"))
        shapes[p + "attn_output"] = t(p + "attn_output.weight")
        shapes[p + "gate_up"] = joined(p + "ffn_gate.weight", p + "ffn_up.weight")
        shapes[p + "ffn_down"] = t(p + "ffn_down.weight")
    shapes["token_embd"] = tuple(g.info("token_embd.weight").shape)
    return shapes


def float32_weights(g: GGUFFile, arch: Architecture, *, cache_dir=None) -> tuple[Weights, str]:
    """The float32 path: gguf's dequantized values, from the weight cache (built on first use), and
    how the cache served them ("mapped", "built", ...).

    The cache is checked against the file's tensor table (names and shapes) and each array's digest.
    """
    from attnlab.models.weight_cache import cached_arrays

    cached = cached_arrays(
        g.path,
        CACHE_KIND,
        lambda: _float32_arrays(g, arch.n_layer),
        expect=_float32_shapes(g, arch.n_layer),
        directory=cache_dir,
    )
    a = cached.arrays
    layers = []
    for i in range(arch.n_layer):
        p = f"blk.{i}."
        qkv, gate_up = a[p + "qkv"], a[p + "gate_up"]
        n_q = a[p + "attn_output"].shape[0]
        n_kv = (qkv.shape[1] - n_q) // 2
        d_ff = gate_up.shape[1] // 2
        layers.append(
            BlockParams(
                # views of one array side by side: a decoding step reads each group with one product
                attn=AttentionParams(
                    qkv[:, :n_q], qkv[:, n_q : n_q + n_kv], qkv[:, n_q + n_kv :], a[p + "attn_output"]
                ),
                mlp=SwiGLUParams(gate_up[:, :d_ff], gate_up[:, d_ff:], a[p + "ffn_down"]),
                norm_1=_norm(g, p + "attn_norm.weight", arch.norm_eps),
                norm_2=_norm(g, p + "ffn_norm.weight", arch.norm_eps),
            )
        )
    final = _norm(g, "output_norm.weight", arch.norm_eps)
    return Weights(embed=a["token_embd"], blocks=tuple(layers), final_norm=final), cached.how


def cast(w: Weights, dtype) -> Weights:
    """Float weights in ``dtype`` (new arrays; q|k|v and gate|up still side by side)."""
    if isinstance(w.embed, QuantMatrix):
        raise ValueError("cast needs float32 weights; load the float32 path first")

    def c(a):
        return None if a is None else np.asarray(a, dtype=dtype)

    layers = [
        BlockParams(
            attn=AttentionParams(*side_by_side(b.attn.w_q, b.attn.w_k, b.attn.w_v, dtype=dtype),
                                 c(b.attn.w_o)),  # fmt: skip
            mlp=SwiGLUParams(*side_by_side(b.mlp.w_gate, b.mlp.w_up, dtype=dtype), c(b.mlp.w_down)),
            norm_1=RMSNormParams(c(b.norm_1.weight), b.norm_1.eps),
            norm_2=RMSNormParams(c(b.norm_2.weight), b.norm_2.eps),
        )
        for b in w.blocks
    ]
    final = RMSNormParams(c(w.final_norm.weight), w.final_norm.eps)
    return Weights(embed=c(w.embed), blocks=tuple(layers), final_norm=final)
