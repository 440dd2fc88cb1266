"""Circuits' problems never name their field, and each reads as the page shows it."""

from __future__ import annotations

import inspect

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits import problems
from attnlab.lab.fields import error_words, plain

SAMPLES = {
    "not_an_index": (1.5,), "too_long": (300, 256), "lengths_differ": (9, 4), "same_answers": (7,),
    "not_two_answers": ("x",), "unknown_choice": ("x", ("a", "b")), "edits_below": (3, 5),
    "already_edited": (), "not_a_head": ("x",), "no_unembedding": ("minilm",), "wrong_shape": ((2,), (3,)),
    "no_heads": (), "unreadable_head": ("x",), "too_many_heads": (65, 64),
    "not_one_token": (" Parisian", ["␣Paris", "ian"], "SmolLM2"), "layers_reversed": (5, 3),
    "encoder_has_no": ("logit lens", "MiniLM"), "no_such_job": (), "no_such_head": ("L31H6", "m", 30, 9),
    "same_answer": ("␣Paris",), "no_tokens": ("SmolLM2",),
}  # fmt: skip

FIELDS = ("heads", "corrupt", "clean", "right", "other", "layer", "position", "answers", "model", "sweep")


def test_every_problem_is_sampled():
    functions = inspect.getmembers(problems, inspect.isfunction)
    names = {n for n, f in functions if f.__module__ == problems.__name__}
    assert names == set(SAMPLES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_problem_never_names_its_field(name):
    text = getattr(problems, name)(*SAMPLES[name])
    if name == "no_such_job":  # a whole sentence, located at the job id
        assert text == "This result is no longer kept: run it again"
        return
    for field in FIELDS:
        assert not text.lower().startswith(field)
    assert plain(text)


def test_the_numerics_raise_the_labs_words():
    from attnlab.models.errors import Refusal

    refused = Refusal(("corrupt",), "circuits.lengths_differ", 9, 4)  # as the circuits core raises it
    assert refused.problem == problems.lengths_differ(9, 4)  # in these words
    error = FieldError(("corrupt",), problems.lengths_differ(9, 4))
    assert error_words(("body", *error.loc), error.problem, shape="realmodel") == (
        "Corrupted prompt is 4 tokens long and the clean prompt 9; patching needs two prompts of the same "
        "token length"
    )
    assert error_words(("body", "heads"), problems.no_heads(), shape="realmodel") == (
        "Heads to switch off names no head: give at least one, such as L18 H6"
    )
