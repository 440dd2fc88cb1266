"""Long context: dilution. One query's largest share and entropy over more and more random keys,
with the √d_k scaling on and off. (A needle row in SmolLM2 is a model-backed part for later.)

``walk.py`` computes (``engine.attention``), ``words.py`` says it, ``answer.py`` draws it,
``program.py`` writes it, ``practice.py`` checks ``lab/data/connections/dilution.json``.
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control
from attnlab.lab.connections.dilution import practice
from attnlab.lab.connections.dilution.answer import answer
from attnlab.lab.connections.dilution.program import to_python
from attnlab.lab.connections.dilution.walk import MAX_KEYS
from attnlab.lab.connections.shape import ConnectionLab

CONTROLS = (
    Control("keys", "Number of keys n", "whole", 64, lo=2, hi=MAX_KEYS),
    Control("d_k", "Key size d_k", "whole", 64, lo=1, hi=256),
    Control(
        "scaling", "√d_k scaling", "choice", "on", options=(("on", "on (divide by √d_k)"), ("off", "off"))
    ),
    Control("seed", "Random seed", "whole", 0, lo=0, hi=9999, hint="The query and the keys."),
)

LAB = ConnectionLab(
    controls=CONTROLS,
    answer=answer,
    program=to_python,
    challenges=practice.CHALLENGES,
    check=practice.check,
    lede=(
        "Softmax must give every key some weight, so the more keys a query faces, the harder it is for one "
        "of "
        "them to stand out: attention dilutes. Here one random query meets more and more random keys; the "
        "largest share falls and the weights spread towards uniform. Dividing by √d_k keeps the scores at "
        "unit "
        "variance; without it, the softmax is sharper."
    ),
)
