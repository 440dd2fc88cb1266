"""KV cache: the keys and values of every token seen so far, for one attention layer.

Decoding one token at a time appends that token's k and v (after RoPE) and
attends from its query to every cached key. The query is the *last* row of
the sequence, so the causal mask must be aligned bottom-right (query i sees
keys j <= i + S - L); a top-left mask would let the new token see only the
first key (a known pitfall: docs/engine-conventions.md, "KV cache and
positions"). ``multi_head_attention`` refuses ``causal="top_left"`` together
with a non-empty cache for that reason.
"""

from __future__ import annotations

import numpy as np

from attnlab.engine._arrays import Array, namespace, shape_of
from attnlab.engine.errors import FieldError

_FIRST_CAPACITY = 64  # NumPy buffers start with room for this many tokens, then double


class KVCache:
    """Growing keys and values of shape (..., n_kv_head, S, d_head) for one layer.

    Mutable by design: :meth:`append` adds the new tokens' keys and values
    along the sequence axis (-2) and returns the whole cache. Use one cache per
    layer (:func:`new_caches`).

    NumPy arrays go into preallocated buffers that double when full, so a
    decoding step writes one token in place instead of copying the whole cache;
    ``keys``/``values`` are views of the filled part. A view handed out earlier
    keeps showing the tokens it had (later tokens go past its end). Other
    namespaces concatenate.
    """

    __slots__ = ("keys", "values", "_k_buf", "_v_buf")

    def __init__(self) -> None:
        self.keys: Array | None = None
        self.values: Array | None = None
        self._k_buf: np.ndarray | None = None
        self._v_buf: np.ndarray | None = None

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        shape = shape_of(self.keys) if self.keys is not None else None
        return f"KVCache(length={self.length}, keys={shape})"

    @property
    def length(self) -> int:
        """Number of cached tokens S (0 when empty)."""
        return 0 if self.keys is None else shape_of(self.keys)[-2]

    def append(self, k: Array, v: Array) -> tuple[Array, Array]:
        """Add ``k`` (..., n_kv_head, S_new, d_head) and ``v`` (..., n_kv_head, S_new, d_v).

        Return the full cached ``(keys, values)``. The leading dimensions and
        head sizes must match what is already cached.
        """
        if self.keys is None:
            if type(k) is np.ndarray and type(v) is np.ndarray:
                n = k.shape[-2]
                self._k_buf, self._v_buf = self._grow(k[..., :0, :], n), self._grow(v[..., :0, :], n)
                return self._write(k, v, 0)
            self.keys, self.values = k, v
            return k, v
        for field, old, new in (("k", self.keys, k), ("v", self.values, v)):
            os_, ns = shape_of(old), shape_of(new)
            if os_[:-2] != ns[:-2] or os_[-1] != ns[-1]:
                raise FieldError(
                    field,
                    f"has shape {ns}; the cache holds {os_} (only the sequence "
                    "axis, second to last, may differ)"
                )
        if self._k_buf is not None and type(k) is np.ndarray and type(v) is np.ndarray:
            return self._write(k, v, shape_of(self.keys)[-2])
        xp = namespace(self.keys, k)
        self.keys = xp.concat([self.keys, k], axis=-2)
        self.values = xp.concat([self.values, v], axis=-2)
        return self.keys, self.values

    def truncate(self, length: int) -> None:
        """Keep the first ``length`` cached tokens (0 <= length <= :attr:`length`); the next
        :meth:`append` writes after them. A speculative step's rejected tokens go this way."""
        if not 0 <= length <= self.length:
            raise FieldError("length", f"is {length}; the cache holds {self.length} tokens")
        if self.keys is not None:
            self.keys = self.keys[..., :length, :]
            self.values = self.values[..., :length, :]

    def extend(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Room for ``n`` more tokens in a cache that holds NumPy buffers: the whole ``(keys, values)``
        (..., S + n, d), whose last ``n`` tokens the caller writes (until then they hold anything).
        Compiled code that computes the new keys in place (the fast path's decoding block) uses it."""
        if self._k_buf is None:
            raise FieldError("cache", "holds no NumPy buffers yet; append the first tokens")
        past = self.length
        end = past + n
        if end > self._k_buf.shape[-2]:
            self._k_buf = self._grow(self._k_buf[..., :past, :], end)
            self._v_buf = self._grow(self._v_buf[..., :past, :], end)
        self.keys = self._k_buf[..., :end, :]
        self.values = self._v_buf[..., :end, :]
        return self.keys, self.values

    def _write(self, k: np.ndarray, v: np.ndarray, past: int) -> tuple[np.ndarray, np.ndarray]:
        """Copy ``k``, ``v`` into the buffers after ``past`` tokens (growing them first if needed)."""
        end = past + k.shape[-2]
        dtype = np.result_type(self._k_buf, k, self._v_buf, v)
        if end > self._k_buf.shape[-2] or dtype != self._k_buf.dtype or dtype != self._v_buf.dtype:
            self._k_buf = self._grow(self._k_buf[..., :past, :], end, dtype)
            self._v_buf = self._grow(self._v_buf[..., :past, :], end, dtype)
        self._k_buf[..., past:end, :] = k
        self._v_buf[..., past:end, :] = v
        self.keys = self._k_buf[..., :end, :]
        self.values = self._v_buf[..., :end, :]
        return self.keys, self.values

    @staticmethod
    def _grow(filled: np.ndarray, need: int, dtype=None) -> np.ndarray:
        """A buffer holding ``filled`` with room for ``need`` tokens or more (doubling)."""
        capacity = max(_FIRST_CAPACITY, need)
        capacity = 1 << (capacity - 1).bit_length()
        past = filled.shape[-2]
        shape = filled.shape[:-2] + (capacity, filled.shape[-1])
        buf = np.empty(shape, dtype=dtype or filled.dtype)
        if past:
            buf[..., :past, :] = filled
        return buf


def new_caches(n_layer: int) -> list[KVCache]:
    """Return ``n_layer`` empty caches, one per layer of a decoder stack."""
    return [KVCache() for _ in range(n_layer)]
