"""Circuits: copy via attention. The head census on a probe (a random run of words written twice or
more) names SmolLM2's strongest induction head; switching the earlier previous-token heads off one
at a time shows which one its keys read (K-composition, measured by ablation).

``copying.py`` holds the numbers (which heads, the induction score from recorded rows),
``words.py`` says them, ``answer.py`` draws them, ``program.py`` writes them, ``practice.py``
checks ``lab/data/connections/circuits.json``. SmolLM2's run (``models.labs.circuits``, a job of
the model worker) comes in as ``measured["copying"]``.
"""

from __future__ import annotations

from attnlab.lab.connections.circuits.answer import MODEL, RUN, SCORE_OPTIONS, probe
from attnlab.lab.connections.controls import Control
from attnlab.lab.connections.live import ask
from attnlab.lab.connections.shape import folder_lab
from attnlab.lab.realmodel.probe import N_WORDS

CONTROLS = (
    Control("seed", "Probe seed", "whole", 0, lo=0, hi=9999,
            hint="Draws the run of words; the same seed gives the same text."),  # fmt: skip
    Control("words", "Words in the run", "whole", 10, lo=4, hi=N_WORDS),
    Control("repeats", "Copies of the run", "whole", 2, lo=2, hi=3),
    Control("how", "Switch a head off by", "choice", "mean",
            options=(("mean", "its mean over the probe"), ("zero", "zero"))),  # fmt: skip
    Control("tested", "Previous-token heads tested", "whole", 3, lo=1, hi=5),
    Control("map", "The map shows", "choice", "induction", options=SCORE_OPTIONS),
)


def asks(values: dict) -> tuple:
    return (ask(RUN, MODEL, text=probe(values)["text"], how=values["how"], tested=values["tested"]),)


LAB = folder_lab(
    __name__,
    controls=CONTROLS,
    ask=asks,
    lede=(
        "An induction head copies: at a token that appeared before, it attends to the token that came "
        "right after it last time, and the model predicts that token again. It cannot do this alone: its "
        "key at each token has to say which token came just before, and an earlier previous-token head "
        "writes that there. Here the census scores every head of SmolLM2 on a random run of words written "
        "more than once, names the strongest induction head, and switches the earlier previous-token heads "
        "off one at a time to find the one its keys read."
    ),
)
