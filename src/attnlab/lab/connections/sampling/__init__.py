"""Decoding and sampling: the next-token softmax at a temperature, shown as attention's √d_k scaling,
with its two limits (T → 0: argmax; T → ∞: uniform), on seeded logits or SmolLM2's own after the
learner's text.

``walk.py`` computes, ``words.py`` says it, ``answer.py`` draws it, ``program.py`` writes it,
``practice.py`` checks ``lab/data/connections/sampling.json``. SmolLM2's logits come from a trace
job of the text (``models.labs``), passed in as ``measured["logits"]``.
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control
from attnlab.lab.connections.live import ask
from attnlab.lab.connections.sampling.answer import RUN
from attnlab.lab.connections.sampling.walk import MAX_K, T_MAX, T_MIN, T_STEP
from attnlab.lab.connections.shape import folder_lab

MODEL = "smollm2"
TEXT_CHARS = 400

CONTROLS = (
    Control(
        "source",
        "Logits from",
        "choice",
        "random",
        options=(("random", "seeded random numbers"), ("smollm2", "SmolLM2, after your text")),
    ),
    Control(
        "text",
        "Your text",
        "text",
        "The capital of France is",
        max_chars=TEXT_CHARS,
        hint="SmolLM2 reads it when the logits come from SmolLM2. Press Enter to use it.",
    ),
    Control("k", "Candidates k (the largest logits)", "whole", 10, lo=2, hi=MAX_K),
    Control("temperature", "Temperature T", "number", 1.0, lo=T_MIN, hi=T_MAX, step=T_STEP),
    Control("seed", "Random seed", "whole", 0, lo=0, hi=9999, hint="The random logits."),
)


def asks(values: dict) -> tuple:
    if values["source"] != MODEL:
        return ()
    return (ask(RUN, MODEL, field="text", text=values["text"], top=MAX_K),)


LAB = folder_lab(
    __name__,
    controls=CONTROLS,
    ask=asks,
    lede=(
        "A language model ends each step with a softmax over its vocabulary's logits, and sampling draws the "
        "next token from it. Dividing the logits by a temperature T first is the same move attention makes "
        "when it divides q·k by √d_k: small T sharpens the softmax towards the single largest logit, large T "
        "flattens it towards uniform. Here the k largest logits are seeded numbers or SmolLM2's own, after "
        "your text."
    ),
)
