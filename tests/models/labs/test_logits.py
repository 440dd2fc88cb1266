"""The sampling lab's logits from a kept SmolLM2 trace (models/labs/logits.py), and the lab's shares on them:
what sampling with top-k draws from, as ``models.sampling.cut`` computes it on the whole row."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.live import Measured
from attnlab.lab.connections.sampling import CONTROLS, LAB
from attnlab.models.labs.logits import next_logits
from attnlab.models.sampling import Sampling, cut

pytestmark = pytest.mark.models


def test_the_largest_logits_and_the_labs_shares_on_them(smollm2):
    trace = smollm2.trace("The capital of France is", details=True)
    data = next_logits(trace, 50)
    row = np.asarray(trace.logits[-1], dtype=np.float64)
    assert data["vocab"] == row.size == 49152 and data["n_tokens"] == 5
    assert data["logits"] == sorted(data["logits"], reverse=True) and data["logits"][0] == row.max()
    assert data["logits"] == [float(row[i]) for i in data["ids"]]
    assert data["tokens"][0] == " Paris" and data["tokens"] == smollm2.token_labels(data["ids"])
    np.testing.assert_allclose(
        data["p_model"], cut(row, Sampling(temperature=1.0)).p_model[data["ids"]], rtol=1e-12
    )
    for k, t in ((10, 0.7), (50, 3.0), (2, 0.05)):
        values = read(CONTROLS, {"source": "smollm2", "k": k, "temperature": t}, "inputs")
        shown = LAB.answer(values, {"logits": Measured("done", data=data)})["data"]["p"]
        drawn = cut(row, Sampling(temperature=t, top_k=k)).p
        np.testing.assert_allclose(shown, drawn[data["ids"][:k]], rtol=1e-12, atol=1e-300)
