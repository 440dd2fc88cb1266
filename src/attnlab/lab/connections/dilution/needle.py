"""The dilution lab's needle: how much of one query's attention a needle keeps in SmolLM2 as the
haystack around it grows from 16 to 256 tokens.

The design, stated: the text starts with the needle sentence (:data:`NEEDLE`, holding the needle
word), then filler sentences (:data:`FILLER`, their words in turn, as many as fit), and ends with
the question (:data:`QUESTION`); ``models.labs.needle`` fits each text to at most n tokens of
SmolLM2's own tokenizer and traces it. The query is the text's last token (“␣is”); the head is
layer 18, head 6 (:data:`HEAD`), which the Real model view names an induction head: on
“… secret word is” it can look for the token after the earlier “secret word is”, the needle
word. From the recorded scaled scores of that row, the weights are ``softmax`` in float64 (the
model's own float32 weights agree to float32's rounding); the needle's share is the sum of the
weights on its tokens, beside an even spread's, ``(needle tokens) / n``. Also recorded: the
mean, over all 30 × 9 heads, of the share on the needle, and the model's most likely next token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.heads import head_name
from attnlab.lab.realmodel.tokens import token_label
from attnlab.lab.said import said

MODEL = "smollm2"
NEEDLE = "The secret word is {word}."
FILLER = (
    "The grass is green.",
    "The sky is blue.",
    "The sun is warm.",
    "Birds sing in the trees.",
    "Water flows down the hill.",
    "Leaves fall in autumn.",
    "Snow is cold and white.",
    "The road runs past the farm.",
)
QUESTION = " What is the secret word? The secret word is"
WORDS = ("mango", "violet", "anchor", "pepper", "rocket")
LENGTHS = (16, 32, 64, 128, 256)
HEAD = (18, 6)  # layer, head: an induction head (docs/real-model-api.md, "Head kinds")


def arguments(word: str) -> dict:
    """What the run needs: the text's parts, the needle word, the lengths and the head."""
    return {
        "needle": NEEDLE.format(word=word),
        "filler": list(FILLER),
        "question": QUESTION,
        "word": word,
        "lengths": list(LENGTHS),
        "layer": HEAD[0],
        "head": HEAD[1],
    }


def softmax(scores: list[float]) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    e = np.exp(s - s.max())
    return e / e.sum()


def _quoted(text: str) -> str:
    return f"“{token_label(text)['label']}”"


@dataclass(frozen=True)
class Needle:
    word: str
    rows: list[dict]  # one per length, as recorded (models.labs.needle.row)

    def weights(self, i: int) -> np.ndarray:
        return softmax(self.rows[i]["scores"])

    @property
    def tokens(self) -> list[int]:
        return [r["n_tokens"] for r in self.rows]

    @property
    def shares(self) -> list[float]:
        return [float(self.weights(i)[r["needle"]].sum()) for i, r in enumerate(self.rows)]

    @property
    def largest(self) -> list[float]:
        return [float(self.weights(i).max()) for i in range(len(self.rows))]

    @property
    def entropy(self) -> list[float]:
        out = []
        for i in range(len(self.rows)):
            w = self.weights(i)
            w = w[w > 0]
            out.append(float(-(w * np.log(w)).sum()))
        return out

    @property
    def even(self) -> list[float]:
        return [len(r["needle"]) / r["n_tokens"] for r in self.rows]

    @property
    def mean_share(self) -> list[float]:
        return [r["mean_share"] for r in self.rows]

    @property
    def found(self) -> list[bool]:
        """Whether the model's most likely next token is the needle word (its first token)."""
        return [r["top_next"] == r["needle_labels"][0] for r in self.rows]

    def data(self) -> dict:
        return {
            "tokens": self.tokens,
            "head_share": self.shares,
            "largest": self.largest,
            "entropy": self.entropy,
            "even": self.even,
            "mean_share": self.mean_share,
        }

    # -- words -------------------------------------------------------------------

    def design(self) -> dict:
        layer, head = HEAD
        return said(
            f"The needle: the text starts “{NEEDLE.format(word=self.word)}”, filler sentences follow, and "
            f"it ends “{QUESTION.strip()}”. The query is its last token, "
            f"{_quoted(self.rows[0]['query_label'])}, in layer {layer}, head {head} of SmolLM2, an induction "
            "head: it can look for the token after the earlier “secret word is”.",
            word=self.word,
            layer=layer,
            head=head,
            query=self.rows[0]["query_label"],
        )

    def kept(self) -> dict:
        s, e, m = self.shares, self.even, self.mean_share
        verb = "rises" if s[-1] > s[0] else "falls"
        ratio = s[-1] / e[-1]
        # each "from ... to ..." pair reads differently when its numbers differ
        (s0, s1), (e0, e1), (m0, m1) = (fmt.percent_pair(x[0], x[-1]) for x in (s, e, m))
        return said(
            f"From {self.tokens[0]} to {self.tokens[-1]} tokens that head's share on the needle {verb} from "
            f"{s0} to {s1}, while an even spread would fall from "
            f"{e0} to {e1}: at {self.tokens[-1]} tokens it keeps "
            f"{fmt.rounded(ratio, 0)} times an even share. Averaged over all {self.rows[0]['heads']} heads, "
            f"the needle gets {m0} to {m1}.",
            first=s[0],
            last=s[-1],
            rises=s[-1] > s[0],
            even_first=e[0],
            even_last=e[-1],
            ratio=ratio,
            mean_first=m[0],
            mean_last=m[-1],
            heads=self.rows[0]["heads"],
        )

    def answered(self) -> dict:
        hits = sum(self.found)
        return said(
            f"SmolLM2's most likely next token is the needle word at {hits} of the {len(self.rows)} lengths. "
            "Random keys dilute (above) because nothing in them matches the query; a trained head that "
            "matches the needle by its content keeps it.",
            found=self.found,
            hits=hits,
        )

    def sentences(self) -> list[dict]:
        return [self.design(), self.kept(), self.answered()]

    # -- picture and table ----------------------------------------------------------

    def picture(self) -> dict:
        xs = self.tokens
        layer, head = HEAD
        return pic.lines(
            "needle",
            "The needle in SmolLM2",
            f"The share of the last token's attention on the needle as the text grows: layer {layer}, head "
            f"{head}; the mean over all heads; and an even spread's.",
            pic.axis("tokens", xs[0], xs[-1], log=True),
            pic.axis("share on the needle", 0.0, 1.0),
            [
                {"name": head_name(layer, head), "cls": "now", "xs": xs, "ys": self.shares},
                {"name": "mean of all heads", "cls": "full", "xs": xs, "ys": self.mean_share},
                {"name": "even spread", "cls": "other", "xs": xs, "ys": self.even},
            ],
        )

    def table(self) -> dict:
        layer, head = HEAD
        return {
            "title": f"The needle, layer {layer} head {head}",
            "columns": [
                "tokens",
                "needle tokens",
                "share on the needle",
                "largest share",
                "entropy (nats)",
                "ln n",
                "mean of all heads",
                "even spread",
                "most likely next token",
            ],  # fmt: skip
            "rows": [
                [
                    str(r["n_tokens"]),
                    ", ".join(str(i) for i in r["needle"]),
                    fmt.rounded(s, 4),
                    fmt.rounded(g, 4),
                    fmt.rounded(h, 3),
                    fmt.rounded(math.log(r["n_tokens"]), 3),
                    fmt.rounded(r["mean_share"], 4),
                    fmt.rounded(e, 4),
                    token_label(r["top_next"])["label"],
                ]
                for r, s, g, h, e in zip(self.rows, self.shares, self.largest, self.entropy, self.even)
            ],
        }
