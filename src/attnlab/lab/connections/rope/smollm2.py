"""The RoPE lab's model part: a model's own RoPE, as its files state it, on the lab's q, k pair.

The model is the lab's ``model`` choice (SmolLM2 by default, or any model found on this computer
whose positions are rotary). ``facts`` (``models.labs.facts.rope``): the base (SmolLM2: 100,000),
the head size d (64), the context length (8,192 positions, the GGUF's ``llama.context_length``),
the pairing (SmolLM2's GGUF: interleaved, coordinates 2i and 2i + 1 turn together; a Hugging Face
folder's: half, i with i + d/2) and the inverse frequencies its layers turn with (``base^(−2i/d)``,
stretched where the files give a scaling: Llama 3's, say). q and k are the lab's seeded pair, drawn
at d numbers (``rng(seed).standard_normal((2, d))``). The score against offset Δ is
``RoPE(q at Δ) · RoPE(k at 0) / √d`` with the engine's RoPE in the model's pairing and frequencies,
from 0 to :data:`SPAN` context lengths; past the context, at offset 1.5 × the context length. A
pair i with frequency f turns ``Δ × f / 2π`` times at offset Δ; its wavelength is ``2π / f``
positions. A pair whose wavelength is longer than the context never makes a full turn inside it:
past the context it reaches angles the model never saw. Interpolation with the lab's s rotates Δ
as Δ / s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from attnlab.engine.interpolation import rotate_interpolated
from attnlab.engine.positions import RoPE
from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.said import said

SPAN = 4  # the curve goes to this many trained contexts
SAMPLES = 257


def position(x: float) -> str:
    """An offset as the page writes it: whole ones with thousands separators (8,192), others rounded."""
    return f"{int(x):,}" if float(x).is_integer() else fmt.rounded(x)


PAIRINGS = {"interleaved": "coordinates 2i and 2i + 1", "half": "coordinates i and i + {half}"}
FILES = {"gguf": "GGUF", "safetensors": "config"}


@dataclass(frozen=True)
class GivenRoPE(RoPE):
    """RoPE turning with the inverse frequencies a model's files state (``given``), scaling included."""

    given: tuple[float, ...] = ()

    @cached_property
    def inverse_frequencies(self) -> np.ndarray:
        out = np.asarray(self.given, dtype=np.float64) if self.given else RoPE.inverse_frequencies.func(self)
        out.flags.writeable = False
        return out


@dataclass(frozen=True, eq=False)
class OwnRope:
    facts: dict  # base, head_dim, context, convention, frequencies (the model's files')
    seed: int
    factor: int

    @property
    def called(self) -> str:
        """How the sentences name the model ("SmolLM2")."""
        return self.facts.get("called") or self.facts.get("title") or "the model"

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
        given = tuple(self.facts.get("frequencies") or ())
        return GivenRoPE(self.d, base=self.facts["base"], convention=self.facts["convention"], given=given)

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
        pairing = PAIRINGS[self.facts["convention"]].format(half=self.d // 2)
        source = FILES.get(self.facts.get("source") or "gguf", "files")
        scaling = self.facts.get("scaling")
        scaled = f", its frequencies stretched by its {scaling} scaling" if scaling else ""
        return said(
            f"{self.called}'s own RoPE, as its {source} states it: head size {self.d} ({self.d // 2} pairs, "
            f"turned as {pairing}), base {self.facts['base']:,.0f}{scaled}, context length "
            f"{self.context:,} positions. Its fastest pair turns once every {fmt.rounded(w[0], 1)} "
            f"positions, its slowest once every {w[-1]:,.0f}: over the whole context the slowest turns "
            f"{fmt.rounded(slow, 3)} of a turn.",
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
                f"{self.called}'s RoPE: score against offset",
                f"The lab's q, k pair at {self.d} numbers, under {self.called}'s RoPE, from 0 to {SPAN} "
                "context lengths "
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
                f"{self.called}'s pairs: positions per turn",
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
            "title": f"{self.called}'s pairs",
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
