"""The cross-attention lab's numbers: a toy grid of image patches asks a short text; then both
share one sequence.

The toy world has three kinds of content, ``ball``, ``grass`` and ``sky``: a patch's
feature (3 numbers) says how much of each it shows (a ball in the middle, grass
along the bottom, sky along the top). A word's key (3 numbers) says which
content it names, and its value (3 numbers, red, green and blue) what it writes
in: "red" names the ball and writes red, "the" names nothing. Fixed vectors,
given here, not learned.

Cross-attention: each patch's query is ``sharpness × feature``; the keys and
values are the prompt's words; every patch row is traced with
``engine.single.trace_query`` (the explorer's calculation). Shared attention:
the patches and then the words in one sequence, each position with q = k =
its feature or key and v its value, under plain self-attention
(``engine.attention``), so a patch also attends to the other patches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnlab.engine.attention import AttentionResult, attention
from attnlab.engine.single import QueryTrace, trace_query

BALL_CENTRE, BALL_RADIUS = (0.5, 0.5), 0.26  # in the unit square, y down
GRASS_FROM, SKY_TO = 0.72, 0.3  # grass below this height, sky above that one
WORDS = {  # word: (key: ball, grass, sky), (value: red, green, blue)
    "a": ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "red": ((0.8, 0.0, 0.0), (1.0, 0.0, 0.0)),
    "ball": ((1.0, 0.0, 0.0), (0.5, 0.3, 0.2)),
    "on": ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "green": ((0.0, 0.8, 0.0), (0.0, 1.0, 0.0)),
    "grass": ((0.0, 1.0, 0.0), (0.2, 0.7, 0.1)),
    "in": ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "blue": ((0.0, 0.0, 0.8), (0.0, 0.0, 1.0)),
    "sky": ((0.0, 0.0, 1.0), (0.4, 0.6, 1.0)),
    "the": ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "under": ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
}
PROMPTS = {
    "ball-grass": ("a", "red", "ball", "on", "grass"),
    "ball-sky": ("a", "ball", "in", "blue", "sky"),
    "grass-sky": ("green", "grass", "under", "the", "sky"),
}
CONTENT = ("ball", "grass", "sky")
COLOURS = {"ball": (0.5, 0.3, 0.2), "grass": (0.2, 0.7, 0.1), "sky": (0.4, 0.6, 1.0)}  # what a patch shows


def patch_colour(ft: tuple[float, float, float]) -> list[float]:
    """A patch's value in shared attention: the colour of the content it shows (0 for none)."""
    return [sum(f * COLOURS[c][j] for f, c in zip(ft, CONTENT)) for j in range(3)]


def feature(row: int, col: int, grid: int) -> tuple[float, float, float]:
    """How much ball, grass and sky patch (row, col) of a grid × grid image shows (1 or 0 each)."""
    x, y = (col + 0.5) / grid, (row + 0.5) / grid
    ball = math.dist((x, y), BALL_CENTRE) <= BALL_RADIUS
    grass = not ball and y >= GRASS_FROM
    sky = not ball and y <= SKY_TO
    return (float(ball), float(grass), float(sky))


@dataclass(frozen=True, eq=False)
class CrossWalk:
    grid: int
    prompt: str
    row: int
    col: int
    word: int
    sharpness: float
    words: tuple[str, ...]
    features: list[tuple[float, float, float]]  # patch p = row * grid + col
    traces: list[QueryTrace]  # one per patch, over the words
    shared: AttentionResult  # (grid² + words) × (grid² + words)

    @property
    def patch(self) -> int:
        return self.row * self.grid + self.col

    @property
    def patches(self) -> int:
        return self.grid * self.grid

    def word_map(self) -> list[list[float]]:
        """The chosen word's weight in every patch, as the grid."""
        return [
            [self.traces[r * self.grid + c].weights[self.word] for c in range(self.grid)]
            for r in range(self.grid)
        ]

    def shared_text_share(self) -> float:
        """How much of the chosen patch's attention goes to the words under shared attention."""
        return float(self.shared.weights[self.patch, self.patches :].sum())


def walk(*, grid: int, prompt: str, row: int, col: int, word: int, sharpness: float) -> CrossWalk:
    words = PROMPTS[prompt]
    keys = [WORDS[w][0] for w in words]
    values = [WORDS[w][1] for w in words]
    feats = [feature(r, c, grid) for r in range(grid) for c in range(grid)]
    traces = [trace_query([sharpness * f for f in ft], keys, values, labels=words) for ft in feats]
    # shared: patches, then words, in one sequence; a patch's q is sharpness × feature, its k its feature
    q = np.array([[sharpness * f for f in ft] for ft in feats] + [list(k) for k in keys])
    k = np.array([list(ft) for ft in feats] + [list(k) for k in keys])
    v = np.array([patch_colour(ft) for ft in feats] + [list(v) for v in values])
    return CrossWalk(
        grid=grid,
        prompt=prompt,
        row=row,
        col=col,
        word=word,
        sharpness=sharpness,
        words=words,
        features=feats,
        traces=traces,
        shared=attention(q, k, v),
    )
