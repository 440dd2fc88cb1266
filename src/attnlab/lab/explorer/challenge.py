"""The explorer's live challenge: "Give the second source more than 90% of the attention".

The challenge names its source by role, not by label: the second source (B in
the worked A/B/C example, Y in an example whose sources are X/Y/Z), so an own
example with renamed sources keeps it working. Its goal has one wording
everywhere (:data:`GOAL`); the status uses the source's label. An example with a
single source cannot try it and says so.

It is also the first of the notebook's practice challenges (``CHALLENGE_ID``
in ``lab/data/practice.json``): the practice panel gives it tiered hints, a
Check recorded in the study history and an answer, like the others.

``check(trace)`` reads the engine's weight for the target source and says
whether it is strictly above the threshold; ``claims`` carries those facts. The words write the
share as the explorer shows it (``share_percents``: the set rounded to add up to 100), so a share
of 0.9004 reads "90%" yet counts as met: the check uses the float, the words round it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.display import share_percents

TARGET_INDEX = 1  # the second source: B in the worked example
THRESHOLD = 0.9
CHALLENGE_ID = "second-over-90"  # its id among the practice challenges


def goal_words(threshold: float = THRESHOLD) -> str:
    """The goal, in one wording wherever it is shown: the explorer's box, the practice list and its
    panel (``lab/data/practice.json``'s title is filled in from :data:`GOAL`). It names the source by
    role; the status names it by label."""
    return f"Give the second source more than {fmt.percent(threshold)} of the attention"


GOAL = goal_words()


@dataclass(frozen=True)
class ChallengeState:
    """Where the learner stands on the challenge for one trace."""

    goal: str
    target: str
    available: bool
    share: float | None
    met: bool
    status: str
    claims: dict
    id: str = CHALLENGE_ID

    def to_dict(self) -> dict:
        """The fields by name, in order: what the API's ``challenge`` field carries."""
        return asdict(self)


def check(trace: QueryTrace, *, target: int = TARGET_INDEX, threshold: float = THRESHOLD) -> ChallengeState:
    """Return the challenge state: is source ``target``'s weight strictly above ``threshold``?"""
    goal = goal_words(threshold) + "."  # the box says it as a sentence; a list's title, without the stop
    if target >= len(trace.labels):
        return ChallengeState(
            goal=goal,
            target="",
            available=False,
            share=None,
            met=False,
            status=f"This example has {fmt.plural(len(trace.labels), 'source')}; add another to try this "
            "challenge.",
            claims={"sources": len(trace.labels), "target": None},
        )
    i = target
    label = trace.labels[i]
    if not trace.allowed[i]:
        return ChallengeState(
            goal=goal,
            target=label,
            available=False,
            share=0.0,
            met=False,
            status=f"{label} is blocked by the mask here, so it cannot receive attention.",
            claims={"target": label, "blocked": True},
        )
    share = trace.weights[i]
    shown = share_percents(trace)[i]
    if share > threshold:
        status = f"Done: {label} takes {shown} of the attention, more than {fmt.percent(threshold)}."
    else:
        status = (
            f"Not yet: {label} takes {shown}. Point q further along {label}'s key, "
            "away from the other keys."
        )
    met = share > threshold
    claims = {"target": label, "share": share, "threshold": threshold, "met": met}
    return ChallengeState(
        goal=goal, target=label, available=True, share=share, met=share > threshold, status=status,
        claims=claims,
    )
