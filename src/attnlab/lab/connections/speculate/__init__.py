"""Speculative decoding: a model that writes as the target (SmolLM2, or one found on this computer: the
``model`` choice), a prompt-lookup draft, the same tokens as plain greedy
decoding in fewer forward passes, measured in the same run; and the sampling rule on a toy vocabulary,
where the output distribution is exactly the target's.

``draft.py`` is the greedy rule (drafting and verifying), ``toy.py`` the sampling rule in fractions,
``walk.py`` reads a run's numbers, ``words.py`` says them, ``answer.py`` draws them, ``program.py``
writes them, ``practice.py`` checks ``lab/data/connections/speculate.json``. The model's run
(``models.labs.speculate``, a job of the model worker) comes in as ``measured["speculate"]``.
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control
from attnlab.lab.connections.live import ask
from attnlab.lab.connections.models import model_control
from attnlab.lab.connections.shape import folder_lab
from attnlab.lab.connections.speculate.answer import RUN
from attnlab.lab.connections.speculate.toy import TOKENS

PROMPT_CHARS = 600
PROMPT = (
    "Monday: wake up, eat breakfast, go to work, come home. Tuesday: wake up, eat breakfast, go to work, "
    "come home. Wednesday:"
)
P_WEIGHTS, Q_WEIGHTS = (5, 2, 2, 1), (2, 4, 1, 3)


def _weights(name: str, who: str, defaults: tuple[int, ...]) -> tuple[Control, ...]:
    return tuple(
        Control(f"{name}{i + 1}", f"{who}: weight of {c}", "whole", d, lo=1, hi=9)
        for i, (c, d) in enumerate(zip(TOKENS, defaults))
    )


CONTROLS = (
    Control(
        "prompt",
        "Your prompt",
        "text",
        PROMPT,
        max_chars=PROMPT_CHARS,
        hint="The model continues it. Text that repeats itself gives the draft something to copy. Press "
        "Enter to run it.",
    ),
    Control("tokens", "New tokens", "whole", 24, lo=4, hi=64),
    Control("ngram", "Look-up length n", "whole", 2, lo=1, hi=4, hint="The last n tokens, found earlier."),
    Control("draft", "Draft length k", "whole", 4, lo=1, hi=8, hint="Tokens drafted for each pass."),
    *_weights("p", "Target p", P_WEIGHTS),
    *_weights("q", "Draft q", Q_WEIGHTS),
    model_control("The target: it checks every drafted token (SmolLM2, or a model found on this computer)."),
)


def asks(values: dict) -> tuple:
    return (
        ask(RUN, values["model"], field="prompt", prompt=values["prompt"], max_new_tokens=values["tokens"],
            ngram=values["ngram"], draft=values["draft"]),
    )  # fmt: skip


LAB = folder_lab(
    __name__,
    controls=CONTROLS,
    ask=asks,
    lede=(
        "Decoding makes one token a forward pass, and each pass reads every weight. Speculative decoding "
        "guesses several tokens cheaply and lets the model check them all in one pass: here the guess is "
        "the text itself (the tokens that followed the last few tokens' earlier occurrence), the model keeps "
        "each guess that is its own choice, and the output is exactly what plain decoding gives. Sampling "
        "uses a rule that keeps the target's distribution exactly: try it on four tokens below."
    ),
)
