"""The worker's mode in words (lab/realmodel/worker.py): each sentence says what its claims hold."""

from __future__ import annotations

import pytest

from attnlab.lab.realmodel.worker import worker_why


@pytest.mark.parametrize(
    ("mode", "fallback", "said"),
    [
        ("process", None, ["a process of its own"]),
        ("", None, ["with the first model job"]),
        ("thread", None, ["a thread of the server"]),
        ("thread", {"cause": "died_early", "exit_code": 3, "tries": 4}, ["code 3", "4 times", "again"]),
        ("thread", {"cause": "start_failed", "error": "PicklingError: no"}, ["PicklingError: no", "again"]),
    ],
)
def test_the_words_say_the_mode_and_the_reason(mode, fallback, said):
    why = worker_why(mode, fallback)
    assert why["claims"]["mode"] == (mode or None)
    for key, value in (fallback or {}).items():
        assert why["claims"][key] == value
    assert all(s in why["text"] for s in said)
    assert ("thread" in why["text"]) == (mode == "thread")
    assert why["text"].endswith(".") and "_" not in why["text"]
