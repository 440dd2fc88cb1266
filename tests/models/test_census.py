"""The census's model part: one text's scores are the trace's; a process pool and Ray give the same bits."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from attnlab.lab.realmodel.census import SCORES
from attnlab.lab.realmodel.kinds import head_scores
from attnlab.models import census

pytestmark = pytest.mark.models

TEXTS = (
    "The cat sat on the mat. The cat sat on the mat.",
    "A line with no repeated word at all.",
    "red green blue red green blue",
    "One two three. One two three.",
)


def same(a: list[dict], b: list[dict]) -> bool:
    """Bit for bit: the same token counts, the same scores (or the same missing ones)."""
    for x, y in zip(a, b, strict=True):
        assert x["tokens"] == y["tokens"]
        for name in SCORES:
            if x["scores"][name] is None or y["scores"][name] is None:
                assert x["scores"][name] is y["scores"][name] is None, name
            else:
                assert np.array_equal(x["scores"][name], y["scores"][name]), name
    return True


def test_one_texts_scores_are_the_traces(smollm2):
    text = TEXTS[0]
    got = census.score_text(smollm2, "smollm2", text)
    trace = smollm2.trace(text, details=True)
    assert got["tokens"] == len(trace.tokens)
    for layer in (0, 17, 29):
        expected = head_scores(trace.layer_weights(layer), trace.allowed, trace.ids)
        for name in SCORES:
            assert np.array_equal(got["scores"][name][layer], expected[name]), (layer, name)
    assert got["scores"]["induction"].shape == (30, 9)
    alone = census.score_text(smollm2, "smollm2", TEXTS[1])
    assert alone["scores"]["induction"] is None and alone["scores"]["duplicate"] is None


def test_a_process_pool_and_ray_on_this_machine_give_the_same_numbers(smollm2, monkeypatch):
    ray = pytest.importorskip("ray", reason="the Ray test needs the ray extra (pip install 'attnlab[ray]')")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # no cluster named: a Ray instance on this machine
    here = [census.score_text(smollm2, "smollm2", t) for t in TEXTS]
    seen = []
    pooled = census.score_texts("smollm2", TEXTS, workers=2, progress=lambda d, n: seen.append((d, n)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert same(pooled, here)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Ray's own notices at start-up are not our failures
        on_ray = census.score_texts("smollm2", TEXTS, ray=True, progress=lambda d, n: seen.append((d, n)))
    assert not ray.is_initialized()  # the instance it started is shut down
    assert seen[4:] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert same(on_ray, here)
