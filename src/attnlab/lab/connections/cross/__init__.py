"""Cross-attention: a toy grid of image patches asks a short text (queries from the image, keys and
values from the words), the explorer's Match, Share and Mix across the two, the cross-attention map,
and shared attention beside it: one interleaved sequence under ordinary self-attention.

``walk.py`` computes (``engine.single.trace_query`` per patch, ``engine.attention``), ``words.py``
says it (the explorer's own sentences for one patch), ``answer.py`` draws it, ``program.py``
writes it, ``practice.py`` checks ``lab/data/connections/cross.json``.
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control
from attnlab.lab.connections.cross.walk import PROMPTS
from attnlab.lab.connections.shape import folder_lab

CONTROLS = (
    Control("grid", "Image grid (patches a side)", "whole", 6, lo=2, hi=8),
    Control(
        "prompt", "Text", "choice", "ball-grass", options=tuple((k, " ".join(v)) for k, v in PROMPTS.items())
    ),
    Control("row", "Patch row", "whole", 3, lo=0, hi_from="grid", hi_offset=-1),
    Control("col", "Patch column", "whole", 3, lo=0, hi_from="grid", hi_offset=-1),
    Control("word", "Word mapped", "whole", 2, lo=0, hi=4, hint="Which word's cross-attention map is drawn."),
    Control(
        "sharpness",
        "Query sharpness",
        "number",
        3.0,
        lo=0.5,
        hi=8.0,
        step=0.5,
        hint="Multiplies every patch's query: larger is more decided.",
    ),
)

LAB = folder_lab(
    __name__,
    controls=CONTROLS,
    lede=(
        "Cross-attention is the same Q·Kᵀ softmax with its queries from one sequence and its keys and values "
        "from another: in Stable Diffusion the image latents ask the text embeddings. Here a toy image of a "
        "few patches (ball, grass, sky) asks a five-word text, with given vectors, not learned ones. Beside "
        "it, "
        "shared attention puts patches and words in one sequence under ordinary self-attention."
    ),
)
