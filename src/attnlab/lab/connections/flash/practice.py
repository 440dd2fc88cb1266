"""The flash lab's practice: goals checked on the learner's input, feedback that points without telling.

Words are data in ``lab/data/connections/flash.json``; each check here computes
on the learner's values (``walk``) and answers with ``lab.challenge_set.feedback``.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.lab import numbers as fmt
from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.connections.flash.walk import EXACT, UNCHANGED, FlashWalk, walk

CHALLENGES = ChallengeSet("connections/flash.json")
GOAL_UNCHANGED = 4  # "window-four": exactly the first four rows unchanged


def _tile_sizes(w: FlashWalk, response) -> dict:
    other = 1 if w.tile != 1 else w.n
    v = dict(n=w.n, tile=other, row=w.row, keys=w.n, window=w.window, seed=w.seed)
    o = walk(**v)
    change = max(abs(a - b) for a, b in zip(w.so_far(w.tiles - 1), o.so_far(o.tiles - 1)))
    claims = {"tiles": [w.tile, other], "change": change, "bound": EXACT, "choice": response}
    if response == "rounding":
        return feedback(
            True,
            f"Row {w.row}'s final output with tiles of {w.tile} and of {other} differs by "
            f"{fmt.scientific(change)}: rounding only. Tiling reorders the sums; it computes the same "
            "attention.",
            **claims,
        )
    return feedback(
        False,
        f"Try it: the final O / l for row {w.row} with tiles of {w.tile} and with tiles of {other} differ by "
        f"{fmt.scientific(change)}. What is that, next to the values themselves?",
        **claims,
    )


def _no_rescale(w: FlashWalk, response) -> dict:
    rescaled = [t + 1 for t in range(1, w.tiles) if w.m(t) > w.m(t - 1)]
    claims = {"tile": w.tile, "tiles": w.tiles, "rescaled_at": rescaled}
    if w.tiles < 2:
        why = (
            f"the causal mask skips the other {w.skipped} for its block"
            if w.skipped
            else "it is the only one there is"
        )
        return feedback(
            False,
            f"With tiles of {w.tile}, row {w.row} walks a single tile ({why}), so there is nothing to "
            "rescale; pick a smaller tile or a later row, so that its block walks at least two tiles.",
            **claims,
        )
    if not rescaled:
        return feedback(
            True,
            f"With tiles of {w.tile} (tiles 1–{w.tiles}), row {w.row}'s largest score is in the first tile, "
            "so m "
            "never rises after it and nothing kept is ever rescaled.",
            **claims,
        )
    return feedback(
        False,
        f"With tiles of {w.tile}, m still rises at tile{'s' if len(rescaled) > 1 else ''} "
        f"{', '.join(map(str, rescaled))}. Where is row {w.row}'s largest score? Make the first tile hold "
        "it.",
        **claims,
    )


def _window_four(w: FlashWalk, response) -> dict:
    changes = w.window_changes()
    unchanged = [i for i, c in enumerate(changes) if c <= UNCHANGED]
    claims = {"window": w.window, "n": w.n, "unchanged_rows": len(unchanged), "goal": GOAL_UNCHANGED}
    if w.n <= GOAL_UNCHANGED:
        return feedback(
            False,
            f"With n = {w.n} there are only {w.n} rows; make the sequence longer than {GOAL_UNCHANGED} "
            "first.",
            **claims,
        )
    if len(unchanged) == GOAL_UNCHANGED:
        return feedback(
            True,
            f"With a window of {w.window}, rows 0–{GOAL_UNCHANGED - 1} see every earlier key and keep their "
            f"outputs; the other {w.n - GOAL_UNCHANGED} rows change.",
            **claims,
        )
    more = "more" if len(unchanged) < GOAL_UNCHANGED else "fewer"
    return feedback(
        False,
        f"With a window of {w.window}, {len(unchanged)} of {w.n} rows keep their outputs; the goal is "
        f"{GOAL_UNCHANGED}, so you need {more}. Which rows see every earlier key inside the window?",
        **claims,
    )


CHECKS: dict[str, Callable[[FlashWalk, object], dict]] = {
    "tile-sizes": _tile_sizes,
    "no-rescale": _no_rescale,
    "window-four": _window_four,
}


def check(challenge_id: object, values: dict, response: object = None) -> dict:
    """Check challenge ``challenge_id`` on the learner's ``values`` with their ``response``."""
    c = CHALLENGES.find(challenge_id)
    response = validate_response(c, response)
    return CHECKS[c["id"]](walk(**values), response)
