"""A snapshot: a few learners' answers, side by side for the room, without names.

The teacher picks checks from learners' records (their events' ``seq``); the
snapshot shows each as "Answer 1", "Answer 2", ... in the order picked, with its
challenge and what the learner answered (a choice, a prediction, or the query q
they dragged to), and no name, alias or verdict: the room discusses the answers,
not the people or the marks.
"""

from __future__ import annotations

from attnlab.engine.errors import FieldError
from attnlab.lab.classroom.view import NOWHERE, challenge, response_text
from attnlab.lab.said import said

MAX_PICKED = 6


def check_picks(seqs: list[int], events: dict[int, dict]) -> list[int]:
    """The picked events, checked: 1 to ``MAX_PICKED`` distinct checks of this class."""
    if not 1 <= len(seqs) <= MAX_PICKED:
        raise FieldError("events", f"must pick 1 to {MAX_PICKED} answers")
    if len(set(seqs)) != len(seqs):
        raise FieldError("events", "names one answer twice")
    for i, seq in enumerate(seqs):
        e = events.get(seq)
        if e is None or e["kind"] != "check":
            raise FieldError(("events", i), "is not a check in this class")
    return list(seqs)


def snapshot(picked: list[dict]) -> dict:
    """The cards the room sees, from the picked check events (in order)."""
    cards = []
    for n, e in enumerate(picked, start=1):
        c = challenge(e["part"] or "", e["challenge"] or "")
        cards.append({
            "label": f"Answer {n}",
            "title": c["title"] if c else NOWHERE,
            "answer": response_text(c, e["data"]),
        })
    return {
        "title": "Answers from the class",
        "words": said(
            f"{len(cards)} answers, side by side, without names." if len(cards) != 1
            else "One answer, without a name.",
            answers=len(cards),
        ),
        "cards": cards,
    }
