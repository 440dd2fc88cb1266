"""The KV-cache lab's numbers: the cache's size for MHA, GQA and MQA on a model's shapes, and a paged cache.

Sizes count K and V: ``2 × layers × key/value heads × head size × bytes`` per
token. SmolLM2's shapes are the model registry's (``models/registry.py``, the one
definition), passed in by whoever serves the lab (``measured["shapes"]``,
:func:`shapes_of`): its 9 query heads share 3 key/value heads (GQA); MHA would
give each query head its own, MQA one for all. Without them only the paged cache
is computed. The paged cache (``engine.paged``, blocks of
:data:`BLOCK` positions) holds ``requests`` requests whose lengths are drawn
from ``numpy.random.default_rng(seed)`` (1 to :data:`MAX_LEN`); they grow in
turn, :data:`CHUNK` positions at a time, so their blocks interleave in the
pool. Their keys and values are random (one head of 2 numbers): what matters
is that each request reads back exactly what it wrote.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnlab.engine.paged import PagedKVCache


@dataclass(frozen=True)
class Shapes:
    layers: int
    query_heads: int
    kv_heads: int
    head_dim: int
    called: str = "SmolLM2"  # how the sentences name the model


def shapes_of(facts: dict) -> Shapes:
    """The shapes of a model as the registry states them (``models.labs.facts.shapes``), and how the
    sentences name it (its ``called``)."""
    return Shapes(
        layers=facts["layers"],
        query_heads=facts["query_heads"],
        kv_heads=facts["kv_heads"],
        head_dim=facts["head_dim"],
        called=facts.get("called") or facts.get("title") or "the model",
    )


BLOCK = 16  # positions per block, as vLLM
MAX_LEN = 256  # what contiguous allocation reserves for each request
CHUNK = 8  # positions a request appends per turn
LETTERS = "ABCDEFGH"


def per_token(shapes: Shapes, bytes_each: int) -> dict[str, int]:
    """Bytes of K and V per token, all layers: MHA (a head per query head), GQA (the model's), MQA (one)."""
    unit = 2 * shapes.layers * shapes.head_dim * bytes_each
    return {"mha": unit * shapes.query_heads, "gqa": unit * shapes.kv_heads, "mqa": unit}


@dataclass(frozen=True, eq=False)
class KVWalk:
    tokens: int
    bytes_each: int
    requests: int
    seed: int
    lengths: list[int]
    cache: PagedKVCache
    written: dict[int, tuple[np.ndarray, np.ndarray]]
    shapes: Shapes | None = None  # the model's, when passed in

    def sizes(self) -> dict[str, int]:
        assert self.shapes is not None
        return {kind: b * self.tokens for kind, b in per_token(self.shapes, self.bytes_each).items()}

    def read_back_identical(self) -> list[bool]:
        out = []
        for r in range(self.requests):
            k, v = self.cache.read(r)
            out.append(bool(np.array_equal(k, self.written[r][0]) and np.array_equal(v, self.written[r][1])))
        return out

    def paged_waste(self) -> list[int]:
        return [self.cache.waste(r) for r in range(self.requests)]

    def contiguous_waste(self) -> list[int]:
        return [MAX_LEN - n for n in self.lengths]


def walk(*, tokens: int, precision: str, requests: int, seed: int, shapes: Shapes | None = None) -> KVWalk:
    rng = np.random.default_rng(seed)
    lengths = [int(n) for n in rng.integers(1, MAX_LEN + 1, requests)]
    written = {r: rng.standard_normal((2, n, 1, 2)) for r, n in enumerate(lengths)}
    cache = PagedKVCache(num_blocks=sum(math.ceil(n / BLOCK) for n in lengths), block_size=BLOCK, head_dim=2)
    done = [0] * requests
    while any(d < n for d, n in zip(done, lengths)):  # the requests grow in turn
        for r, n in enumerate(lengths):
            stop = min(n, done[r] + CHUNK)
            if stop > done[r]:
                cache.append(r, written[r][0][done[r] : stop], written[r][1][done[r] : stop])
                done[r] = stop
    return KVWalk(
        tokens=tokens,
        bytes_each=int(precision),
        requests=requests,
        seed=seed,
        lengths=lengths,
        cache=cache,
        written={r: (kv[0], kv[1]) for r, kv in written.items()},
        shapes=shapes,
    )
