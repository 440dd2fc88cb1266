"""The MoE lab's numbers: a router's top-k over experts beside attention's dense softmax over positions.

Inputs are seeded: ``rng = numpy.random.default_rng(seed)``, then ``x =
rng.standard_normal((tokens, D))`` (D = 4) and the router's weights ``w_r =
rng.standard_normal((D, experts))``; the router's logits are ``scale * x @ w_r``
(``engine.moe.route``). The attention beside it is one head's self-attention
over the same tokens with q = k = x (``engine.attention``): its weights over
positions are the dense softmax a router's top-k replaces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.engine.attention import AttentionResult, attention
from attnlab.engine.moe import Routing, route

D = 4


@dataclass(frozen=True, eq=False)
class MoEWalk:
    tokens: int
    experts: int
    k: int
    token: int
    scale: float
    seed: int
    x: np.ndarray
    w_r: np.ndarray
    logits: np.ndarray
    routing: Routing
    attention: AttentionResult

    def kept_with(self, k: int) -> float:
        """The chosen token's probability kept by its top ``k`` experts."""
        return float(route(self.logits, k).kept[self.token])


def walk(*, tokens: int, experts: int, k: int, token: int, scale: float, seed: int) -> MoEWalk:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((tokens, D))
    w_r = rng.standard_normal((D, experts))
    logits = scale * (x @ w_r)  # (tokens, experts)
    return MoEWalk(
        tokens=tokens,
        experts=experts,
        k=k,
        token=token,
        scale=scale,
        seed=seed,
        x=x,
        w_r=w_r,
        logits=logits,
        routing=route(logits, k),
        attention=attention(x, x, x),
    )
