"""Embeddings: dot-product logits over a temperature. A batch of sentences and their matches, the
similarity matrix divided by τ, its row softmax and the contrastive (InfoNCE) loss, beside attention's
same three steps (÷√d_k, softmax, average of the values), on seeded vectors or MiniLM's embeddings
of the learner's sentences.

``walk.py`` computes (``engine.attention``), ``words.py`` says it, ``answer.py`` draws it,
``program.py`` writes it, ``practice.py`` checks ``lab/data/connections/embeddings.json``.
MiniLM's embeddings come from ``models.labs`` (computed at once: well under a second), passed in
as ``measured["embeddings"]``.
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control, lines
from attnlab.lab.connections.embeddings.answer import RUN
from attnlab.lab.connections.embeddings.walk import TAU_MAX, TAU_MIN, TAU_STEP
from attnlab.lab.connections.live import ask
from attnlab.lab.connections.shape import folder_lab

MODEL = "minilm"
MAX_LINES = 6
TEXT_CHARS = 600

CONTROLS = (
    Control(
        "source",
        "Vectors from",
        "choice",
        "random",
        options=(("random", "seeded random vectors"), ("minilm", "MiniLM: your sentences")),
    ),
    Control(
        "sentences",
        "Sentences",
        "text",
        "A cat sleeps on the sofa.\nThe train leaves at noon.\nShe plays the violin.\n"
        "It is raining in London.",
        lo=2,
        hi=MAX_LINES,
        max_chars=TEXT_CHARS,
        hint="One sentence a line, 2 to 6. Leave the box (or press Ctrl+Enter) to use them.",
    ),
    Control(
        "matches",
        "Their matches",
        "text",
        "A kitten naps on the couch.\nThe midday train departs.\nA woman performs on a fiddle.\n"
        "London is wet today.",
        lo=2,
        hi=MAX_LINES,
        max_chars=TEXT_CHARS,
        lines_from="sentences",
        hint="Line i goes with sentence i: the pair contrastive training pulls together.",
    ),
    Control("tau", "Temperature τ", "number", 0.05, lo=TAU_MIN, hi=TAU_MAX, step=TAU_STEP),
    Control("d", "Dimensions d (random vectors)", "whole", 8, lo=2, hi=64),
    Control("noise", "Noise of each match (random vectors)", "number", 0.4, lo=0.0, hi=2.0, step=0.05),
    Control("seed", "Random seed", "whole", 0, lo=0, hi=9999, hint="The random vectors."),
)


def asks(values: dict) -> tuple:
    if values["source"] != MODEL:
        return ()
    return (
        ask(RUN, MODEL, field="sentences", sentences=lines(values["sentences"]),
            matches=lines(values["matches"])),
    )  # fmt: skip


LAB = folder_lab(
    __name__,
    controls=CONTROLS,
    ask=asks,
    lede=(
        "Contrastive learning trains an encoder so that a sentence's embedding lands closest to its match's: "
        "it scores every pair in a batch by their dot product, divides by a temperature τ and takes a "
        "softmax over each row, and the loss is −ln of the share the right match gets. Attention computes "
        "the same scores, divides them by √d_k and mixes the values with the softmax; only the divisor "
        "differs."
    ),
)
