"""Session-wide models and oracles: each loads once per test run.

Our models come from :mod:`attnlab.models.registry` (the same shared instances
the CLI and the API use). The oracles (sentence-transformers, Hugging Face
transformers on the same GGUF, both float32 on the CPU) load from the shipped
files only: the hub is switched off before anything imports it.

For the API tests: ``client`` (the real app in a ``TestClient``, one per module; a module
may define its own) and ``traced`` (``traced(model, text)`` runs a trace job to its end);
``reference_row(trace, layer, head, query)``: ``trace_query`` on a trace's own q, keys and values,
the reference the views and the bridge are compared with (computed here, apart from their code).
"""

from __future__ import annotations

import os
import time
import warnings

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from attnlab.lab.realmodel.query import row_labels
from attnlab.models import files  # noqa: E402


def _installed(shipped: files.Shipped) -> str | None:
    try:
        files.locate(shipped)
    except files.ModelNotInstalled as error:
        return str(error)
    return None


MINILM_MISSING = _installed(files.MINILM)
SMOLLM2_MISSING = _installed(files.SMOLLM2)


def _oracle(module: str) -> None:
    pytest.importorskip("torch", reason="the oracle needs torch==2.13.0 (see scripts/test.sh)")
    pytest.importorskip(module, reason=f"the oracle needs {module} (see scripts/test.sh)")


@pytest.fixture(scope="session")
def minilm():
    if MINILM_MISSING:
        pytest.skip(MINILM_MISSING)
    from attnlab.models.registry import get_model

    return get_model("minilm")


@pytest.fixture(scope="session")
def smollm2():
    if SMOLLM2_MISSING:
        pytest.skip(SMOLLM2_MISSING)
    from attnlab.models.registry import get_model

    return get_model("smollm2")


@pytest.fixture(scope="module")
def client():
    """The real app, its lifespan run, in a TestClient."""
    from fastapi.testclient import TestClient

    from attnlab.web.app import create_app

    with TestClient(create_app()) as c:
        yield c


@pytest.fixture
def traced(client):
    """``traced(model, text)``: post a trace job to ``client`` and wait for it (5 minutes at most)."""

    def run(model: str, text: str) -> dict:
        job = client.post("/api/models/jobs", json={"model": model, "text": text}).json()
        deadline = time.monotonic() + 300
        while (job := client.get(f"/api/models/jobs/{job['id']}").json())["status"] not in ("done", "error"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert job["status"] == "done", job["message"]
        return job

    return run


@pytest.fixture(scope="session")
def reference_row():
    """``reference_row(trace, layer, head, query)``: ``trace_query`` on that row's real vectors."""
    from attnlab.engine.single import trace_query

    def row(trace, layer: int, head: int, query: int):
        g = trace.kv_head(head)
        return trace_query(
            trace.q[layer, head, query].astype(float).tolist(),
            trace.k[layer, g].astype(float).tolist(),
            trace.v[layer, g].astype(float).tolist(),
            labels=row_labels(trace),
            allowed=trace.allowed[query].tolist(),
            scale=trace.scale,
        )

    return row


@pytest.fixture(scope="session")
def st_oracle():
    """sentence-transformers' all-MiniLM-L6-v2 from the package's folder, float32, CPU."""
    if MINILM_MISSING:
        pytest.skip(MINILM_MISSING)
    _oracle("sentence_transformers")
    from sentence_transformers import SentenceTransformer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # third-party deprecation notices are not our failures
        return SentenceTransformer(str(files.minilm_dir()), device="cpu")


@pytest.fixture(scope="session")
def hf_smollm2():
    """Hugging Face's SmolLM2 loaded from the same GGUF, dequantized to float32: (model, tokenizer)."""
    if SMOLLM2_MISSING:
        pytest.skip(SMOLLM2_MISSING)
    _oracle("transformers")
    pytest.importorskip("accelerate", reason="the oracle needs accelerate (see scripts/test.sh)")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    path = files.smollm2_gguf()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = AutoModelForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, dtype=torch.float32
        )
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model.eval()
    return model, tokenizer
