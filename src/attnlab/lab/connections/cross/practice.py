"""The cross-attention lab's practice: goals checked on the learner's input.

Words: ``lab/data/connections/cross.json``.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.lab import numbers as fmt
from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.connections.cross import words
from attnlab.lab.connections.cross.walk import CrossWalk, walk

CHALLENGES = ChallengeSet("connections/cross.json")
FOCUSED = 0.8  # "one-word": one word takes more than this share


def _one_word(w: CrossWalk, response) -> dict:
    t = w.traces[w.patch]
    best = max(range(len(w.words)), key=lambda i: t.weights[i])
    share = t.weights[best]
    shown = words.patch_shares(w, w.patch)[best]  # as the share bars show it
    claims = {"patch": [w.row, w.col], "word": w.words[best], "share": share, "shown": shown, "goal": FOCUSED}
    if share > FOCUSED:
        return feedback(
            True,
            f"Patch ({w.row}, {w.col}) gives “{w.words[best]}” {shown} of its attention: its "
            "query "
            "points at that word's key, and the sharpness spreads the scores apart.",
            **claims,
        )
    return feedback(
        False,
        f"Patch ({w.row}, {w.col})'s largest share is “{w.words[best]}” at {shown}, not over "
        f"{fmt.percent(FOCUSED)}. Does the patch show something a word names? Then spread the scores "
        "further.",
        **claims,
    )


def _shared_text(w: CrossWalk, response) -> dict:
    text = w.shared_text_share()
    shown = words.shared_split(w)[0]  # as the shared-attention sentence shows it
    claims = {"text_share": text, "shown": shown, "choice": response}
    if response == "never":
        return feedback(
            True,
            f"Under shared attention patch ({w.row}, {w.col}) gives the words {shown}; under "
            "cross-attention every share goes to the words, 100%. Shared attention can only split it "
            "further.",
            **claims,
        )
    return feedback(
        False,
        f"Under shared attention patch ({w.row}, {w.col}) gives the words {shown}. Where does "
        "the "
        "rest go, and what is left for anything but the words under cross-attention?",
        **claims,
    )


CHECKS: dict[str, Callable[[CrossWalk, object], dict]] = {"one-word": _one_word, "shared-text": _shared_text}


def check(challenge_id: object, values: dict, response: object = None) -> dict:
    c = CHALLENGES.find(challenge_id)
    response = validate_response(c, response)
    return CHECKS[c["id"]](walk(**values), response)
