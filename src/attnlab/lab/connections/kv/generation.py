"""The KV-cache lab's live part: a model's generation's caches as measured, against their count from shapes.

The run (``models.labs.kv.generation_cache``) records, after the prompt and after each new
token, the tokens cached and the bytes of every layer's ``keys`` and ``values`` arrays
(``nbytes``). Here each step's count from the registry's shapes, ``2 × layers × key/value
heads × head size × bytes per number × tokens``, sits beside the measured bytes, and the MHA
it would be (a key/value head per query head) beside both.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.kv.walk import Shapes
from attnlab.lab.realmodel.tokens import token_label
from attnlab.lab.said import said

KB = 1e3


def _visible(texts: list[str]) -> str:
    return "".join(token_label(t)["label"] for t in texts)


@dataclass(frozen=True)
class Generation:
    shapes: Shapes
    run: dict  # the recorded run: prompt and new tokens, and the caches after each step

    @property
    def steps(self) -> list[dict]:
        return self.run["steps"]

    @property
    def itemsize(self) -> int:
        return self.steps[-1]["itemsize"]

    @property
    def tokens(self) -> list[int]:
        return [s["tokens"] for s in self.steps]

    @property
    def measured(self) -> list[int]:
        return [s["bytes"] for s in self.steps]

    def counted(self, heads: int | None = None) -> list[int]:
        """2 × layers × heads (the key/value heads by default) × head size × bytes × tokens, per step."""
        s = self.shapes
        h = s.kv_heads if heads is None else heads
        return [2 * s.layers * h * s.head_dim * st["itemsize"] * st["tokens"] for st in self.steps]

    @property
    def equal(self) -> bool:
        return self.measured == self.counted()

    def data(self) -> dict:
        return {
            "tokens": self.tokens,
            "measured": self.measured,
            "counted": self.counted(),
            "mha": self.counted(self.shapes.query_heads),
            "equal": self.equal,
        }

    # -- words -------------------------------------------------------------------

    def wrote(self) -> dict:
        n_prompt, n_new = len(self.run["prompt_ids"]), len(self.run["new_ids"])
        return said(
            f"Live: {self.shapes.called} read your prompt ({n_prompt:,} "
            f"token{'s' if n_prompt != 1 else ''}) and, "
            f"greedily, wrote {n_new} more: “{_visible(self.run['new_tokens'])}”. Each new token's keys "
            f"and values were appended to its {self.shapes.layers} caches, one per layer.",
            prompt_tokens=n_prompt,
            new_tokens=n_new,
            layers=self.shapes.layers,
        )

    def measured_words(self) -> dict:
        s, last = self.shapes, self.steps[-1]
        n, b = last["tokens"], last["bytes"]
        shape = " × ".join(str(x) for x in last["key_shape"])
        agree = (
            f"equal to the count at every one of the {len(self.steps)} steps"
            if self.equal
            else "not equal to the count"
        )
        return said(
            f"After the last token the caches hold {n:,} tokens: keys and values of shape {shape} in every "
            f"layer, {last['dtype']} ({self.itemsize} bytes a number). Their arrays' bytes add up to {b:,}: "
            f"2 × {s.layers} × {s.kv_heads} × {s.head_dim} × {self.itemsize} × {n:,}, {agree}. With a "
            f"key/value head for each of its {s.query_heads} query heads (MHA) they would hold "
            f"{self.counted(s.query_heads)[-1]:,} bytes.",
            tokens=n,
            bytes=b,
            counted=self.counted()[-1],
            equal=self.equal,
            steps=len(self.steps),
            mha=self.counted(s.query_heads)[-1],
            itemsize=self.itemsize,
        )

    def sentences(self) -> list[dict]:
        return [self.wrote(), self.measured_words()]

    # -- picture and table --------------------------------------------------------

    def picture(self) -> dict:
        xs = self.tokens
        mha = self.counted(self.shapes.query_heads)
        return pic.lines(
            "live",
            f"{self.shapes.called}'s caches, measured as it writes",
            "Kilobytes its caches hold after the prompt and after each new token: the dots are measured "
            "(the arrays' bytes), the line is the count from its shapes; the other line is MHA.",
            pic.axis("tokens cached", 0, max(xs)),
            pic.axis("kB", 0, mha[-1] / KB),
            [
                {"name": "measured", "cls": "now", "xs": xs, "ys": [b / KB for b in self.measured]},
                {
                    "name": "counted (GQA)",
                    "cls": "full",
                    "xs": xs,
                    "ys": [b / KB for b in self.counted()],
                    "dots": False,
                },
                {
                    "name": f"MHA: {self.shapes.query_heads} heads",
                    "cls": "other",
                    "xs": xs,
                    "ys": [b / KB for b in mha],
                    "dots": False,
                },
            ],  # fmt: skip
        )

    def table(self) -> dict:
        added = ["(prompt)", *(token_label(t)["label"] for t in self.run["new_tokens"])]
        mha = self.counted(self.shapes.query_heads)
        return {
            "title": f"{self.shapes.called}'s caches, step by step",
            "columns": [
                "step",
                "token added",
                "tokens cached",
                "key shape (each layer)",
                "dtype",
                "measured bytes",
                "counted bytes",
                "MHA bytes",
            ],  # fmt: skip
            "rows": [
                [
                    str(i),
                    added[i],
                    f"{st['tokens']:,}",
                    " × ".join(map(str, st["key_shape"])),
                    st["dtype"],
                    f"{st['bytes']:,}",
                    f"{c:,}",
                    f"{m:,}",
                ]  # fmt: skip
                for i, (st, c, m) in enumerate(zip(self.steps, self.counted(), mha))
            ],
        }
