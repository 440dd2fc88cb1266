"""A paged KV cache (Kwon et al., 2023): fixed-size blocks in one pool, a block table per sequence.

Each sequence's keys and values live in blocks of ``block_size`` positions
(vLLM uses 16) taken from a shared pool as the sequence grows: logical
position p of a sequence is slot ``p % block_size`` of physical block
``table[p // block_size]``. Blocks come from the free list lowest index
first, so sequences that grow in turn interleave in the pool. A sequence
wastes at most one partly filled block (fewer than ``block_size``
positions), where reserving its maximum length up front wastes the rest of
that length. Reading a sequence back gathers its blocks in table order: the
same keys and values, bit for bit, as were appended. Shapes: k and v
(n_new, n_kv_head, head_dim); the pool (num_blocks, block_size, n_kv_head,
head_dim), float64.
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.errors import FieldError


class PagedKVCache:
    """A pool of ``num_blocks`` blocks of ``block_size`` positions, shared by sequences named by ints."""

    def __init__(
        self, *, num_blocks: int, block_size: int = 16, n_kv_head: int = 1, head_dim: int = 1
    ) -> None:
        for name, value in (
            ("num_blocks", num_blocks),
            ("block_size", block_size),
            ("n_kv_head", n_kv_head),
            ("head_dim", head_dim),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise FieldError(name, f"must be a whole number of at least 1, not {value!r}")
        self.block_size = block_size
        self.keys = np.zeros((num_blocks, block_size, n_kv_head, head_dim))
        self.values = np.zeros_like(self.keys)
        self.owner = [-1] * num_blocks  # which sequence holds each block (-1: free)
        self.tables: dict[int, list[int]] = {}
        self.lengths: dict[int, int] = {}

    def free_blocks(self) -> list[int]:
        return [b for b, seq in enumerate(self.owner) if seq == -1]

    def append(self, seq: int, k, v) -> None:
        """Append ``k`` and ``v`` (n_new, n_kv_head, head_dim) to sequence ``seq``, taking blocks as
        needed."""
        k, v = np.asarray(k, dtype=np.float64), np.asarray(v, dtype=np.float64)
        shape = self.keys.shape[2:]
        for name, a in (("k", k), ("v", v)):
            if a.ndim != 3 or a.shape[1:] != shape:
                raise FieldError(name, f"has shape {a.shape}; it must be (n_new, {shape[0]}, {shape[1]})")
        if v.shape[0] != k.shape[0]:
            raise FieldError("v", f"has {v.shape[0]} positions; k has {k.shape[0]}")
        table = self.tables.setdefault(seq, [])
        length = self.lengths.get(seq, 0)
        for i in range(k.shape[0]):
            p = length + i
            if p // self.block_size == len(table):  # 1) the last block is full: take the lowest free one
                free = self.free_blocks()
                if not free:
                    raise FieldError("k", f"needs block {len(table) + 1} of sequence {seq}; the pool is full")
                table.append(free[0])
                self.owner[free[0]] = seq
            block, slot = table[p // self.block_size], p % self.block_size  # 2) write at its slot
            self.keys[block, slot], self.values[block, slot] = k[i], v[i]
        self.lengths[seq] = length + k.shape[0]

    def read(self, seq: int) -> tuple[np.ndarray, np.ndarray]:
        """Sequence ``seq``'s keys and values (S, n_kv_head, head_dim), gathered in table order."""
        table, length = self.tables.get(seq, []), self.lengths.get(seq, 0)
        k = self.keys[table].reshape(-1, *self.keys.shape[2:])[
            :length
        ]  # (blocks * block_size, H, d) cut to S
        v = self.values[table].reshape(-1, *self.values.shape[2:])[:length]
        return k, v

    def waste(self, seq: int) -> int:
        """Positions held by ``seq``'s blocks but unused: fewer than one block."""
        return len(self.tables.get(seq, [])) * self.block_size - self.lengths.get(seq, 0)
