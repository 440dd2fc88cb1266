"""Position information: sinusoidal tables, learned tables and rotary embeddings (RoPE).

- Sinusoidal (Vaswani et al. 2017): ``PE[p, 2i] = sin(p / base^(2i/d))`` and
  ``PE[p, 2i+1] = cos(p / base^(2i/d))``, added to the token embeddings.
- Learned (BERT, GPT-2): a trained (n_positions, d_model) table; row p is added.
- RoPE (Su et al. 2021): rotate pairs of q and k coordinates by angle
  ``p * base^(-2i/d_head)``, so ``q_p . k_r`` depends on p - r only. Two
  layouts pair the coordinates differently (the weights must match the layout):
  ``"half"`` pairs coordinate i with i + d/2 (Hugging Face ``rotate_half``);
  ``"interleaved"`` pairs 2i with 2i + 1 (the RoFormer paper, Meta's Llama,
  GPT-J, GGUF files).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from attnlab.engine._arrays import Array, as_array, namespace, shape_of
from attnlab.engine.errors import FieldError

ROPE_CONVENTIONS = ("half", "interleaved")


def sinusoidal_positions(
    n_positions: int, d_model: int, *, base: float = 10000.0, offset: int = 0, like: Array | None = None
) -> Array:
    """Return the (n_positions, d_model) sinusoidal table for positions offset, offset+1, ...

    Even columns hold sines, odd columns cosines; columns 2i and 2i+1 share the
    frequency ``base^(-2i/d_model)``. float64 NumPy unless ``like`` names another
    namespace and dtype.
    """
    if n_positions < 0 or d_model < 1:
        raise FieldError(
            "n_positions" if n_positions < 0 else "d_model",
            f"need n_positions >= 0 and d_model >= 1, not {n_positions}, {d_model}",
        )
    xp = namespace(like) if like is not None else namespace(np.empty(0))
    dtype = like.dtype if like is not None else xp.float64
    pos = xp.astype(xp.arange(offset, offset + n_positions), xp.float64)
    col = xp.arange(d_model)
    freq = float(base) ** (-xp.astype(col - col % 2, xp.float64) / d_model)  # (d_model,)
    angle = xp.reshape(pos, (n_positions, 1)) * xp.reshape(freq, (1, d_model))
    table = xp.where(col % 2 == 0, xp.sin(angle), xp.cos(angle))
    return xp.astype(table, dtype)


def learned_positions(table: Array, positions: Array | Sequence[int]) -> Array:
    """Return the rows of a learned (n_positions, d_model) ``table`` at ``positions``."""
    return embed(table, positions, field="positions")


def embed(table: Array, ids: Array | Sequence[int], *, field: str = "ids") -> Array:
    """Return ``table[ids]``: rows of a (vocab, d_model) table, shape ids.shape + (d_model,)."""
    xp = namespace(table)
    n_rows = shape_of(table)[0]
    ids = _int_array(xp, ids, field, like=table)
    if shape_of(ids) and (int(xp.min(ids)) < 0 or int(xp.max(ids)) >= n_rows):
        raise FieldError(
            field,
            f"range over [{int(xp.min(ids))}, {int(xp.max(ids))}]; the table has rows 0..{n_rows - 1}"
        )
    flat = xp.reshape(ids, (-1,))
    rows = xp.take(table, flat, axis=0)
    return xp.reshape(rows, shape_of(ids) + shape_of(table)[1:])


@dataclass(frozen=True)
class RoPE:
    """Rotary position embedding for heads of size ``head_dim`` (even).

    ``base`` sets the frequencies ``base^(-2i/head_dim)``, i = 0 .. head_dim/2 - 1;
    ``convention`` is ``"half"`` or ``"interleaved"`` (see the module docstring).
    """

    head_dim: int
    base: float = 10000.0
    convention: str = "half"

    def __post_init__(self) -> None:
        if self.head_dim < 2 or self.head_dim % 2:
            raise FieldError("head_dim", f"RoPE needs an even head_dim >= 2, not {self.head_dim}")
        if self.convention not in ROPE_CONVENTIONS:
            raise FieldError(
                "convention",
                f"convention={self.convention!r}; use 'half' (i with i + d/2) "
                "or 'interleaved' (2i with 2i + 1)"
            )
        if not self.base > 0:
            raise FieldError("base", f"must be positive, not {self.base}")

    @cached_property
    def inverse_frequencies(self) -> np.ndarray:
        """Return ``base^(-2i/head_dim)`` for i = 0 .. head_dim/2 - 1, float64 (computed once)."""
        i = np.arange(self.head_dim // 2, dtype=np.float64)
        freq = float(self.base) ** (-2.0 * i / self.head_dim)
        freq.flags.writeable = False
        return freq

    def angles(self, positions: Array | Sequence[int], *, like: Array) -> Array:
        """Return the rotation angles (..., L, head_dim/2) at ``positions`` (..., L), float64."""
        from array_api_compat import device

        xp = namespace(like)
        pos = xp.astype(_int_array(xp, positions, "positions", like=like), xp.float64)
        inv_freq = self.inverse_frequencies
        if xp is not namespace(inv_freq):
            inv_freq = xp.asarray(inv_freq.tolist(), dtype=xp.float64, device=device(like))
        return xp.expand_dims(pos, axis=-1) * inv_freq

    def cos_sin(self, positions: Array | Sequence[int], *, like: Array) -> tuple[Array, Array]:
        """Return ``(cos, sin)`` of the angles, in ``like``'s dtype, for :meth:`rotate`."""
        xp = namespace(like)
        angles = self.angles(positions, like=like)
        return xp.astype(xp.cos(angles), like.dtype), xp.astype(xp.sin(angles), like.dtype)

    def apply(self, x: Array, positions: Array | Sequence[int]) -> Array:
        """Rotate ``x`` (..., L, head_dim) as if its rows sat at ``positions`` (L,) or (..., L)."""
        cos, sin = self.cos_sin(positions, like=x)
        return self.rotate(x, cos, sin)

    def rotate(self, x: Array, cos: Array, sin: Array) -> Array:
        """Rotate ``x`` (..., L, head_dim) by precomputed ``cos``/``sin`` (..., L, head_dim/2)."""
        xp = namespace(x)
        xs = shape_of(x)
        if xs[-1] != self.head_dim:
            raise FieldError("x", f"has shape {xs}; RoPE was built for head_dim={self.head_dim}")
        if shape_of(cos)[-2] != xs[-2]:
            n = shape_of(cos)[-2]
            raise FieldError("positions", f"give {n} positions; x has {xs[-2]} rows")
        half = self.head_dim // 2
        if self.convention == "half":
            a, b = x[..., :half], x[..., half:]
            return xp.concat([a * cos - b * sin, b * cos + a * sin], axis=-1)
        a, b = x[..., 0::2], x[..., 1::2]
        pairs = xp.stack([a * cos - b * sin, a * sin + b * cos], axis=-1)  # (..., L, d/2, 2)
        return xp.reshape(pairs, shape_of(pairs)[:-2] + (self.head_dim,))


def _int_array(xp, ids, field: str, *, like: Array) -> Array:
    from array_api_compat import device

    if isinstance(ids, range):
        ids = list(ids)
    arr = as_array(ids, field) if not isinstance(ids, (list, tuple)) else None
    if arr is None:
        arr = xp.asarray(ids, dtype=xp.int64, device=device(like))
    elif namespace(arr) is not xp:
        arr = xp.asarray(np.asarray(arr), device=device(like))
    if not xp.isdtype(arr.dtype, "integral"):
        raise FieldError(field, f"must be integers, not {arr.dtype}")
    return arr
