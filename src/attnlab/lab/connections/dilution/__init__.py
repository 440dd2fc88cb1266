"""Long context: dilution. One query's largest share and entropy over more and more random keys,
with the √d_k scaling on and off; and a needle row in SmolLM2 at 16 to 256 tokens (``needle.py``).

``walk.py`` computes (``engine.attention``), ``words.py`` says it, ``answer.py`` draws it,
``program.py`` writes it, ``practice.py`` checks ``lab/data/connections/dilution.json``. The needle's
rows come from trace jobs (``models.labs``), passed in as ``measured["needle"]``.
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control
from attnlab.lab.connections.dilution.answer import RUN
from attnlab.lab.connections.dilution.needle import MODEL, WORDS, arguments
from attnlab.lab.connections.dilution.walk import MAX_KEYS
from attnlab.lab.connections.live import ask
from attnlab.lab.connections.shape import folder_lab

CONTROLS = (
    Control("keys", "Number of keys n", "whole", 64, lo=2, hi=MAX_KEYS),
    Control("d_k", "Key size d_k", "whole", 64, lo=1, hi=256),
    Control(
        "scaling", "√d_k scaling", "choice", "on", options=(("on", "on (divide by √d_k)"), ("off", "off"))
    ),
    Control("seed", "Random seed", "whole", 0, lo=0, hi=9999, hint="The query and the keys."),
    Control(
        "needle",
        "Needle in SmolLM2",
        "choice",
        "off",
        options=(("off", "off"), ("on", "on: trace texts of 16 to 256 tokens")),
    ),
    Control("word", "Needle word", "choice", WORDS[0], options=tuple((w, w) for w in WORDS)),
)


def asks(values: dict) -> tuple:
    if values["needle"] != "on":
        return ()
    return (ask(RUN, MODEL, **arguments(values["word"])),)

LAB = folder_lab(
    __name__,
    controls=CONTROLS,
    ask=asks,
    lede=(
        "Softmax must give every key some weight, so the more keys a query faces, the harder it can be "
        "for one of them to stand out: attention dilutes. Here one random query meets more and more "
        "random keys. Dividing by √d_k keeps the scores at unit variance; without it every score is √d_k "
        "times larger and the softmax sharper, so one key may keep most of the weight however many keys "
        "there are. The sentences below say which of the two the numbers show."
    ),
)
