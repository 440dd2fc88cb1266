"""The largest answers of a kept trace (web/realmodel/jobs.py's layer route, and every GET's stated maximum).

A layer is written one head at a time; its JSON must be the very bytes the whole
``LayerOut`` gives (``model_dump_json``), as before. And every GET route of a kept trace
stays within the maximum docs/real-model-api.md states for it, at 256 tokens (the cap),
on the last layer, head and token, as ``benchmarks/bench_load.py`` (phase 4) measures them.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from attnlab.lab.realmodel.kinds import layer_profiles
from attnlab.lab.realmodel.modelview import head_numbers
from attnlab.web.realmodel import line
from attnlab.web.realmodel.schema import HeadOut, LayerOut

pytestmark = pytest.mark.models

DOC = Path(__file__).resolve().parents[3] / "docs" / "real-model-api.md"
TEXTS = {  # 256 tokens each, by the model's own count (benchmarks/bench_load.py's, phase 4)
    "smollm2": " ".join(["the cat sat on the mat and"] * 37)[: -len(" the mat and")],
    "minilm": " ".join(["a cat sat on the mat and"] * 36) + " a cat",
}


def whole_layer(job_id: str, layer: int, *, details: bool = False, head: int | None = None) -> str:
    """The layer's answer as it was built before: every head in one ``LayerOut``."""
    t = line.done(job_id).trace
    heads = []
    for h, p in enumerate(layer_profiles(t, layer)):
        if head is not None and h != head:
            continue
        w = t.head_weights(layer, h).astype(float)
        extra = {}
        if details:
            g = t.kv_head(h)
            scores = np.where(t.allowed, t.head_scores(layer, h).astype(float), np.nan).tolist()
            extra = {
                "q": t.q[layer, h].astype(float).tolist(),
                "k": t.k[layer, g].astype(float).tolist(),
                "v": t.v[layer, g].astype(float).tolist(),
                "scores": [[None if x != x else x for x in row] for row in scores],
            }
        heads.append(HeadOut(head=h, kv_head=t.kv_head(h), kind=p["kind"], weights=w.tolist(),
                             **head_numbers(p, w, t.allowed), **extra))  # fmt: skip
    return LayerOut(job=job_id, layer=layer, tokens=t.tokens, allowed=t.allowed.tolist(),
                    heads=heads).model_dump_json()  # fmt: skip


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_a_layer_written_head_by_head_is_the_whole_layouts_bytes(client, traced, model, request):
    request.getfixturevalue(model)
    job = traced(model, "The cat sat on the mat. It purred, and then it slept.")
    last = job["result"]["n_layer"] - 1
    for layer, query, kw in [
        (0, "", {}),
        (last, "", {}),
        (last, "?head=1", {"head": 1}),
        (1, "?head=0&details=true", {"head": 0, "details": True}),
    ]:
        r = client.get(f"/api/models/jobs/{job['id']}/layers/{layer}{query}")
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        assert r.content == whole_layer(job["id"], layer, **kw).encode(), (layer, query)


UNITS = {"B": 1, "kB": 1_000, "MB": 1_000_000}


def stated_maxima() -> dict[str, int]:
    """The table of docs/real-model-api.md's "Largest answers": route -> its stated maximum in bytes."""
    text = DOC.read_text(encoding="utf-8").split("### Largest answers", 1)[1].split("\n## ", 1)[0]
    maxima = {}
    for row in re.findall(r"^\| `([^`]+)`[^|]*\|[^|]*\|[^|]*\| ([\d.,]+) (B|kB|MB) \|$", text, re.M):
        route, number, unit = row
        maxima[route] = int(float(number.replace(",", "")) * UNITS[unit])
    return maxima


def paths(job_id: str, n_layer: int, n_head: int, n: int) -> dict[str, str]:
    """Each route of the table at its largest: the last layer, head and token (as bench_load.py asks)."""
    j, L, H, last = f"/api/models/jobs/{job_id}", n_layer - 1, n_head - 1, n - 1
    return {
        "jobs/{id}": j,
        "layers/{l}": f"{j}/layers/{L}",
        "layers/{l}?details=true&head={h}": f"{j}/layers/{L}?details=true&head={H}",
        "heads/{l}/{h}": f"{j}/heads/{L}/{H}",
        "heads/{l}/{h}?packed=true": f"{j}/heads/{L}/{H}?packed=true",
        "rows/{l}/{h}/{i}": f"{j}/rows/{L}/{H}/{last}",
        "model-view": f"{j}/model-view",
        "neuron/{l}/{h}/{q}/{k}": f"{j}/neuron/{L}/{H}/{last}/0",
        "bridge/{l}/{h}/{i}": f"{j}/bridge/{L}/{H}/{last}",
        "journey/{i}": f"{j}/journey/{last}",
        "next/{i}?top=50": f"{j}/next/{last - 1}?top=50",
    }


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_every_get_of_a_256_token_trace_is_within_its_stated_maximum(client, traced, model, request):
    request.getfixturevalue(model)
    maxima = stated_maxima()
    job = traced(model, TEXTS[model])
    r = job["result"]
    assert len(r["tokens"]) == 256  # the cap: the largest trace a learner can make
    routes = paths(job["id"], r["n_layer"], r["n_head"], len(r["tokens"]))
    assert set(routes) == set(maxima)  # every route of the table, and only those
    for route, url in routes.items():
        answer = client.get(url)
        if route.startswith("next/") and model == "minilm":
            assert answer.status_code == 409  # an encoder predicts no next token
            continue
        assert answer.status_code == 200, (route, answer.text[:200])
        assert len(answer.content) <= maxima[route], (route, len(answer.content), maxima[route])
