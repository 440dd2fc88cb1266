"""The stepper: four steps, words from data, tables from the current trace."""

from __future__ import annotations

from attnlab.engine import trace_query
from attnlab.lab.explorer import stepper
from attnlab.lab.explorer.sequence import STARTING, set_mask_cell


def test_four_steps_in_order_with_questions():
    s = stepper.stepper(STARTING.explorer_trace())
    assert [st["title"] for st in s["steps"]] == [
        "Step 1 of 4 · Vectors", "Step 2 of 4 · Match", "Step 3 of 4 · Share", "Step 4 of 4 · Mix",
    ]
    assert s["steps"][0]["question"] == "What does this query have in common with each key?"
    assert all(st["question"].endswith("?") and st["explanation"] for st in s["steps"])
    assert "optional inspection controls" in s["note"]


def test_vectors_step_shows_shapes_and_the_keys_table():
    (vectors, *_rest) = stepper.steps(STARTING.explorer_trace())
    assert vectors["shapes"].startswith("Shapes: q and each k have d_k = 2 coordinates.")
    assert vectors["symbols"] == "q = [q₁, q₂]; k_A = [−1, 2]; k_B = [1, 0]; k_C = [0, 1]"
    assert vectors["table"]["rows"] == [
        ["A", "[-1, 2]", "[2, 1]"], ["B", "[1, 0]", "[2, 1]"], ["C", "[0, 1]", "[2, 1]"],
    ]


def test_tables_follow_the_current_numbers():
    _, match, share, mix = stepper.steps(STARTING.explorer_trace())
    assert match["table"]["rows"][1] == ["B", "2", "1.414", "yes"]
    assert share["table"]["caption"] == "Shared normalization: m = 1.414; Z = 1.736"
    assert [r[2] for r in share["table"]["rows"]] == ["0.14", "0.576", "0.284"]
    assert mix["table"]["caption"] == "Carries add up to the output o = [-0.004, 0.868]"
    moved = trace_query([0, 0], STARTING.keys, STARTING.values)
    assert [r[2] for r in stepper.steps(moved)[2]["table"]["rows"]] == ["0.333"] * 3


def test_blocked_sources_say_blocked():
    held = set_mask_cell(STARTING, 2, 0, False)
    t = held.row_trace(2)
    _, match, share, mix = stepper.steps(t)
    assert match["table"]["rows"][0][3] == "blocked"
    assert share["table"]["rows"][0][1:] == ["blocked", "blocked"]
    assert mix["table"]["rows"][0][1] == "blocked"
