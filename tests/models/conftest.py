"""Session-wide models and oracles: each loads once per test run.

Our models come from :mod:`attnlab.models.registry` (the same shared instances
the CLI and the API use). The oracles (sentence-transformers, Hugging Face
transformers on the same GGUF, both float32 on the CPU) load from the shipped
files only: the hub is switched off before anything imports it.
"""

from __future__ import annotations

import os
import warnings

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

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
