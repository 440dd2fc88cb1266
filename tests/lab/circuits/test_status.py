"""A circuits job's status line, as the page shows it at each stage."""

from __future__ import annotations

import pytest

from attnlab.lab.circuits.status import circuit_status


def line(**kw):
    base = {"kind": "patching", "status": "running", "title": "SmolLM2", "place": 0, "done": 0, "total": 0,
            "has_result": False, "message": ""}  # fmt: skip
    return circuit_status(**(base | kw))


@pytest.mark.parametrize(
    ("kw", "stage", "progress"),
    [
        ({"status": "queued", "place": 2}, "Waiting: 2nd in line", 0.0),
        ({"status": "loading"}, "Loading SmolLM2 (once per server)…", 0.0),
        ({"total": 0}, "Running the patching sweep on SmolLM2…", 0.0),
        ({"done": 3, "total": 12}, "Patching: 3 of 12 patches done…", 0.25),
        ({"done": 3, "total": 12, "cancel_asked": True},
         "Cancelling: stopping after the patch under way (3 of 12 done)…", 0.25),
        ({"status": "done", "done": 12, "total": 12}, "Done: 12 patches.", 1.0),
        ({"status": "done", "kind": "lens"}, "Done.", 1.0),
        ({"status": "cancelled", "done": 5, "total": 12, "has_result": True},
         "Cancelled after 5 of 12 patches: the partial result is shown.", 5 / 12),
        ({"status": "cancelled", "total": 12}, "Cancelled before it started.", 0.0),
        ({"status": "error", "message": "text is empty"}, "Text is empty", 0.0),
    ],
)
def test_each_stage_has_its_line(kw, stage, progress):
    out = line(**kw)
    assert out["stage_display"] == stage == out["stage"]["text"]
    assert out["progress"] == progress
