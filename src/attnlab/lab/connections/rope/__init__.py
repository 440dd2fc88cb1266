"""RoPE, further: a q, k pair's score against their offset (which alone enters), what lies past the
training length, and position interpolation's rescaling, computed with the engine's RoPE.
A model's own RoPE (``smollm2.py``; SmolLM2's, or that of the ``model`` chosen: any model found on
this computer whose positions are rotary): its frequencies from its files, the score against
offset past its context length, and interpolation.

``walk.py`` computes (``engine.positions.RoPE``, ``engine.interpolation``), ``words.py`` says it,
``answer.py`` draws it, ``program.py`` writes it, ``practice.py`` checks
``lab/data/connections/rope.json``. The model's RoPE facts come from ``models.labs``, passed in as
``measured["rope"]``.
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control
from attnlab.lab.connections.live import ask
from attnlab.lab.connections.models import model_control, rope_options
from attnlab.lab.connections.rope.answer import RUN
from attnlab.lab.connections.shape import folder_lab

CONTROLS = (
    Control(
        "head_dim", "Head size d", "choice", "64", options=tuple((d, d) for d in ("16", "32", "64", "128"))
    ),
    Control("base", "Base", "choice", "10000", options=(("10000", "10,000"), ("100000", "100,000"))),
    Control("train", "Training length", "whole", 512, lo=64, hi=2048, step=64),
    Control("factor", "Interpolation s", "whole", 2, lo=1, hi=8, hint="Positions are divided by s."),
    Control("offset", "Offset of q from k", "whole", 700, lo=0, hi=8192),
    Control("seed", "Random seed", "whole", 0, lo=0, hi=9999, hint="q and k."),
    Control(
        "own",
        "A model's own RoPE",
        "choice",
        "off",
        options=(("off", "off"), ("on", "on: its frequencies, from its files")),
    ),
    model_control("Whose RoPE: SmolLM2's, or a model found on this computer whose positions are rotary.",
                  rope_options),  # fmt: skip
)


def asks(values: dict) -> tuple:
    return (ask(RUN, values["model"]),) if values["own"] == "on" else ()

LAB = folder_lab(
    __name__,
    controls=CONTROLS,
    ask=asks,
    lede=(
        "RoPE rotates each pair of a query's and a key's coordinates by an angle proportional to its "
        "position, so "
        "their dot product depends on the offset between them only. Past the training length the slow pairs "
        "turn "
        "further than the model ever saw; position interpolation divides every position by s so that longer "
        "offsets reuse the trained angles."
    ),
)
