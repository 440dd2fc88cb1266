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
    assert v._tokens == trace.tokens
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
