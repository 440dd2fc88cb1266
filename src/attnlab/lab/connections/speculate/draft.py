"""Speculative decoding's greedy rule: a prompt-lookup draft proposes, the target's own argmax decides.

Prompt lookup (n-gram drafting): the context's last ``ngram`` tokens are looked
for earlier in the context; the tokens that followed their latest earlier
occurrence (at most ``draft`` of them) are the proposal. No second model: the
draft is free, and right whenever the text repeats itself.

One step: the token the target already chose (``first``, the argmax of the
last logits) goes in with the proposal, ``[first, d_0, ..., d_(k-1)]``, in one
forward pass of k + 1 rows; row i's argmax is the target's next token after
``first, d_0, ..., d_(i-1)``. Draft d_i is accepted while it equals row i's
argmax (and no accepted token before it ended the text); the first row that
disagrees gives the next token instead. So every token kept is the target's
own greedy choice after exactly the tokens before it: the output is plain
greedy decoding's, token for token, only made in fewer passes.

:func:`replay` applies the rule to a recorded greedy output: the steps a run
took follow from it alone (tests hold the model's recorded steps to it).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from attnlab.models.labs.draft import accepted, propose  # noqa: F401 - the rule, as the model's run applies it


@dataclass(frozen=True)
class Step:
    """One step: the target's token ``first``, the drafts ``proposed``, how many were ``accepted``,
    and ``passes``: 1 when the step ran a forward pass, 0 when ``first`` ended the output."""

    first: int
    proposed: tuple[int, ...]
    accepted: int
    passes: int

    @property
    def tokens(self) -> list[int]:
        """The tokens this step adds to the output: ``first`` and the accepted drafts."""
        return [self.first, *self.proposed[: self.accepted]]


def replay(
    prompt: Sequence[int],
    target: Sequence[int],
    *,
    ngram: int,
    draft: int,
    max_new_tokens: int,
    stop_ids: Collection[int],
) -> list[Step]:
    """The steps speculative decoding takes when the target's greedy output is ``target``.

    ``target`` is what plain greedy decoding gives: ``max_new_tokens`` tokens, or fewer ending in a
    stop id. Each draft is compared with the greedy token at its place, the same test as against
    the verified row's argmax (the rows up to the first disagreement are greedy's own steps).
    """
    out: list[int] = []
    steps: list[Step] = []
    while len(out) < len(target):
        first = target[len(out)]
        out.append(first)
        if first in stop_ids or len(out) >= max_new_tokens:
            steps.append(Step(first, (), 0, 0))
            break
        proposed = propose([*prompt, *out], ngram, min(draft, max_new_tokens - len(out)))
        kept = accepted(proposed, target[len(out) : len(out) + len(proposed)], stop_ids)
        steps.append(Step(first, tuple(proposed), kept, 1))
        out += proposed[:kept]
        if out[-1] in stop_ids or len(out) >= max_new_tokens:
            break
    return steps
