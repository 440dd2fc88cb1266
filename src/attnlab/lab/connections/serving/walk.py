"""The serving lab's numbers: one SmolLM2 run read (one request at a time, then continuous batching).

A run's numbers (``models.labs.serving.compare``, passed in as ``measured["serving"]``) are
plain JSON: each request's prompt ids; for each way of serving (``one``, ``batched``) the tokens
each request got, when its first token came and when its last did (seconds from the start,
every request arriving at 0), the total time, and its steps (``start``, ``end``, ``kind``:
``"prefill"`` or ``"decode"``, and the ``requests`` in the step); each token's text.
:class:`Serve` reads them; :func:`schedule.schedule` gives each way's steps again from the
requests' lengths alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.lab.connections.serving.schedule import schedule
from attnlab.lab.realmodel.tokens import token_label

LETTERS = "ABCDEFGH"
WAYS = ("one", "batched")


@dataclass(frozen=True, eq=False)
class Serve:
    """One measured run with its settings (``batch``, ``tokens`` as the learner set them)."""

    data: dict
    batch: int
    tokens: int

    @property
    def requests(self) -> int:
        return len(self.data["prompt_ids"])

    def way(self, name: str) -> dict:
        return self.data[name]

    def label(self, token: int) -> str:
        return token_label(self.data["texts"][str(token)])["label"]

    @property
    def same(self) -> list[bool]:
        """Per request: the same tokens both ways."""
        return [a == b for a, b in zip(self.data["one"]["tokens"], self.data["batched"]["tokens"])]

    def made(self, name: str) -> int:
        return sum(len(t) for t in self.way(name)["tokens"])

    def seconds(self, name: str) -> float:
        return self.way(name)["total_s"]

    def throughput(self, name: str) -> float:
        """Tokens a second over the whole run, prompt passes included."""
        return self.made(name) / self.seconds(name)

    @property
    def ratio(self) -> float:
        """Continuous batching's tokens a second over one-at-a-time's."""
        return self.throughput("batched") / self.throughput("one")

    def first(self, name: str) -> list[float]:
        return self.way(name)["first_s"]

    def mean_first(self, name: str) -> float:
        return sum(self.first(name)) / self.requests

    def longest_wait(self, name: str) -> int:
        """The request whose first token came last (the first of them on a tie)."""
        f = self.first(name)
        return f.index(max(f))

    def decode_steps(self, name: str) -> list[dict]:
        return [s for s in self.way(name)["steps"] if s["kind"] == "decode"]

    def step_seconds(self, name: str, rows: int | None = None) -> float | None:
        """The mean time of a decoding step (of ``rows`` requests when given); None when there is none."""
        steps = [s for s in self.decode_steps(name) if rows is None or len(s["requests"]) == rows]
        found = [s["end"] - s["start"] for s in steps]
        return sum(found) / len(found) if found else None

    @property
    def widest(self) -> int:
        """The most requests one batched step decoded."""
        return max((len(s["requests"]) for s in self.decode_steps("batched")), default=0)

    def lengths(self) -> list[int]:
        return [len(t) for t in self.data["one"]["tokens"]]

    def schedule_matches(self, name: str) -> bool:
        """Whether the recorded steps are the rule's for the requests' lengths."""
        got = [(s["kind"], s["requests"]) for s in self.way(name)["steps"]]
        return got == schedule(self.lengths(), 1 if name == "one" else self.batch)
