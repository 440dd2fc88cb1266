"""KV cache: the keys and values of every token seen so far, for one attention layer.

Decoding one token at a time appends that token's k and v (after RoPE) and
attends from its query to every cached key. The query is the *last* row of
the sequence, so the causal mask must be aligned bottom-right (query i sees
keys j <= i + S - L); a top-left mask would let the new token see only the
first key (pitfall 3 in ENGINE-NOTES.md). ``multi_head_attention`` refuses
``causal="top_left"`` together with a non-empty cache for that reason.
"""

from __future__ import annotations

from attnlab.engine._arrays import Array, namespace, shape_of


class KVCache:
    """Growing keys and values of shape (..., n_kv_head, S, d_head) for one layer.

    Mutable by design: :meth:`append` adds the new tokens' keys and values
    along the sequence axis (-2) and returns the whole cache. Use one cache per
    layer (:func:`new_caches`).
    """

    __slots__ = ("keys", "values")

    def __init__(self) -> None:
        self.keys: Array | None = None
        self.values: Array | None = None

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
            self.keys, self.values = k, v
            return k, v
        for field, old, new in (("k", self.keys, k), ("v", self.values, v)):
            os_, ns = shape_of(old), shape_of(new)
            if os_[:-2] != ns[:-2] or os_[-1] != ns[-1]:
                raise ValueError(
                    f"{field} has shape {ns}; the cache holds {os_} (only the sequence "
                    "axis, second to last, may differ)"
                )
        xp = namespace(self.keys, k)
        self.keys = xp.concat([self.keys, k], axis=-2)
        self.values = xp.concat([self.values, v], axis=-2)
        return self.keys, self.values


def new_caches(n_layer: int) -> list[KVCache]:
    """Return ``n_layer`` empty caches, one per layer of a decoder stack."""
    return [KVCache() for _ in range(n_layer)]
