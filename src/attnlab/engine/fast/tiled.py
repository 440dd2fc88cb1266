"""Tiled attention with a choice of kernel: ``tiled_attention(..., backend=, threads=)``.

``backend="auto"`` runs the threaded NumPy kernel (:mod:`attnlab.engine.fast.tiles`:
threads over heads and query blocks, numba-compiled blocks in float32) for
NumPy inputs and the readable reference (:func:`attnlab.engine.tiled.tiled_attention`)
otherwise; ``"generic"`` and ``"numpy"`` force one. The kernel's tasks do not
depend on ``threads``: the numbers are the same bits under any thread count.
"""

from __future__ import annotations

from attnlab.engine._arrays import Array, check_finite
from attnlab.engine.errors import FieldError
from attnlab.engine.fast.tiles import numpy_tiled_attention
from attnlab.engine.threads import one_blas_thread
from attnlab.engine.tiled import TiledResult, prepare_tiles, tiles

BACKENDS = ("auto", "generic", "numpy")


def tiled_attention(
    q: Array,
    k: Array,
    v: Array,
    *,
    block_q: int = 512,
    block_k: int | None = 512,
    causal: str | None = None,
    scale: float | None = None,
    key_padding_mask: Array | None = None,
    backend: str = "auto",
    threads: int | None = None,
) -> TiledResult:
    """:func:`attnlab.engine.tiled.tiled_attention` on the kernel ``backend`` names.

    The default 512 x 512 tiles suit the NumPy kernel: a float32 tile is 1 MiB,
    so the scores stay in a core's L2 cache between the first product, exp and
    the second product (docs/performance.md). Under a causal mask the kernel
    splits a block's diagonal tile into pieces of rows. ``threads`` (NumPy
    backend only) defaults to the CPU count.
    """
    if backend not in BACKENDS:
        raise FieldError("backend", f"backend={backend!r}; use one of {BACKENDS}")
    xp, q, k, v, scale, padding, batch, n_q, n_k, block_k = prepare_tiles(
        q, k, v, block_q=block_q, block_k=block_k, causal=causal, scale=scale,
        key_padding_mask=key_padding_mask,
    )  # fmt: skip
    is_numpy = xp.__name__.endswith("numpy")
    if backend == "numpy" and not is_numpy:
        raise FieldError("backend", f"backend='numpy' needs NumPy arrays; these belong to {xp.__name__}")
    if backend == "numpy" or (backend == "auto" and is_numpy):  # the kernel checks NaN and inf itself
        out, lse, fully = numpy_tiled_attention(
            q, k, v, scale=scale, causal=causal, padding=padding,
            block_q=block_q, block_k=block_k, threads=threads,
        )  # fmt: skip
        return TiledResult(output=out, logsumexp=lse, fully_masked=fully)
    for name, a in (("q", q), ("k", k), ("v", v)):
        check_finite(xp, a, name)
    with one_blas_thread():
        return tiles(xp, q, k, v, scale, causal, padding, batch, n_q, n_k, block_q, block_k)
