"""Mixture of experts: a router's softmax over experts, its top k kept and renormalised, the load per
expert, beside attention's dense softmax over positions.

``walk.py`` computes (``engine.moe.route``, ``engine.attention``), ``words.py`` says it,
``answer.py`` draws it, ``program.py`` writes it, ``practice.py`` checks
``lab/data/connections/moe.json``.
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control
from attnlab.lab.connections.shape import folder_lab

CONTROLS = (
    Control("tokens", "Tokens in the batch", "whole", 8, lo=1, hi=32),
    Control("experts", "Experts E", "whole", 8, lo=2, hi=16),
    Control(
        "k",
        "Top k",
        "whole",
        lambda v: min(2, v["experts"]),
        lo=1,
        hi_from="experts",
        hint="Each token goes to this many experts.",
    ),
    Control("token", "Token shown", "whole", 0, lo=0, hi_from="tokens", hi_offset=-1),
    Control(
        "scale",
        "Router sharpness",
        "number",
        1.0,
        lo=0.1,
        hi=5.0,
        step=0.1,
        hint="Multiplies the router's logits: larger is more decided.",
    ),
    Control("seed", "Random seed", "whole", 0, lo=0, hi=9999, hint="The tokens and the router's weights."),
)

LAB = folder_lab(
    __name__,
    controls=CONTROLS,
    lede=(
        "A mixture-of-experts layer routes each token with a softmax, as attention weighs positions with "
        "one: "
        "a learned linear layer scores the experts, the softmax turns the scores into probabilities, and "
        "only "
        "the top k experts are kept, their gates renormalised to add up to 1. Attention keeps every "
        "position; "
        "the router keeps k."
    ),
)
