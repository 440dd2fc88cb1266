"""The KV cache: its size per token, layer and head for MHA, GQA and MQA on a model's shapes (SmolLM2's,
or any model that writes: the ``model`` choice), and a paged cache (blocks of 16, a block table, the
waste of contiguous allocation) that reads back the same keys and values.

Live: during the chosen model's generation after the learner's prompt, its caches measured step by
step against their count from the registry's shapes (``generation.py``).

``walk.py`` computes (``engine.paged``), ``words.py`` says it, ``answer.py`` draws it, ``program.py``
writes it, ``practice.py`` checks ``lab/data/connections/kv.json``. The model's shapes and the live
run come from ``models.labs``, passed in as ``measured["shapes"]`` and ``measured["kv"]``.
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control
from attnlab.lab.connections.kv.answer import LIVE, SHAPES
from attnlab.lab.connections.live import ask
from attnlab.lab.connections.models import model_control
from attnlab.lab.connections.shape import folder_lab

MAX_NEW = 16

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
    Control(
        "live",
        "Live generation",
        "choice",
        "off",
        options=(("off", "off"), ("on", "on: measure its caches as it writes")),
    ),
    Control(
        "prompt",
        "Prompt",
        "text",
        "The capital of France is",
        max_chars=400,
        hint="The model continues it when the live generation is on. Press Enter to use it.",
    ),
    Control("new", "New tokens", "whole", 8, lo=1, hi=MAX_NEW),
    model_control("Its shapes size the cache; it writes in the live generation (SmolLM2, or a model found "
                  "on this computer)."),
)


def asks(values: dict) -> tuple:
    model = values["model"]
    shapes = ask(SHAPES, model)
    if values["live"] != "on":
        return (shapes,)
    return (shapes, ask(LIVE, model, field="prompt", prompt=values["prompt"], new_tokens=values["new"]))


LAB = folder_lab(
    __name__,
    controls=CONTROLS,
    ask=asks,
    lede=(
        "During generation every layer keeps the keys and values of every token so far, so the cache grows "
        "with "
        "tokens × heads × layers. Grouped-query and multi-query attention shrink it by letting query heads "
        "share "
        "key/value heads; a paged cache stops it wasting memory by taking fixed-size blocks as each request "
        "grows, found again through a block table."
    ),
)
