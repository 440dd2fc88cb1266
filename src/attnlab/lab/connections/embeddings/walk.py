"""The embeddings lab's numbers: a batch's similarity matrix over a temperature τ, its row softmax, the
contrastive (InfoNCE) loss, and the same three steps as attention computes them.

Vectors: sentence i's embedding a_i and its match's b_i, unit length (n of each). Seeded
random ones (``numpy.random.default_rng(seed)``: A = rows of N(0, 1) of size d, normalised;
B = A + noise × N(0, 1), normalised: each match near its sentence), or MiniLM's (384 numbers,
float32 as recorded, made float64 here and divided by their length, which is 1 to float32's
rounding). Everything is float64 and goes through the
engine's attention (``engine.attention``):

    S = A Bᵀ                                 (n, n)  cosine similarities (unit vectors)
    P = attention(A, B, B, scale = 1/τ)      row i: softmax(S[i] / τ); its output P B
    loss = mean_i −ln P[i, i]                InfoNCE with the other matches as negatives
    W = attention(A, B, B, scale = 1/√d)     attention's own scaling: a temperature of √d

As τ → ∞ every share tends to 1/n and the loss to ln n; as τ → 0 the loss tends to 0 when
every sentence's own match is its most similar, and grows without bound otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnlab.engine.attention import attention

TAU_MIN, TAU_MAX, TAU_STEP = 0.01, 1.0, 0.01  # the τ slider
SWEEP = [round(10.0 ** (e / 4), 6) for e in range(-8, 1)]  # τ from 0.01 to 1, 4 steps a decade


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def random_pairs(n: int, d: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = unit(rng.standard_normal((n, d)))
    b = unit(a + noise * rng.standard_normal((n, d)))
    return a, b


def loss_rows(p: np.ndarray) -> np.ndarray:
    """−ln of each row's share on its own match (the diagonal)."""
    return -np.log(np.diagonal(p))


@dataclass(frozen=True, eq=False)
class EmbeddingsWalk:
    source: str  # "random" or "minilm"
    tau: float
    a: np.ndarray  # (n, d) the sentences'
    b: np.ndarray  # (n, d) their matches'
    sentences: list[str]
    matches: list[str]

    @property
    def n(self) -> int:
        return self.a.shape[0]

    @property
    def d(self) -> int:
        return self.a.shape[1]

    @property
    def similarity(self) -> np.ndarray:
        return self.a @ self.b.T  # (n, n)

    def contrastive(self, tau: float | None = None):
        """attention(A, B, B) at scale 1/τ: weights P and the averages P B."""
        return attention(self.a, self.b, self.b, scale=1.0 / (self.tau if tau is None else tau))

    def attention(self):
        """attention(A, B, B) at attention's own scale, 1/√d."""
        return attention(self.a, self.b, self.b)

    def loss(self, tau: float | None = None) -> float:
        return float(loss_rows(self.contrastive(tau).weights).mean())

    def sweep(self) -> list[float]:
        return sorted(set(SWEEP) | {self.tau})

    def correct(self) -> list[bool]:
        """Whether each sentence's largest similarity is its own match's (ties: not)."""
        s = self.similarity
        return [bool(s[i, i] > np.delete(s[i], i).max()) for i in range(self.n)]

    @staticmethod
    def cosines(outputs: np.ndarray, b: np.ndarray) -> list[float]:
        """Each row's average against its own match: cosine(output_i, b_i)."""
        return [float(o @ v / (np.linalg.norm(o) * np.linalg.norm(v))) for o, v in zip(outputs, b)]

    @property
    def chance(self) -> float:
        """ln n: the loss when every share is 1/n (τ → ∞)."""
        return math.log(self.n)


def walk(
    values: dict, sentences: list[str], matches: list[str], recorded: dict | None
) -> EmbeddingsWalk | None:
    """The walk for ``values``; ``recorded``: MiniLM's embeddings (``None``: not in, the source MiniLM)."""
    if values["source"] == "random":
        a, b = random_pairs(len(sentences), values["d"], values["noise"], values["seed"])
    elif recorded is None:
        return None
    else:
        a = unit(np.asarray(recorded["a"], dtype=np.float64))  # unit already, to float32's rounding
        b = unit(np.asarray(recorded["b"], dtype=np.float64))
    return EmbeddingsWalk(values["source"], values["tau"], a, b, sentences, matches)
