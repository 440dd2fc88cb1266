"""The RoPE lab's model part: SmolLM2's own RoPE, as its GGUF file states it, on the lab's q, k pair.

``facts`` (``models.labs.facts.rope``): the base (100,000), the head size (64), the context
length (8,192 positions, the GGUF's ``llama.context_length``) and the pairing (interleaved:
coordinates 2i and 2i + 1 turn together). q and k are the lab's seeded pair, drawn at 64
numbers (``rng(seed).standard_normal((2, 64))``). The score against offset Δ is
``RoPE(q at Δ) · RoPE(k at 0) / √64`` with the engine's RoPE in SmolLM2's pairing, from 0 to
:data:`SPAN` context lengths; past the context, at offset 1.5 × the context length. A pair i
turns ``Δ × base^(−2i/64) / 2π`` times at offset Δ; its wavelength is ``2π × base^(2i/64)``
positions. A pair whose wavelength is longer than the context never makes a full turn inside
it: past the context it reaches angles the model never saw. Interpolation with the lab's s
rotates Δ as Δ / s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnlab.engine.interpolation import rotate_interpolated
from attnlab.engine.positions import RoPE
from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.said import said

MODEL = "smollm2"
SPAN = 4  # the curve goes to this many trained contexts
SAMPLES = 257


def position(x: float) -> str:
    """An offset as the page writes it: whole ones with thousands separators (8,192), others rounded."""
    return f"{int(x):,}" if float(x).is_integer() else fmt.rounded(x)


@dataclass(frozen=True, eq=False)
class OwnRope:
    facts: dict  # base, head_dim, context, convention (the GGUF's)
    seed: int
    factor: int

    @property
    def d(self) -> int:
        return self.facts["head_dim"]

    @property
    def context(self) -> int:
        return self.facts["context"]

    @property
    def past(self) -> int:
        return self.context + self.context // 2

    @property
    def rope(self) -> RoPE:
        return RoPE(self.d, base=self.facts["base"], convention=self.facts["convention"])

    @property
    def pair(self) -> tuple[np.ndarray, np.ndarray]:
        q, k = np.random.default_rng(self.seed).standard_normal((2, self.d))
        return q, k

    def score(self, offset: float, factor: float = 1.0) -> float:
        q, k = self.pair
        qi = rotate_interpolated(self.rope, q[None, :], [offset], factor)[0]
        kj = rotate_interpolated(self.rope, k[None, :], [0], factor)[0]
        return float(qi @ kj) / math.sqrt(self.d)

    def offsets(self) -> list[int]:
        top = SPAN * self.context
        return sorted({round(top * t / (SAMPLES - 1)) for t in range(SAMPLES)})

    @property
    def frequencies(self) -> list[float]:
        return [float(f) for f in self.rope.inverse_frequencies]

    @property
    def wavelengths(self) -> list[float]:
        return [2 * math.pi / f for f in self.frequencies]

    def turns(self, offset: float) -> list[float]:
        return [offset * f / (2 * math.pi) for f in self.frequencies]

    @property
    def unturned(self) -> list[int]:
        """The pairs that never make a full turn inside the context."""
        return [i for i, w in enumerate(self.wavelengths) if w > self.context]

    def data(self) -> dict:
        xs = self.offsets()
        return {
            "base": self.facts["base"],
            "head_dim": self.d,
            "context": self.context,
            "frequencies": self.frequencies,
            "wavelengths": self.wavelengths,
            "unturned": self.unturned,
            "offsets": xs,
            "score": [self.score(x) for x in xs],
            "interpolated": [self.score(x, self.factor) for x in xs],
        }

    # -- words -------------------------------------------------------------------

    def own(self) -> dict:
        w = self.wavelengths
        slow = self.turns(self.context)[-1]
        return said(
            f"SmolLM2's own RoPE, as its GGUF states it: head size {self.d} ({self.d // 2} pairs, turned as "
            f"coordinates 2i and 2i + 1), base {self.facts['base']:,.0f}, context length {self.context:,} "
            f"positions. Its fastest pair turns once every {fmt.rounded(w[0], 1)} positions, its slowest "
            f"once every {w[-1]:,.0f}: over the whole context the slowest turns {fmt.rounded(slow, 3)} of a "
            "turn.",
            head_dim=self.d,
            base=self.facts["base"],
            context=self.context,
            fastest=w[0],
            slowest=w[-1],
            slowest_turns=slow,
        )

    def past_context(self) -> dict:
        n = len(self.unturned)
        first = self.unturned[0] if n else None
        which = f"pairs {first} to {self.d // 2 - 1}" if n > 1 else (f"pair {first}" if n else "no pair")
        return said(
            f"{n} of its {self.d // 2} pairs ({which}) never make a full turn inside its context: past "
            f"{self.context:,} positions, at offset {self.past:,} say, they reach angles the model never "
            "saw. The faster pairs have turned through every angle many times over.",
            unturned=n,
            first=first,
            past=self.past,
        )

    def interpolation(self) -> dict:
        s = self.factor
        scaled = self.past / s
        inside = scaled <= self.context - 1
        return said(
            f"With interpolation s = {s}, offset {self.past:,} turns as {position(scaled)} did: "
            f"{'inside' if inside else 'still past'} the {self.context:,} positions of its context; the "
            f"score of the lab's q, k pair there is {fmt.rounded(self.score(self.past, s))} instead of "
            f"{fmt.rounded(self.score(self.past))}.",
            factor=s,
            scaled=scaled,
            inside=inside,
            score=self.score(self.past, s),
            plain=self.score(self.past),
        )

    def sentences(self) -> list[dict]:
        return [self.own(), self.past_context(), self.interpolation()]

    # -- pictures and table ---------------------------------------------------------

    def pictures(self) -> list[dict]:
        xs = self.offsets()
        plain = [self.score(x) for x in xs]
        interp = [self.score(x, self.factor) for x in xs]
        pairs = list(range(self.d // 2))
        return [
            pic.lines(
                "smollm2-score",
                "SmolLM2's RoPE: score against offset",
                f"The lab's q, k pair at 64 numbers, under SmolLM2's RoPE, from 0 to {SPAN} context lengths "
                f"({SPAN * self.context:,}); plain and with interpolation s = {self.factor}. The marker is "
                f"the end of its context, {self.context:,}.",
                pic.axis("offset", 0, SPAN * self.context),
                pic.axis("score", min(*plain, *interp), max(*plain, *interp)),
                [
                    {"name": "plain", "cls": "now", "xs": xs, "ys": plain, "dots": False},
                    {
                        "name": f"interpolated, s = {self.factor}",
                        "cls": "full",
                        "xs": xs,
                        "ys": interp,
                        "dots": False,
                    },
                ],  # fmt: skip
                marker=self.context,
                marker_text=f"{self.context:,}",
            ),
            pic.lines(
                "smollm2-wavelengths",
                "SmolLM2's pairs: positions per turn",
                f"Each pair's wavelength, on a log scale, beside the context length ({self.context:,}): "
                "pairs above that line never make a full turn inside it.",
                pic.axis("pair i", 0, self.d // 2 - 1),
                pic.axis("positions per turn", min(self.wavelengths), max(self.wavelengths), log=True),
                [
                    {"name": "wavelength", "cls": "now", "xs": pairs, "ys": self.wavelengths},
                    {
                        "name": "context length",
                        "cls": "other",
                        "xs": pairs,
                        "ys": [self.context] * len(pairs),
                        "dots": False,
                    },
                ],  # fmt: skip
            ),
        ]

    def table(self) -> dict:
        return {
            "title": "SmolLM2's pairs",
            "columns": [
                "pair i",
                "frequency",
                "positions per turn",
                f"turns in {self.context:,}",
                f"turns at {self.past:,}",
                f"interpolated, s = {self.factor}",
            ],  # fmt: skip
            "rows": [
                [str(i), fmt.scientific(f, 3), fmt.rounded(w, 1), *(fmt.rounded(x) for x in (a, b, c))]
                for i, (f, w, a, b, c) in enumerate(
                    zip(
                        self.frequencies,
                        self.wavelengths,
                        self.turns(self.context),
                        self.turns(self.past),
                        self.turns(self.past / self.factor),
                    )
                )
            ],
        }
