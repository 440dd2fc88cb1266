"""State-space models: causal linear attention as a matrix and as a recurrence, a selective scan and its
lower-triangular "dual" matrix, and what a fixed-size state cannot copy, against softmax attention.

``walk.py`` computes (``engine.recurrence``, ``engine.scan``, ``engine.attention``), ``words.py`` says
it, ``answer.py`` draws it, ``program.py`` writes it, ``practice.py`` checks
``lab/data/connections/ssm.json``.
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control
from attnlab.lab.connections.shape import folder_lab

CONTROLS = (
    Control("n", "Sequence length n", "whole", 12, lo=2, hi=32),
    Control(
        "step",
        "Step t",
        "whole",
        lambda v: v["n"],
        lo=1,
        hi_from="n",
        hint="The recurrence's state after this many tokens.",
    ),
    Control(
        "d",
        "Copy task: key size d",
        "whole",
        4,
        lo=2,
        hi=16,
        hint="Linear attention's state for the copy task is d × 8 numbers.",
    ),
    Control(
        "seed", "Random seed", "whole", 0, lo=0, hi=9999, hint="q, k, v, the scan's input and the tokens."
    ),
)

LAB = folder_lab(
    __name__,
    controls=CONTROLS,
    lede=(
        "Replace softmax's exp(q·k) by a product of features φ(q)·φ(k) and causal attention's sum over the "
        "past factors through a fixed-size state: the same numbers come from an n × n matrix or from a "
        "recurrence that costs O(n). A selective state-space scan is such a recurrence, with input-dependent "
        "decays; unrolled, it is a lower-triangular matrix like attention's. The price of the fixed state is "
        "what it cannot copy back exactly."
    ),
)
