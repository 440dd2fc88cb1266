"""A circuits request checked before anything is queued, and the job's answer."""

from __future__ import annotations

import threading

import pytest

from attnlab.engine.errors import FieldError
from attnlab.models.circuitviews import asks
from attnlab.models.jobs.line import Jobs

pytestmark = pytest.mark.models  # the tokenizers count the texts


class Idle:
    """A model the job line never reaches while the test looks (its loader waits)."""

    def __init__(self) -> None:
        self.gate = threading.Event()

    def __call__(self, name):
        self.gate.wait(60)
        raise RuntimeError("not loaded in this test")


@pytest.fixture
def jobs():
    idle = Idle()
    line = Jobs(loader=idle, process=False)
    yield line
    idle.gate.set()
    line.shutdown()


def test_positions_are_counted_from_the_start_so_one_request_is_one_job(jobs):
    last = asks.start(jobs, "lens", model="smollm2", text="The cat sat.", position=-1)
    assert dict(last.arguments) == {"text": "The cat sat.", "position": 3, "token": None}
    assert asks.start(jobs, "lens", model="smollm2", text="The cat sat.", position=3) is last
    answer = asks.answer(jobs, last)
    assert (answer["kind"], answer["result"]) == ("lens", None)
    loading = "Loading SmolLM2-135M-Instruct (once per server)…"
    assert answer["stage_display"] in ("Waiting: at the model now", loading)


@pytest.mark.parametrize(
    ("kind", "fields", "loc", "problem"),
    [
        ("lens", {"model": "minilm", "text": "a", "position": -1}, ("model",),
         "cannot show a logit lens: all-MiniLM-L6-v2 is an encoder, with no next token and no unembedding"),
        ("attribution", {"model": "smollm2", "text": "The cat sat.", "position": 4}, ("position",),
         "4 does not exist; the text has tokens 0..3"),
        ("head", {"model": "smollm2", "text": "The cat.", "layer": 30, "head": 0, "position": 0}, ("layer",),
         "30 does not exist; smollm2 has layers 0..29"),
        ("head", {"model": "minilm", "text": "The cat.", "layer": 1, "head": 12, "position": 0}, ("head",),
         "12 does not exist; minilm has heads 0..11"),
        ("ablation", {"model": "smollm2", "text": " ", "heads": "L1H1", "how": "zero"}, ("text",),
         "is empty: type a sentence to look at"),
        ("ablation", {"model": "minilm", "text": "x", "heads": "L6H0", "how": "zero"}, ("heads",),
         "has L6H0, which minilm does not have: its layers are 0..5 and its heads 0..11"),
        ("patching", {"model": "smollm2", "clean": "The Eiffel Tower is in the city of", "corrupt": "Rome is",
                      "right": " Paris", "other": " Rome", "sweep": "residual", "site": "pre"}, ("corrupt",),
         "is 2 tokens long and the clean prompt 9; patching needs two prompts of the same token length"),
        ("patching", {"model": "smollm2", "clean": "a b", "corrupt": "a c", "right": " Paris",
                      "other": " Paris", "sweep": "residual", "site": "pre"}, ("other",),
         "is the same token as the right answer (␣Paris); give a different one"),
        ("patching", {"model": "smollm2", "clean": "a b", "corrupt": "a c", "right": "", "other": " Rome",
                      "sweep": "residual", "site": "pre"}, ("right",),
         "is empty: give one token of SmolLM2-135M-Instruct, such as ' Paris'"),
        ("patching", {"model": "minilm", "clean": "a b", "corrupt": "a c", "sweep": "heads",
                      "site": "pre", "first_layer": 4, "last_layer": 2}, ("last_layer",),
         "is 2, below the first layer 4; give a last layer of 4 or more"),
    ],
)
def test_a_request_the_model_cannot_answer_is_refused_at_its_field_before_it_is_queued(
    jobs, kind, fields, loc, problem
):
    with pytest.raises(FieldError) as caught:
        asks.start(jobs, kind, **fields)
    assert (caught.value.loc, caught.value.problem) == (loc, problem)
    assert jobs.computations == 0
