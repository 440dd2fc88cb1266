"""ModelView: our engine runs MiniLM in the kernel; the widget draws that trace's own numbers."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine.errors import FieldError
from attnlab.models import files, registry
from attnlab.widgets import ModelView

pytestmark = pytest.mark.models


@pytest.fixture(autouse=True)
def minilm_installed():
    try:
        files.locate(files.MINILM)
    except files.ModelNotInstalled as error:
        pytest.skip(str(error))


def test_minilm_runs_in_the_kernel_and_its_weights_are_drawn():
    v = ModelView("minilm", "The cat sat on the mat.")
    trace = registry.get_model("minilm").trace("The cat sat on the mat.")
    assert [t["exact"] for t in v._tokens] == trace.tokens
    assert [t["label"] for t in v._tokens] == trace.tokens  # MiniLM's word pieces need no visible marks
    assert np.array_equal(v.weights, trace.weights)
    v.layer, v.head = 3, 5
    assert v._head["weights"] == trace.weights[3, 5].astype(float).tolist()
    assert v._model["n_layer"] == trace.n_layer and v._model["n_head"] == trace.n_head


def test_bad_model_or_text_is_refused_naming_the_field():
    with pytest.raises(FieldError, match="gpt") as info:
        ModelView("gpt", "hello")
    assert info.value.loc == ("model",)
    with pytest.raises(ValueError, match="text is empty"):
        ModelView("minilm", "   ")
    with pytest.raises(FieldError) as info:
        ModelView("minilm", "word " * 2000)
    assert info.value.loc == ("text",)


def test_whitespace_tokens_show_visibly_and_keep_their_exact_text():
    try:
        files.locate(files.SMOLLM2)
    except files.ModelNotInstalled as error:
        pytest.skip(str(error))
    text = "The cat  sat\non\tthe mat."
    v = ModelView("smollm2", text)
    shown = {t["exact"]: t["label"] for t in v._tokens}
    assert (shown[" "], shown["\n"], shown["\t"]) == ("␣", "⏎", "⇥")
    assert [t["exact"] for t in v._tokens] == registry.get_model("smollm2").trace(text).tokens
    v.focus = 6  # the tab's query: its row names every key visibly, the exact text beside
    assert [(s["label"], s["exact"]) for s in v._row["sources"]][4] == ("⏎", "\n")
    assert v._row["title"] == "Query 6 (⇥): its share of each key, at full precision"
    assert v._names["words"]["head_heading"] == "One head" and v._names["layers"][0] == "layer 0"
