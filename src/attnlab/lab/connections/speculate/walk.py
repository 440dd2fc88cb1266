"""The speculative-decoding lab's numbers: one SmolLM2 run read, and the toy rule computed.

A run's numbers (``models.labs.speculate.compare``, passed in as ``measured["speculate"]``)
are plain JSON: the prompt's token ids, plain greedy decoding's tokens and the time at
each (seconds from before the prompt pass), speculative decoding's tokens, times and
steps (each step: the target's token ``first``, the drafts ``proposed``, the target's
argmax at each verified row, how many drafts were ``accepted``, the pass's seconds and
``passes``: 1, or 0 for a last token that needed none), and each token's text.
:class:`Run` reads them and derives what the page says; :func:`draft.replay` on the
plain run's tokens gives the steps again, from the rule alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from attnlab.lab.connections.speculate import draft
from attnlab.lab.connections.speculate.toy import Rule, rule
from attnlab.lab.realmodel.tokens import token_label

TOY_WEIGHTS = ("p1", "p2", "p3", "p4"), ("q1", "q2", "q3", "q4")


@dataclass(frozen=True, eq=False)
class Run:
    """One measured run with its settings (``tokens``, ``ngram``, ``draft`` as the learner set them)."""

    data: dict
    tokens: int
    ngram: int
    draft: int

    @property
    def prompt(self) -> list[int]:
        return self.data["prompt_ids"]

    @property
    def plain(self) -> dict:
        return self.data["plain"]

    @property
    def spec(self) -> dict:
        return self.data["speculative"]

    @property
    def steps(self) -> list[dict]:
        return self.spec["steps"]

    def label(self, token: int) -> str:
        return token_label(self.data["texts"][str(token)])["label"]

    @property
    def identical(self) -> bool:
        return self.plain["ids"] == self.spec["ids"]

    @property
    def first_difference(self) -> int | None:
        """The first position where the two outputs differ (None when they are the same)."""
        a, b = self.plain["ids"], self.spec["ids"]
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return i
        return None if len(a) == len(b) else min(len(a), len(b))

    @property
    def verified(self) -> list[dict]:
        """The steps that ran a forward pass."""
        return [s for s in self.steps if s["passes"]]

    @property
    def proposed(self) -> int:
        return sum(len(s["proposed"]) for s in self.steps)

    @property
    def accepted(self) -> int:
        return sum(s["accepted"] for s in self.steps)

    @property
    def rate(self) -> float | None:
        """Accepted drafts over proposed ones (None when none was proposed)."""
        return self.accepted / self.proposed if self.proposed else None

    @property
    def no_draft(self) -> int:
        """Passes that found no earlier match, so verified the target's token alone."""
        return sum(1 for s in self.verified if not s["proposed"])

    @property
    def passes_plain(self) -> int:
        return self.plain["passes"]

    @property
    def passes_spec(self) -> int:
        return self.spec["passes"]

    @property
    def seconds_plain(self) -> float:
        return self.plain["total_s"]

    @property
    def seconds_spec(self) -> float:
        return self.spec["total_s"]

    @property
    def speedup(self) -> float:
        """Plain decoding's time over speculative decoding's, from before the prompt pass to the end."""
        return self.seconds_plain / self.seconds_spec

    def rate_of(self, which: str) -> float:
        """Tokens a second, the prompt pass included."""
        part = self.plain if which == "plain" else self.spec
        return len(part["ids"]) / part["total_s"]

    @cached_property
    def replayed(self) -> list[draft.Step]:
        """The steps the rule gives on the plain run's tokens (no model)."""
        return draft.replay(
            self.prompt, self.plain["ids"], ngram=self.ngram, draft=self.draft, max_new_tokens=self.tokens,
            stop_ids=set(self.data["stop_ids"]),
        )  # fmt: skip

    @property
    def replay_matches(self) -> bool:
        """Whether the recorded steps are the rule's on the plain tokens: target, drafts, accepted."""
        got = [(s["first"], tuple(s["proposed"]), s["accepted"], s["passes"]) for s in self.steps]
        return got == [(s.first, s.proposed, s.accepted, s.passes) for s in self.replayed]

    @property
    def argmax_rule(self) -> bool:
        """Whether each step's accepted count is the rule's on its own recorded argmax rows."""
        stop = set(self.data["stop_ids"])
        return all(draft.accepted(s["proposed"], s["argmax"], stop) == s["accepted"] for s in self.steps)


def toy(values: dict) -> Rule:
    p_names, q_names = TOY_WEIGHTS
    return rule(tuple(values[n] for n in p_names), tuple(values[n] for n in q_names))
