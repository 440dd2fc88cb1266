"""The explorer's live challenge: "Give source B more than 90% of the attention".

``check(trace)`` reads the engine's weight for the target source and says
whether it is strictly above the threshold. The words use the page's
percentages (``attnlab.lab.numbers.percent``), so a share of 0.9004 reads
"90%" yet counts as met: the check uses the float, the words round it.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt

TARGET_LABEL = "B"
THRESHOLD = 0.9


@dataclass(frozen=True)
class ChallengeState:
    """Where the learner stands on the challenge for one trace."""

    goal: str
    target: str
    available: bool
    share: float | None
    met: bool
    status: str

    def to_dict(self) -> dict:
        return {
            "goal": self.goal,
            "target": self.target,
            "available": self.available,
            "share": self.share,
            "met": self.met,
            "status": self.status,
        }


def check(trace: QueryTrace, *, target: str = TARGET_LABEL, threshold: float = THRESHOLD) -> ChallengeState:
    """Return the challenge state: is ``target``'s weight strictly above ``threshold``?"""
    goal = f"Give source {target} more than {fmt.percent(threshold)} of the attention."
    if target not in trace.labels:
        return ChallengeState(
            goal=goal,
            target=target,
            available=False,
            share=None,
            met=False,
            status=f"There is no source labelled {target} in this example.",
        )
    i = trace.labels.index(target)
    if not trace.allowed[i]:
        return ChallengeState(
            goal=goal,
            target=target,
            available=False,
            share=0.0,
            met=False,
            status=f"{target} is blocked by the mask here, so it cannot receive attention.",
        )
    share = trace.weights[i]
    shown = fmt.percent(share)
    if share > threshold:
        status = f"Done: {target} takes {shown} of the attention, more than {fmt.percent(threshold)}."
    else:
        status = (
            f"Not yet: {target} takes {shown}. Point q further along {target}'s key, "
            "away from the other keys."
        )
    return ChallengeState(
        goal=goal, target=target, available=True, share=share, met=share > threshold, status=status
    )
