"""FlashAttention: the online softmax walked tile by tile under the causal mask, equal to plain causal
attention; memory; a causal sliding window against causal attention. Every comparison is causal.

``walk.py`` computes (the engine's ``tiled_steps``, ``attention``, ``sliding_window_mask``),
``words.py`` says it with claims, ``answer.py`` draws it, ``program.py`` writes it as
Python, ``practice.py`` checks the challenges of ``lab/data/connections/flash.json``.
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control
from attnlab.lab.connections.shape import folder_lab

CONTROLS = (
    Control("n", "Sequence length n", "whole", 64, lo=4, hi=256),
    Control(
        "tile",
        "Tile size",
        "whole",
        lambda v: min(16, v["n"]),
        lo=1,
        hi_from="n",
        hint="Query blocks and key tiles are this many positions wide.",
    ),
    Control("row", "Query row", "whole", lambda v: v["n"] - 1, lo=0, hi_from="n", hi_offset=-1),
    Control(
        "keys",
        "Keys walked so far",
        "whole",
        lambda v: v["n"],
        lo=1,
        hi_from="n",
        hint="The walk stops after the tile holding this many keys, or at its block's last tile.",
    ),
    Control("window", "Sliding window (keys)", "whole", lambda v: min(8, v["n"]), lo=1, hi_from="n"),
    Control("seed", "Random seed", "whole", 0, lo=0, hi=9999, hint="q, k and v are drawn from it."),
)

LAB = folder_lab(
    __name__,
    controls=CONTROLS,
    lede=(
        "FlashAttention computes exactly the attention you know, without ever holding the n × n matrix of "
        "weights: it walks the keys in tiles, keeping for each query a running maximum m, a running sum l "
        "and an output O that it rescales whenever m rises, and divides by l once at the end. Below, one "
        "query block is walked under the causal mask, as in a decoder (query i sees keys 0 to i, so tiles "
        "past the block's last row are skipped), on random q, k and v (d_k = d_v = 4). It is compared with "
        "plain causal attention, and a sliding window, which, unlike tiling, changes what is computed, with "
        "plain causal attention too: causal against causal everywhere."
    ),
)
