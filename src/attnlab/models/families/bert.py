"""BERT-style sentence encoders from a folder: the Architecture its ``config.json`` gives, and the model.

A sentence-transformers folder (all-MiniLM-L6-v2) holds ``config.json`` (Hugging Face's
``BertConfig``), ``sentence_bert_config.json`` (``max_seq_length``), ``model.safetensors`` and
``tokenizer.json``. A sentence embedding is:

    1) embed:  x = LayerNorm(word[id] + position[p] + token_type[0])     (B, T, d_model)
    2) encode: n_layer x  h = LayerNorm(x + MHA(x)); x = LayerNorm(h + FFN(h))   (post-norm)
    3) pool:   the mean of the real tokens' rows (the mask leaves padding out)  (B, d_model)
    4) scale to unit length (L2).

Batches are right-padded to their longest text; the key padding (``True`` = real token) keeps
padding out of every attention row, so a text's embedding does not depend on its neighbours.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from attnlab.engine.block import BlockParams
from attnlab.engine.layers import LayerNormParams, MLPParams
from attnlab.engine.model import Architecture, Weights
from attnlab.engine.multihead import AttentionParams
from attnlab.models.model import Encoder

_ACTIVATIONS = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "relu": "relu"}


def architecture(config: dict) -> Architecture:
    """The Architecture a ``BertConfig`` gives: a post-norm encoder whose head is the pooled sentence."""
    d_model, n_head = int(config["hidden_size"]), int(config["num_attention_heads"])
    return Architecture(
        family="bert",
        causal=False,
        n_layer=int(config["num_hidden_layers"]),
        d_model=d_model,
        n_head=n_head,
        n_kv_head=n_head,
        d_head=d_model // n_head,
        d_ff=int(config["intermediate_size"]),
        d_vocab=int(config["vocab_size"]),
        n_ctx=int(config.get("max_position_embeddings", 512)),
        norm="layer",
        norm_eps=float(config.get("layer_norm_eps", 1e-12)),
        norm_placement="post",
        final_norm=False,
        embed_norm=True,
        positions="learned",
        token_types=True,
        mlp="plain",
        activation=_ACTIVATIONS.get(config.get("hidden_act", "gelu"), config.get("hidden_act", "gelu")),
        tied_output=False,
        head="pooled",
    )


def weights(tensors: dict[str, np.ndarray], arch: Architecture, *, dtype=np.float32) -> Weights:
    """The engine's weights from a BERT checkpoint's tensors (``nn.Linear`` stores (out, in)).

    Vectors and embeddings are used as read; the matrices are transposed into a copy once: BLAS
    encoded fewer sentences a second on transposed views (docs/performance.md).
    """

    def get(name: str, transpose: bool = False) -> np.ndarray:
        a = tensors[name]
        if transpose:  # nn.Linear stores (out, in): transpose once
            return np.ascontiguousarray(a.T, dtype=dtype)
        return a if a.dtype == dtype else a.astype(dtype)

    def norm(prefix: str) -> LayerNormParams:
        return LayerNormParams(get(prefix + ".weight"), get(prefix + ".bias"), arch.norm_eps)

    blocks = []
    for i in range(arch.n_layer):
        p = f"encoder.layer.{i}."
        attn = AttentionParams(
            w_q=get(p + "attention.self.query.weight", True),
            w_k=get(p + "attention.self.key.weight", True),
            w_v=get(p + "attention.self.value.weight", True),
            w_o=get(p + "attention.output.dense.weight", True),
            b_q=get(p + "attention.self.query.bias"),
            b_k=get(p + "attention.self.key.bias"),
            b_v=get(p + "attention.self.value.bias"),
            b_o=get(p + "attention.output.dense.bias"),
        )
        ffn = MLPParams(
            w_1=get(p + "intermediate.dense.weight", True),
            b_1=get(p + "intermediate.dense.bias"),
            w_2=get(p + "output.dense.weight", True),
            b_2=get(p + "output.dense.bias"),
            activation=arch.activation,
        )
        blocks.append(BlockParams(attn=attn, mlp=ffn, norm_1=norm(p + "attention.output.LayerNorm"),
                                  norm_2=norm(p + "output.LayerNorm")))  # fmt: skip
    return Weights(
        embed=get("embeddings.word_embeddings.weight"),
        pos_embed=get("embeddings.position_embeddings.weight"),
        type_embed=get("embeddings.token_type_embeddings.weight"),
        embed_norm=norm("embeddings.LayerNorm"),
        blocks=tuple(blocks),
    )


def load(folder: Path | str, *, name: str, dtype=np.float32) -> Encoder:
    """Read a sentence-transformers BERT folder: its weights (float32 as stored, unless ``dtype``) and
    tokenizer. The file is opened with ``safe_open`` (memory-mapped) and each tensor read once."""
    from safetensors import safe_open

    from attnlab.models.tokens import minilm_tokenizer

    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text())
    st_file = folder / "sentence_bert_config.json"
    st = json.loads(st_file.read_text()) if st_file.exists() else {}
    arch = architecture(config)
    with safe_open(str(folder / "model.safetensors"), framework="numpy") as f:
        tensors = {n: f.get_tensor(n) for n in f.keys()}
    dtype = np.dtype(dtype)

    def reload(path_to: str) -> Encoder:
        return load(folder, name=name, dtype=np.dtype(path_to))

    return Encoder(
        name=name,
        arch=arch,
        weights=weights(tensors, arch, dtype=dtype),
        tokenizer=minilm_tokenizer(folder / "tokenizer.json"),
        path=dtype.name,
        source=folder,
        reload=reload,
        max_length=int(st.get("max_seq_length", 256)),
        pad_id=int(config.get("pad_token_id", 0)),
    )
