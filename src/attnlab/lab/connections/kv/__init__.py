"""The KV cache: its size per token, layer and head for MHA, GQA and MQA on SmolLM2's shapes, and a
paged cache (blocks of 16, a block table, the waste of contiguous allocation) that reads back the
same keys and values.

``walk.py`` computes (``engine.paged``), ``words.py`` says it, ``answer.py`` draws it, ``program.py``
writes it, ``practice.py`` checks ``lab/data/connections/kv.json``. Live during a real SmolLM2
generation is a model-backed part for later (it belongs with ``models``).
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control
from attnlab.lab.connections.kv import practice
from attnlab.lab.connections.kv.answer import answer
from attnlab.lab.connections.kv.program import to_python
from attnlab.lab.connections.shape import ConnectionLab

CONTROLS = (
    Control("tokens", "Tokens in the cache", "whole", 1024, lo=1, hi=8192, step=1),
    Control(
        "precision",
        "Precision",
        "choice",
        "2",
        options=(("2", "16-bit (2 bytes)"), ("4", "32-bit (4 bytes)"), ("1", "8-bit (1 byte)")),
    ),
    Control("requests", "Requests in the paged cache", "whole", 4, lo=1, hi=8),
    Control(
        "seed", "Random seed", "whole", 0, lo=0, hi=9999, hint="The requests' lengths (1 to 256 tokens)."
    ),
)

LAB = ConnectionLab(
    controls=CONTROLS,
    answer=answer,
    program=to_python,
    challenges=practice.CHALLENGES,
    check=practice.check,
    lede=(
        "During generation every layer keeps the keys and values of every token so far, so the cache grows "
        "with "
        "tokens × heads × layers. Grouped-query and multi-query attention shrink it by letting query heads "
        "share "
        "key/value heads; a paged cache stops it wasting memory by taking fixed-size blocks as each request "
        "grows, found again through a block table."
    ),
)
