"""A program's own reading of the model file (program/model_file.py): the weights attnlab holds, bit for bit
and laid out alike (matrices by rows, q|k|v and gate|up side by side), and the file it finds by itself."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from attnlab.engine.fast.ops import _columns
from attnlab.lab.realmodel.program import model_file
from attnlab.models import files

pytestmark = pytest.mark.models


def arrays(w) -> dict[str, np.ndarray]:
    """Every array of Weights ``w`` by its path (blocks.3.attn.w_q, final_norm.weight ...)."""
    out = {"embed": w.embed}
    for name in ("pos_embed", "type_embed"):
        if getattr(w, name) is not None:
            out[name] = getattr(w, name)
    for name in ("embed_norm", "final_norm"):
        norm = getattr(w, name)
        if norm is not None:
            out |= {f"{name}.{k}": v for k, v in vars(norm).items() if isinstance(v, np.ndarray)}
    for i, b in enumerate(w.blocks):
        for part in ("attn", "mlp", "norm_1", "norm_2"):
            out |= {f"blocks.{i}.{part}.{k}": v for k, v in vars(getattr(b, part)).items()
                    if isinstance(v, np.ndarray)}  # fmt: skip
    return out


def same_layout(mine: dict, theirs: dict) -> None:
    assert mine.keys() == theirs.keys()
    for name, a in theirs.items():
        b = mine[name]
        assert (b.dtype, b.shape, b.strides) == (a.dtype, a.shape, a.strides), name
        assert b.tobytes() == a.tobytes(), name


def test_smollm2s_float32_path_read_with_gguf_is_attnlabs(smollm2_f32):
    m = smollm2_f32
    w = model_file.gguf_weights(files.smollm2_gguf(), m.arch)
    same_layout(arrays(w), arrays(m.weights))
    assert w.final_norm.eps == m.weights.final_norm.eps
    for mine, theirs in zip(w.blocks, m.weights.blocks):  # one product a group, as the fast path reads them
        for names in (("w_q", "w_k", "w_v"), ("w_gate", "w_up")):
            part = mine.attn if names[0] == "w_q" else mine.mlp
            joined = _columns(*(getattr(part, n) for n in names))
            assert joined is not None and joined.flags.c_contiguous
        assert theirs.attn.w_o.flags.c_contiguous and mine.attn.w_o.flags.c_contiguous


def test_minilms_weights_read_with_safetensors_are_attnlabs(minilm):
    w = model_file.safetensors_weights(files.minilm_dir(), minilm.arch)
    same_layout(arrays(w), arrays(minilm.weights))


def test_a_program_finds_the_shipped_file_or_takes_the_one_it_is_given(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "argv", ["program.py"])
    assert model_file.model_path("smollm2").resolve() == Path(files.smollm2_gguf()).resolve()
    assert model_file.model_path("minilm").resolve() == Path(files.minilm_dir()).resolve()
    monkeypatch.setattr(sys, "argv", ["program.py", str(tmp_path / "mine.gguf")])
    assert model_file.model_path("smollm2") == tmp_path / "mine.gguf"
