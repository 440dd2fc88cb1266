"""BERT-style encoders (BERT, MiniLM, RoBERTa, DistilBERT): the Architecture a ``config.json`` gives.

A sentence-transformers folder (all-MiniLM-L6-v2) holds ``config.json`` (Hugging Face's
``BertConfig``), ``sentence_bert_config.json`` (``max_seq_length``), ``model.safetensors`` and
``tokenizer.json``. A sentence embedding is:

    1) embed:  x = LayerNorm(word[id] + position[p] + token_type[0])     (B, T, d_model)
    2) encode: n_layer x  h = LayerNorm(x + MHA(x)); x = LayerNorm(h + FFN(h))   (post-norm)
    3) pool:   the mean of the real tokens' rows (the mask leaves padding out)  (B, d_model)
    4) scale to unit length (L2).

Batches are right-padded to their longest text; the key padding (``True`` = real token) keeps
padding out of every attention row, so a text's embedding does not depend on its neighbours.

The families differ in their files, not their arithmetic:

==========  =========================================================================================
bert        token types (row 0 added), absolute positions; names under ``bert.`` or none. Defaults
            (BertConfig): ``layer_norm_eps`` 1e-12, ``hidden_act`` gelu, 512 positions.
roberta     BERT's names under ``roberta.``; position p reads row p + padding_idx + 1 of its table
            (``pad_token_id``, default 1), so it holds max_position_embeddings - padding_idx - 1
            positions.
distilbert  no token types; its own names (``transformer.layer.{i}.attention.q_lin`` ...,
            ``sa_layer_norm``, ``ffn.lin1``, ``output_layer_norm``) and keys (``dim``, ``n_heads``,
            ``n_layers``, ``hidden_dim``, ``activation``); eps 1e-12.
==========  =========================================================================================

Only absolute positions are read (``position_embedding_type`` other than "absolute" is refused by
name). :func:`load` opens the shipped MiniLM (its tensors read once through ``safe_open``, bit for
bit as before); any other folder opens through :mod:`attnlab.models.families.checkpoint`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from attnlab.engine.block import BlockParams
from attnlab.engine.layers import LayerNormParams, MLPParams
from attnlab.engine.model import Architecture, Weights
from attnlab.engine.multihead import AttentionParams
from attnlab.models.errors import Refusal
from attnlab.models.families.errors import UnsupportedSetting
from attnlab.models.families.settings import Settings, activation, build, head_size
from attnlab.models.model import Encoder

FAMILIES = ("bert", "roberta", "distilbert")


def architecture(config: dict) -> Architecture:
    """The Architecture a ``BertConfig`` gives: a post-norm encoder whose head is the pooled sentence
    (:func:`from_config` on the family "bert")."""
    return from_config(Settings(config, path="config.json"), "bert")


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
        if path_to not in ("float32", "float64"):  # float weights only: no blocks to multiply on
            raise Refusal(("weights",), "unknown_weights", path_to, ("float32", "float64"))
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


# -- any BERT, RoBERTa or DistilBERT folder ----------------------------------------------------------


def from_config(s: Settings, family: str) -> Architecture:
    """The Architecture a ``config.json`` of ``family`` (one of :data:`FAMILIES`) gives: a post-norm
    encoder whose head is the pooled sentence (the mean of the real tokens, unit length)."""
    distil = family == "distilbert"
    keys = ("dim", "n_heads", "n_layers", "hidden_dim") if distil else \
        ("hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size")  # fmt: skip
    d_model, n_head = s.whole(keys[0]), s.whole(keys[1])
    if (kind := s.get("position_embedding_type", "absolute")) != "absolute":
        raise UnsupportedSetting(path=s.path, key="position_embedding_type", value=kind,
                                 supported=("absolute",))  # fmt: skip
    offset = s.whole("pad_token_id", 1, minimum=0) + 1 if family == "roberta" else 0
    n_pos = s.whole("max_position_embeddings", 512)
    if n_pos <= offset:
        from attnlab.models.families.errors import BadSetting

        raise BadSetting(path=s.path, key="max_position_embeddings", value=n_pos,
                         need=f"above padding_idx + 1 = {offset}")  # fmt: skip
    return build(
        s,
        keys={"n_head": keys[1], "n_kv_head": keys[1], "d_head": f"{keys[0]} / {keys[1]}"},
        family=family,
        causal=False,
        n_layer=s.whole(keys[2]),
        d_model=d_model,
        n_head=n_head,
        n_kv_head=n_head,
        d_head=head_size(s, d_model, n_head, key="attention_head_size", width_key=keys[0], heads_key=keys[1]),
        d_ff=s.whole(keys[3]),
        d_vocab=s.whole("vocab_size"),
        n_ctx=n_pos - offset,
        norm="layer",
        norm_eps=1e-12 if distil else s.number("layer_norm_eps", 1e-12, zero=True),
        norm_placement="post",
        final_norm=False,
        embed_norm=True,
        positions="learned",
        position_offset=offset,
        token_types=not distil,
        mlp="plain",
        activation=activation(s, "activation" if distil else "hidden_act", "gelu"),
        tied_output=False,
        head="pooled",
    )


# Each family's tensor names (prefix added): embeddings, then per layer ({i}).
_NAMES = {
    "bert": dict(
        word="embeddings.word_embeddings.weight", position="embeddings.position_embeddings.weight",
        type="embeddings.token_type_embeddings.weight", embed_norm="embeddings.LayerNorm",
        q="encoder.layer.{i}.attention.self.query", k="encoder.layer.{i}.attention.self.key",
        v="encoder.layer.{i}.attention.self.value", o="encoder.layer.{i}.attention.output.dense",
        norm_1="encoder.layer.{i}.attention.output.LayerNorm", fc_1="encoder.layer.{i}.intermediate.dense",
        fc_2="encoder.layer.{i}.output.dense", norm_2="encoder.layer.{i}.output.LayerNorm",
    ),
    "distilbert": dict(
        word="embeddings.word_embeddings.weight", position="embeddings.position_embeddings.weight",
        type=None, embed_norm="embeddings.LayerNorm",
        q="transformer.layer.{i}.attention.q_lin", k="transformer.layer.{i}.attention.k_lin",
        v="transformer.layer.{i}.attention.v_lin", o="transformer.layer.{i}.attention.out_lin",
        norm_1="transformer.layer.{i}.sa_layer_norm", fc_1="transformer.layer.{i}.ffn.lin1",
        fc_2="transformer.layer.{i}.ffn.lin2", norm_2="transformer.layer.{i}.output_layer_norm",
    ),
}  # fmt: skip
_NAMES["roberta"] = _NAMES["bert"]


def store_weights(t, arch: Architecture) -> Weights:
    """The weights of a BERT-style encoder from store ``t`` (:mod:`attnlab.models.families.store`): names
    as the family writes them, under the model's prefix (``bert.``, ``roberta.``, ``distilbert.`` or none)."""
    names = _NAMES[arch.family]
    prefix = next((p for p in ("", f"{arch.family}.") if t.has(p + names["word"])), "")
    d, ff, eps = arch.d_model, arch.d_ff, arch.norm_eps

    def ln(name: str) -> LayerNormParams:
        weight, bias = t.vector(prefix + name + ".weight", (d,)), t.vector(prefix + name + ".bias", (d,))
        return LayerNormParams(weight, bias, eps)

    def dense(name: str, n_out: int, n_in: int):
        return t.linear(prefix + name + ".weight", (n_out, n_in)), t.vector(prefix + name + ".bias", (n_out,))

    blocks = []
    for i in range(arch.n_layer):
        n = {key: value.format(i=i) for key, value in names.items() if value is not None}
        (w_q, b_q), (w_k, b_k), (w_v, b_v), (w_o, b_o) = (dense(n[x], d, d) for x in "qkvo")
        (w_1, b_1), (w_2, b_2) = dense(n["fc_1"], ff, d), dense(n["fc_2"], d, ff)
        blocks.append(
            BlockParams(
                attn=AttentionParams(w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o, b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o),
                mlp=MLPParams(w_1=w_1, b_1=b_1, w_2=w_2, b_2=b_2, activation=arch.activation),
                norm_1=ln(n["norm_1"]),
                norm_2=ln(n["norm_2"]),
            )
        )
    type_name = names["type"]
    return Weights(
        embed=t.embedding(prefix + names["word"], (arch.d_vocab, d), blocks=False),
        pos_embed=t.table(prefix + names["position"], arch.n_ctx + arch.position_offset, d),
        type_embed=t.table(prefix + type_name, 1, d) if type_name else None,
        embed_norm=ln(names["embed_norm"]),
        blocks=tuple(blocks),
    )
