"""Next-token probabilities against Hugging Face transformers (same GGUF, same dtype on both sides)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from attnlab.lab.realmodel.nexttoken import next_token
from attnlab.models.sampling import Sampling, cut

pytestmark = [pytest.mark.models, pytest.mark.oracle]

PROMPTS = ["The capital of France is", "Once upon a time there was a", "def add(a, b):\n    return"]
TOP = 10


@pytest.fixture(scope="module")
def exact_pair(smollm2, hf_smollm2):
    """Our float64 SmolLM2 and transformers' model cast to float64: the same dtype on both sides."""
    import torch

    model, _ = hf_smollm2
    theirs = copy.deepcopy(model).to(torch.float64)
    yield smollm2.with_dtype(np.float64), theirs
    del theirs


@pytest.mark.parametrize("prompt", PROMPTS, ids=range(len(PROMPTS)))
def test_next_token_distribution_equals_transformers_at_every_position(exact_pair, prompt):
    import torch

    ours, theirs = exact_pair
    ids = ours.encode(prompt)
    logits = ours.logits(ids)
    with torch.no_grad():
        hf = theirs(torch.tensor([ids])).logits[0]
    hf_p = torch.softmax(hf, dim=-1).numpy()
    hf_top = torch.topk(hf, TOP).indices.numpy()
    for position in range(len(ids)):
        view = next_token(logits[position], Sampling(temperature=1.0), decode=str, top=TOP)
        assert [e["id"] for e in view["entries"]] == hf_top[position].tolist()
        assert max(abs(e["p"] - hf_p[position, e["id"]]) for e in view["entries"]) <= 1e-5
        assert [e["p"] for e in view["entries"]] == [e["p_model"] for e in view["entries"]]


@pytest.mark.parametrize(
    ("temperature", "top_k", "top_p"),
    [(0.7, None, 1.0), (1.0, 50, 1.0), (1.0, None, 0.9), (0.8, 40, 0.95), (1.3, 5, 0.5), (0.5, 1, 1.0)],
)
def test_filtering_equals_transformers_logits_processors(smollm2, hf_smollm2, temperature, top_k, top_p):
    import torch
    from transformers.generation.logits_process import (
        LogitsProcessorList,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    warpers = LogitsProcessorList([TemperatureLogitsWarper(temperature)])
    if top_k:
        warpers.append(TopKLogitsWarper(top_k))
    if top_p < 1.0:
        warpers.append(TopPLogitsWarper(top_p))
    for prompt in PROMPTS:
        logits = smollm2.logits(smollm2.encode(prompt))[-1].astype(np.float64)  # the real logits
        ids = torch.tensor([[0]])
        warped = warpers(ids, torch.tensor(logits)[None])[0]
        theirs = torch.softmax(warped, dim=-1).numpy()
        ours = cut(logits, Sampling(temperature=temperature, top_k=top_k, top_p=top_p)).p
        np.testing.assert_array_equal(ours > 0, theirs > 0)  # the same tokens kept
        assert np.abs(ours - theirs).max() <= 1e-12
