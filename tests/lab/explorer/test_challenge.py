"""The live challenge: give the second source (B in the worked example) more than 90%."""

from __future__ import annotations

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.challenge import GOAL, check
from attnlab.lab.explorer.examples import WORKED


def shown(fb: dict) -> dict:
    """A check's feedback as the page reads it: met, the words' text, load."""
    return {"met": fb["met"], "words": fb["words"]["text"], "load": fb["load"]}


def worked(q, allowed=None, labels=None):
    return trace_query(q, WORKED.keys, WORKED.values, labels=labels, allowed=allowed)


def test_worked_example_is_not_met():
    state = check(worked((2.0, 1.0)))
    assert state.met is False
    assert state.available is True
    assert state.share == 0.575975345215362
    assert state.status.startswith("Not yet: B takes 58%")


def test_far_along_b_is_met():
    state = check(worked((4.0, 0.0)))
    assert state.met is True
    assert state.share > 0.9
    # A's 0.33% would read 0% in whole percents, so the explorer shows the set in tenths
    assert state.status == "Done: B takes 94.1% of the attention, more than 90%."


def test_threshold_is_strict_and_uses_the_float():
    t = worked((4.0, 0.0))
    share = t.weights[1]
    assert check(t, threshold=share).met is False
    assert check(t, threshold=share - 1e-15).met is True


def test_blocked_target_is_not_available():
    blocked = check(worked((4.0, 0.0), allowed=[True, False, True]))
    assert (blocked.available, blocked.met) == (False, False)
    assert blocked.status == "B is blocked by the mask here, so it cannot receive attention."


def test_renamed_sources_keep_the_challenge_by_role():
    # an own example with sources X/Y/Z: the second source is Y, not "no source labelled B"
    renamed = check(worked((4.0, 0.0), labels=["X", "Y", "Z"]))
    assert (renamed.available, renamed.met, renamed.target) == (True, True, "Y")
    assert renamed.goal == "Give the second source more than 90% of the attention."  # by role, everywhere
    assert renamed.status == "Done: Y takes 94.1% of the attention, more than 90%."
    assert renamed.share == check(worked((4.0, 0.0))).share


def test_a_single_source_cannot_try_it():
    one = check(trace_query((1.0, 0.0), [(1.0, 0.0)], [(2.0, 3.0)], labels=["Solo"]))
    assert (one.available, one.met, one.share) == (False, False, None)
    assert one.status == "This example has 1 source; add another to try this challenge."


# --- the same challenge in the practice: tiered hints, checks and history ----------

from attnlab.lab.explorer.challenge import CHALLENGE_ID  # noqa: E402
from attnlab.lab.explorer.sequence import STARTING, edit_query  # noqa: E402
from attnlab.lab.notebook import history as hist  # noqa: E402
from attnlab.lab.notebook import practice  # noqa: E402


def test_the_live_challenge_is_a_practice_challenge_with_tiered_hints():
    c = practice.challenge(CHALLENGE_ID)
    assert practice.challenges()[0]["id"] == CHALLENGE_ID  # the first challenge
    assert c["title"] == "Give the second source more than 90% of the attention"
    assert c["response"] is None and c["uses"] == "explorer" and c["by_role"] is True
    assert len(c["hints"]) == 3 and len(set(c["hints"])) == 3
    # the last hint's numbers are the worked example's
    t = worked((4.0, 0.0))
    assert "q = [4, 0]" in c["hints"][2] and f"score of {t.scores[1]:.3f}" in c["hints"][2]
    assert fmt.percents(t.weights)[1] == "94.1%" and "B then takes 94.1%" in c["hints"][2]


def test_its_check_uses_the_explorer_and_never_gives_the_answer():
    miss = practice.check(CHALLENGE_ID, STARTING)
    assert shown(miss) == {
        "met": False,
        "words": "B takes 58%; it needs more than 90%. Point q further along B's key, away from the "
        "other keys.",
        "load": False,
    }
    hit = practice.check(CHALLENGE_ID, edit_query(STARTING, [4.0, 0.0]))
    words = "B takes 94.1% of the attention, more than 90%."
    assert shown(hit) == {"met": True, "words": words, "load": False}
    answer = practice.answer(CHALLENGE_ID, STARTING)["text"]
    assert answer == "Move q along B's key: at q = [4, 0] B takes 94.1% of the attention."
    assert "[4, 0]" not in miss["words"]["text"]


def test_renamed_sources_fit_it_by_role():
    xyz = STARTING.__class__(**{**STARTING.__dict__, "labels": ("X", "Y", "Z")})
    out = practice.check(CHALLENGE_ID, xyz)
    assert out["load"] is False and out["words"]["text"].startswith("Y takes 58%")


def test_its_checks_and_hints_are_recorded_in_the_study_history():
    s = hist.new_study()
    for action in (
        {"kind": "open", "challenge": CHALLENGE_ID},
        {"kind": "help", "help": "hint", "detail": 1, "challenge": CHALLENGE_ID},
        {"kind": "submit", "challenge": CHALLENGE_ID},
    ):
        s = hist.apply(s, action, STARTING)
    s = hist.apply(s, {"kind": "submit", "challenge": CHALLENGE_ID}, edit_query(STARTING, [4.0, 0.0]))
    (group,) = hist.history(s)
    assert group["challenge"] == CHALLENGE_ID
    assert [c["met"] for c in group["checks"]] == [False, True]
    assert group["help"] == ["Opened hint 1 of 3"]


def test_one_goal_in_one_wording_everywhere():
    """The explorer's box, the practice list and the practice panel state the first challenge's goal in
    the same words (they used to say "Give source B more than 90%…" and "Give the second source more
    than 90%…"): whatever the example, the goal is GOAL; the status names the source by label."""
    from attnlab.lab.notebook import practice

    assert GOAL == "Give the second source more than 90% of the attention"
    assert practice.challenge(CHALLENGE_ID)["title"] == GOAL
    assert practice.challenges()[0]["id"] == CHALLENGE_ID and practice.challenges()[0]["title"] == GOAL
    for state in (check(worked((2.0, 1.0))), check(worked((4.0, 0.0), labels=["X", "Y", "Z"]))):
        assert state.goal == GOAL + "."  # a sentence in the box, the same words as the title
    assert check(trace_query((1.0, 0.0), [(1.0, 0.0)], [(2.0, 3.0)], labels=["Solo"])).goal == GOAL + "."
    assert check(worked((2.0, 1.0))).status.startswith("Not yet: B takes 58%.")
