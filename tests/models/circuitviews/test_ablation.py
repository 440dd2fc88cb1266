"""The ablation view on the real models: the numerics' probabilities, losses and moves, as shown."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine.errors import FieldError
from attnlab.models.circuits.ablation import ablate, layer_change, next_token_change
from attnlab.models.circuitviews.ablation import ablation_view

pytestmark = pytest.mark.models


def test_the_ablation_shows_the_numerics_probabilities_and_loss(smollm2, eiffel):
    v = ablation_view(smollm2, eiffel, [(18, 6), (17, 4)], how="mean")
    change = next_token_change(ablate(smollm2, eiffel, [(18, 6), (17, 4)], how="mean"))
    rows = v["positions"][:-1]
    assert [p["p_before"] for p in rows] == change["p_next_before"].tolist()
    assert [p["p_after"] for p in rows] == change["p_next_after"].tolist()
    assert [p["loss_after"] for p in rows] == change["loss_after"].tolist()
    assert v["mean_loss"]["claims"]["after"] == float(np.mean(change["loss_after"]))
    assert [t["id"] for t in v["positions"][-1]["top_after"]] == change["top_ids_after"][-1].tolist()
    with pytest.raises(FieldError) as caught:
        ablation_view(smollm2, eiffel, [(30, 0)])
    assert caught.value.loc == ("heads",)


def test_the_encoders_ablation_shows_how_the_last_layer_moved(minilm):
    ids = minilm.tokenize(["The cat sat on the mat."]).ids[0].tolist()
    v = ablation_view(minilm, ids, [(3, 1)], how="zero")
    expected = layer_change(ablate(minilm, ids, [(3, 1)]), 5)
    assert v["layer"] == 5 and [p["change"] for p in v["positions"]] == expected["change"].tolist()
    assert v["pooled"]["claims"]["cosine"] == expected["pooled_cosine"]
