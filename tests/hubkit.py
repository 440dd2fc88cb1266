"""A fake Hugging Face cache of tiny models (tests/familykit.py), and the registry pointed at it.

``fake_hub`` (session): a hub cache in the real layout (``familykit.hf_cache``: snapshots whose
files are relative symlinks into ``blobs/``) holding

- ``tiny/qwen2`` and ``tiny/gpt2``: the tiny folders (Qwen2 with a chat template, GPT-2 without);
- ``tiny/smollm2-gguf``: the tiny SmolLM2 as a Q8_0 GGUF (found as ``tiny/smollm2-gguf/smollm2-Q8_0.gguf``);
- ``tiny/short``: the tiny Llama-style SmolLM2 with ``max_position_embeddings`` 16 (a short context);
- ``tiny/broken``: a sharded folder missing its second shard (skipped: an unfinished download).

``found_models`` (per test): the registry searching that cache and no models folder
(``HF_HUB_CACHE`` set, ``ATTNLAB_MODELS_DIR`` unset for the test), so the found models are the
registry's entries; afterwards the registry searches what it searched before.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from familykit import hf_cache

QWEN2, GPT2, GGUF, SHORT = "tiny/qwen2", "tiny/gpt2", "tiny/smollm2-gguf/smollm2-Q8_0.gguf", "tiny/short"
SHORT_CONTEXT = 16


def short_folder(families, root: Path) -> Path:
    """The tiny SmolLM2 folder with a context of :data:`SHORT_CONTEXT` tokens."""
    folder = root / "short"
    if not folder.is_dir():
        shutil.copytree(families.folder("smollm2"), folder)
        config = json.loads((folder / "config.json").read_text())
        config["max_position_embeddings"] = SHORT_CONTEXT
        (folder / "config.json").write_text(json.dumps(config))
    return folder


def broken_folder(families, root: Path) -> Path:
    """The sharded tiny GPT-2 without its second shard."""
    folder = root / "broken"
    if not folder.is_dir():
        shutil.copytree(families.sharded("gpt2"), folder)
        shards = sorted(folder.glob("model-*-of-*.safetensors"))
        shards[1].unlink()
    return folder


@pytest.fixture(scope="session")
def fake_hub(families, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hubkit")
    repos = {
        QWEN2: families.folder("qwen2"),
        GPT2: families.folder("gpt2"),
        "tiny/smollm2-gguf": families.gguf("smollm2", "Q8_0"),
        SHORT: short_folder(families, root / "sources"),
        "tiny/broken": broken_folder(families, root / "sources"),
    }
    return hf_cache(root / "hub", repos)


@pytest.fixture
def found_models(fake_hub, monkeypatch) -> Path:
    """The registry's found models are ``fake_hub``'s (see the module docstring)."""
    monkeypatch.setenv("HF_HUB_CACHE", str(fake_hub))
    monkeypatch.setenv("ATTNLAB_MODELS_DIR", "")  # none (restored after the test)
    return fake_hub
