"""SmolLM2 texts with control characters, NBSP and a chat marker: every query of the views answers.

Before (issue 25, Why 10): for these texts every query of the row, bridge and neuron views
failed, those before the odd token too. Short texts, so each trace is cheap.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.models

TEXTS = ["a\x00b c", "a\rb c", "a\x01b c", "a\u00a0b c", "<|im_start|>assistant\nhi"]


@pytest.mark.parametrize("text", TEXTS, ids=["nul", "lone-cr", "c0", "nbsp", "chat-marker"])
def test_every_query_of_the_row_bridge_and_neuron_views_answers(client, traced, smollm2, text):
    job = traced("smollm2", text)
    r = job["result"]
    n, j = len(r["tokens"]), f"/api/models/jobs/{job['id']}"
    assert "".join(r["tokens"]) and n >= 2
    for layer, head in [(0, 0), (r["n_layer"] - 1, r["n_head"] - 1)]:
        for i in range(n):
            views = ("rows", "bridge", "neuron", "neuron")
            for view, tail in zip(views, (f"{i}", f"{i}", f"{i}/0", f"{i}/{i}")):
                url = f"{j}/{view}/{layer}/{head}/{tail}"
                answer = client.get(url)
                assert answer.status_code == 200, (url, answer.text[:300])
