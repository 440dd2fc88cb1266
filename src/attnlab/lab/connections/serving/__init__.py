"""Serving: continuous batching against one request at a time on a model that writes (SmolLM2, or one
found on this computer: the ``model`` choice) with our KV cache, the same
tokens either way, tokens a second and time to first token measured in the same run, as a timeline.

``schedule.py`` is the scheduling rule, ``walk.py`` reads a run's numbers, ``words.py`` says them,
``answer.py`` draws them, ``program.py`` writes them, ``practice.py`` checks
``lab/data/connections/serving.json``. The model's run (``models.labs.serving``, a job of the model
worker) comes in as ``measured["serving"]``.
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control, lines
from attnlab.lab.connections.live import ask
from attnlab.lab.connections.models import model_control
from attnlab.lab.connections.serving.answer import RUN
from attnlab.lab.connections.serving.walk import LETTERS
from attnlab.lab.connections.shape import folder_lab

PROMPTS = (
    "Hi!",
    "The capital of France is",
    "Write a short poem about the sea, the wind over the waves and the boats that come home at night:",
    "Three fruits: apple, banana,",
)

CONTROLS = (
    Control(
        "prompts",
        "Prompt list",
        "text",
        "\n".join(PROMPTS),
        lo=2,
        hi=len(LETTERS),
        max_chars=1200,
        hint=f"One request a line: 2 to {len(LETTERS)} prompts, all arriving at once. Ctrl+Enter runs them.",
    ),
    Control("tokens", "New tokens per request", "whole", 16, lo=4, hi=32),
    Control("batch", "Batch size", "whole", 4, lo=1, hi=len(LETTERS), hint="Requests decoded together."),
    model_control("The model that serves the requests (SmolLM2, or a model found on this computer)."),
)


def asks(values: dict) -> tuple:
    return (
        ask(RUN, values["model"], field="prompts", prompts=lines(values["prompts"]),
            max_new_tokens=values["tokens"], batch=values["batch"]),
    )  # fmt: skip


LAB = folder_lab(
    __name__,
    controls=CONTROLS,
    ask=asks,
    lede=(
        "A decoding step reads every weight of the model to make one token. Served one at a time, each "
        "request waits for all the requests before it, and each step works for one of them. Continuous "
        "batching decodes the running requests together, one row each with its own KV cache and position, "
        "and lets a waiting request join as soon as one leaves: the same tokens, sooner, for more people at "
        "once."
    ),
)
