"""A lab's model part: asks, what came back, the page's live state and the words for a run not done."""

from __future__ import annotations

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.connections.controls import ControlError
from attnlab.lab.connections.live import POLL_MS, Ask, Measured, ask, live, measured, status_words


def test_an_ask_is_plain_and_hashable():
    a = ask("needle", "smollm2", word="mango", lengths=[16, 32], filler=["a", "b"])
    assert a == Ask("needle", "smollm2", (("filler", ("a", "b")), ("lengths", (16, 32)), ("word", "mango")))
    assert a.args == {"filler": ("a", "b"), "lengths": (16, 32), "word": "mango"}
    assert hash(a) == hash(ask("needle", "smollm2", lengths=(16, 32), filler=("a", "b"), word="mango"))


def test_a_lab_without_a_model_part_asks_nothing():
    assert measured("flash", {}, "query", lambda a: pytest.fail("nothing to measure")) == {}


def test_each_ask_is_measured_by_its_run():
    seen = []

    def measure(a: Ask) -> Measured:
        seen.append(a)
        return Measured("done", data={"run": a.run})

    out = measured("kv", {"live": "on", "prompt": "Hi there", "new": 3}, "query", measure)
    assert [a.run for a in seen] == ["shapes", "kv"] and out["kv"].data == {"run": "kv"}
    assert seen[1].args == {"prompt": "Hi there", "new_tokens": 3} and seen[1].field == "prompt"
    seen.clear()
    measured("kv", {}, "query", measure)
    assert [a.run for a in seen] == ["shapes"]  # live generation off: the shapes alone


def test_a_refused_text_is_refused_at_the_control_that_holds_it():
    def too_long(a: Ask) -> Measured:
        raise FieldError(("text",), "is 300 tokens long for SmolLM2-135M-Instruct; shorten it by 44.")

    with pytest.raises(ControlError) as err:
        measured("sampling", {"source": "smollm2"}, "query", too_long)
    assert err.value.item() == {
        "loc": ["query", "text"],
        "field": "text",
        "msg": "Your text is 300 tokens long for SmolLM2-135M-Instruct; shorten it by 44.",
        "type": "value_error",
    }


def test_the_pages_live_state():
    asked = (ask("shapes", "smollm2"), ask("kv", "smollm2"))
    done, waiting = Measured("done", data={}), Measured("waiting", stage="queued", place=2)
    assert live({}, ()) == {"status": "off", "poll_ms": None}
    assert live({"shapes": done}, asked) == {"status": "absent", "poll_ms": None}
    assert live({"shapes": done, "kv": waiting}, asked) == {"status": "waiting", "poll_ms": POLL_MS}
    assert live({"shapes": done, "kv": Measured("failed", message="x")}, asked)["status"] == "failed"
    assert live({"shapes": done, "kv": done}, asked) == {"status": "done", "poll_ms": None}


@pytest.mark.parametrize(
    "m,text",
    [
        (None, "Run: this runs where the lab is served (attnlab serve); called on its own, the lab has no "
         "model to ask."),
        (Measured("waiting", stage="queued", place=2), "Run: waiting, 2nd in line…"),
        (Measured("waiting", stage="queued", place=0), "Run: starting…"),
        (Measured("waiting", stage="loading", title="SmolLM2-135M-Instruct"),
         "Run: loading SmolLM2-135M-Instruct (once per server)…"),
        (Measured("waiting", stage="running", done=3, total=5, unit="trace"),
         "Run: running, 3 of 5 texts done…"),
        (Measured("waiting", stage="running", done=0, total=1, unit="step"),
         "Run: running, 0 of 1 step done…"),
        (Measured("waiting", stage="running"), "Run: running…"),
        (Measured("waiting", stage="queued", message="The model is busy: 33 requests are ahead of you."),
         "Run: The model is busy: 33 requests are ahead of you."),
        (Measured("failed", message="The worker stopped."), "Run: it could not run. The worker stopped."),
        (Measured("failed", problem="cannot be loaded: install it", title="all-MiniLM-L6-v2"),
         "Run: it could not run. all-MiniLM-L6-v2 cannot be loaded: install it."),
    ],
)  # fmt: skip
def test_the_words_for_a_run_not_done(m, text):
    assert status_words(m, "Run")["text"] == text
