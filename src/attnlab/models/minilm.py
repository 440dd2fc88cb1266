"""all-MiniLM-L6-v2, a sentence encoder, run by attnlab's engine.

A post-norm BERT encoder (Wang et al. 2020, MiniLM; tuned by
sentence-transformers): 6 blocks, 12 heads of 32, d_model 384, GELU (erf)
feed-forward of 1536, LayerNorm eps 1e-12. A sentence embedding is:

    1) embed:  x = LayerNorm(word[id] + position[p] + token_type[0])     (B, T, 384)
    2) encode: 6 x  h = LayerNorm(x + MHA(x)); x = LayerNorm(h + FFN(h))  (B, T, 384)
    3) pool:   the mean of the real tokens' rows (the mask leaves padding out)  (B, 384)
    4) scale to unit length (L2).

Batches are right-padded to their longest text; ``key_padding_mask`` (``True``
= real token) keeps padding out of every attention row, so a text's embedding
does not depend on its neighbours.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnlab.engine.block import BlockParams, transformer_block
from attnlab.engine.errors import FieldError
from attnlab.engine.fast.workers import run
from attnlab.engine.layers import LayerNormParams, MLPParams, layer_norm
from attnlab.engine.multihead import AttentionParams
from attnlab.engine.positions import embed
from attnlab.engine.threads import CORES, one_blas_thread
from attnlab.lab.realmodel import problems
from attnlab.models import files
from attnlab.models.tokens import Batch, encode_batch, minilm_tokenizer
from attnlab.models.traces import ModelTrace

Progress = Callable[[int, int], None]  # (layers done, layers in all)

# Pieces of a batch that our threads share in encode: fixed pieces of 8 sentences keep every number
# independent of the thread count (OpenBLAS's own threads changed them) and are faster than one piece
# (docs/performance.md)
_PIECE_TEXTS = 8


@dataclass(frozen=True, kw_only=True)
class MiniLMConfig:
    n_layer: int = 6
    n_head: int = 12
    d_model: int = 384
    d_ff: int = 1536
    eps: float = 1e-12  # LayerNorm, inside the square root
    max_length: int = 256  # sentence-transformers' max_seq_length: longer texts are cut
    pad_id: int = 0


def _texts(texts: object) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, Sequence) or len(texts) == 0:
        raise FieldError(("texts",), problems.no_texts())
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise FieldError(("texts", i), problems.not_text(type(t).__name__))
    return list(texts)


class MiniLM:
    """The encoder's weights (pre-transposed for the engine) and its tokenizer."""

    name = "minilm"  # its registry entry (models/registry.py): title, shapes, caps
    path = "float32"  # what the products run on: the file's float32 weights

    def __init__(
        self,
        *,
        config: MiniLMConfig,
        tokenizer,
        embeddings: dict[str, np.ndarray],
        layers: list[BlockParams],
        dtype=np.float32,
    ) -> None:
        self.config = config
        self.tokenizer = tokenizer
        self.embeddings = embeddings
        self.layers = layers
        self.dtype = np.dtype(dtype)

    @classmethod
    def load(cls, folder: Path | str | None = None, *, dtype=np.float32) -> MiniLM:
        """Read the shipped safetensors weights and tokenizer (float32 as stored, unless ``dtype``).

        The file is opened with ``safe_open`` (memory-mapped) and each tensor read
        from the map once. Vectors and embeddings are used as read; the matrices,
        which ``nn.Linear`` stores (out, in), are transposed into a copy once:
        BLAS encoded fewer sentences a second on transposed views (docs/performance.md).
        """
        from safetensors import safe_open

        folder = Path(folder) if folder is not None else files.minilm_dir()
        raw = json.loads((folder / "config.json").read_text())
        st = json.loads((folder / "sentence_bert_config.json").read_text())
        config = MiniLMConfig(
            n_layer=raw["num_hidden_layers"],
            n_head=raw["num_attention_heads"],
            d_model=raw["hidden_size"],
            d_ff=raw["intermediate_size"],
            eps=raw["layer_norm_eps"],
            max_length=st.get("max_seq_length", 256),
            pad_id=raw.get("pad_token_id", 0),
        )
        with safe_open(str(folder / "model.safetensors"), framework="numpy") as f:
            w = {name: f.get_tensor(name) for name in f.keys()}

        def get(name: str, transpose: bool = False) -> np.ndarray:
            if transpose:  # nn.Linear stores (out, in): transpose once
                return np.ascontiguousarray(w[name].T, dtype=dtype)
            return w[name] if w[name].dtype == dtype else w[name].astype(dtype)

        embeddings = {
            "word": get("embeddings.word_embeddings.weight"),
            "position": get("embeddings.position_embeddings.weight"),
            "token_type": get("embeddings.token_type_embeddings.weight"),
            "norm_weight": get("embeddings.LayerNorm.weight"),
            "norm_bias": get("embeddings.LayerNorm.bias"),
        }
        layers = []
        for i in range(config.n_layer):
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
                activation="gelu",
            )
            norm_1 = LayerNormParams(
                get(p + "attention.output.LayerNorm.weight"),
                get(p + "attention.output.LayerNorm.bias"),
                config.eps,
            )
            norm_2 = LayerNormParams(
                get(p + "output.LayerNorm.weight"), get(p + "output.LayerNorm.bias"), config.eps
            )
            layers.append(BlockParams(attn=attn, mlp=ffn, norm_1=norm_1, norm_2=norm_2))
        tokenizer = minilm_tokenizer(folder / "tokenizer.json")
        return cls(config=config, tokenizer=tokenizer, embeddings=embeddings, layers=layers, dtype=dtype)

    # -- tokens ---------------------------------------------------------------

    def tokenize(self, texts: Sequence[str], *, max_length: int | None = None) -> Batch:
        """Token ids and mask ``(B, T)``, ``[CLS] ... [SEP]``, cut at ``max_length`` (default 256)."""
        texts = _texts(texts)
        limit = self.config.max_length if max_length is None else max_length
        if isinstance(limit, bool) or not isinstance(limit, int) or not 2 <= limit <= 512:
            raise FieldError(("max_length",), problems.out_of_range(limit, 2, 512))
        return encode_batch(self.tokenizer, texts, max_length=limit, pad_id=self.config.pad_id)

    # -- the forward pass -------------------------------------------------------

    def hidden(self, batch: Batch, *, details: bool = False, progress: Progress | None = None):
        """Run embeddings and every block: return ``(x (B, T, d_model), block results)``.

        NumPy's BLAS is held to one thread meanwhile: its threads split products
        differently, and round differently, for different thread counts, so a
        trace would not be the same bits in another process (the CLI's, the
        lab's worker) under another ``OPENBLAS_NUM_THREADS`` or load.
        """
        with one_blas_thread():
            return self._hidden(batch, details, progress)

    def _hidden(self, batch: Batch, details: bool, progress: Progress | None):
        e = self.embeddings
        n_batch, n_tok = batch.ids.shape
        # 1) embed: word + position + token type 0, then LayerNorm
        x = embed(e["word"], batch.ids) + e["position"][:n_tok] + e["token_type"][0]  # (B, T, d)
        x = layer_norm(x, LayerNormParams(e["norm_weight"], e["norm_bias"], self.config.eps))
        real = batch.mask.astype(bool)  # (B, T): True = may attend
        # 2) encode: post-norm blocks, padding keys masked out for every head
        results = []
        for i, params in enumerate(self.layers):
            res = transformer_block(
                x,
                params,
                n_head=self.config.n_head,
                norm="post",
                key_padding_mask=real,
                return_trace=details,
            )
            x = res.output
            results.append(res)
            if progress is not None:
                progress(i + 1, len(self.layers))
        return x, results

    def encode(
        self, texts: Sequence[str], *, batch_size: int = 32, max_length: int | None = None
    ) -> np.ndarray:
        """Unit-length sentence embeddings ``(N, 384)`` float32, in the order given.

        Texts are sorted by length before batching (as sentence-transformers
        does) so each batch carries little padding. A batch runs in pieces of
        at most 8 texts (padded to the batch's length), which our threads
        share: the pieces depend on the batch alone, never on the thread
        count, so the numbers are the same bits however many threads run.
        """
        texts = _texts(texts)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise FieldError(("batch_size",), problems.not_whole(batch_size, 1))
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.config.d_model), dtype=np.float32)
        pieces = []  # (rows of out, their slice of a tokenized batch)
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            batch = self.tokenize([texts[i] for i in rows], max_length=max_length)
            for p in range(0, len(rows), _PIECE_TEXTS):
                part = slice(p, p + _PIECE_TEXTS)
                piece = Batch(ids=batch.ids[part], mask=batch.mask[part], tokens=batch.tokens[part])
                pieces.append((rows[part], piece))

        def embed_piece(piece, _buffers) -> None:
            rows, batch = piece
            x, _ = self.hidden(batch)
            # 3) mean over the real tokens
            m = batch.mask[..., None].astype(x.dtype)  # (B, T, 1)
            pooled = (x * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)  # (B, d)
            # 4) unit length, like torch.nn.functional.normalize
            norms = np.sqrt((pooled * pooled).sum(axis=1, keepdims=True))
            out[rows] = pooled / np.maximum(norms, 1e-12)

        with one_blas_thread():  # held once for all the pieces, not set and reset per piece
            run(embed_piece, pieces, min(CORES, len(pieces)))
        return out

    def trace(
        self,
        text: str,
        *,
        details: bool = False,
        max_length: int | None = None,
        progress: Progress | None = None,
    ) -> ModelTrace:
        """Every layer's and head's attention on ``text``.

        Without ``details`` the trace keeps every head's weights ``(L, H, T, T)``; with
        ``details`` it keeps q, k, v and the journey, and recomputes a head's scores and
        weights from them on demand, as the blocks computed them (a batch of one with
        its key padding): far smaller, the same bits.
        """
        if not isinstance(text, str) or not text.strip():
            raise FieldError(("text",), problems.empty_text())
        batch = self.tokenize([text], max_length=max_length)
        _, results = self.hidden(batch, details=details, progress=progress)
        n_tok = batch.ids.shape[1]
        extra: dict = {}
        if details:
            for name, key in (("q", "attn.q"), ("k", "attn.k"), ("v", "attn.v")):
                extra[name] = np.stack([r.trace[key][0] for r in results])  # (L, H, T, d_head)
            from attnlab.models.journey import journey_arrays

            extra["journey"] = journey_arrays(results, norm="post", batched=True)
            extra["attend_options"] = {"key_padding": True}
        else:
            extra["weights"] = np.stack([r.attention.weights[0] for r in results])  # (L, H, T, T)
        d_head = self.config.d_model // self.config.n_head
        return ModelTrace(
            model=self.name,
            tokens=batch.tokens[0],
            ids=batch.ids[0].tolist(),
            allowed=np.ones((n_tok, n_tok), dtype=bool),
            scale=1.0 / float(np.sqrt(d_head)),
            kv_groups=[[h] for h in range(self.config.n_head)],
            path=self.path,
            **extra,
        )
