"""A shipped model's forward pass in pieces: embed, one block (with edits), the end.

:func:`stack_of` wraps SmolLM2 (:class:`Decoder`) or MiniLM (:class:`Encoder`). Each piece
makes the calls the model's own forward makes, with the same arguments and in the same
order (``SmolLM2._forward``; ``MiniLM._hidden`` and the pooling of ``MiniLM.encode`` for
a one-text batch), so a run through the pieces without edits gives the model's numbers
bit for bit (tested on both SmolLM2 paths and on MiniLM):

- decoder blocks: ``engine.fast.block.transformer_block`` (pre-norm, causal bottom-right,
  RoPE at positions 0..T-1, no cache), on the Q4_1 blocks or the float weights;
- encoder blocks: the reference ``engine.block.transformer_block`` (post-norm, every
  token real), on a batch of one: edits see arrays with that leading axis of 1.

Activations here have no batch axis: x is (T, d_model). Run the pieces inside
``one_blas_thread()`` (as the models do): then no number depends on the thread count.
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.block import BlockEdits
from attnlab.engine.block import transformer_block as reference_block
from attnlab.engine.errors import FieldError
from attnlab.engine.fast.block import transformer_block as fast_block
from attnlab.engine.fast.quant import QuantMatrix, product
from attnlab.engine.layers import LayerNormParams, layer_norm, rms_norm
from attnlab.engine.positions import embed
from attnlab.lab.realmodel import problems
from attnlab.models.circuits import checks


class Decoder:
    """SmolLM2 in pieces. ``path``: "q4_1" (the file's blocks), "float32" or "float64" (float weights)."""

    kind = "decoder"

    def __init__(self, model) -> None:
        c = model.config
        self.model = model
        self.name = model.name
        self.path = model.path if np.dtype(model.dtype) == np.float32 else np.dtype(model.dtype).name
        self.dtype = np.dtype(model.dtype)
        self.n_layer, self.n_head, self.n_kv_head = c.n_layer, c.n_head, c.n_kv_head
        self.d_head, self.d_model, self.vocab = c.d_head, c.d_model, c.vocab
        self.layers = model.layers
        self.final_norm = model.final_norm
        self._answer_columns: dict[tuple[int, ...], QuantMatrix] = {}

    def check_ids(self, ids) -> list[int]:
        """The token ids as ints: at least one, each in the vocabulary, within the context."""
        ids = _ids(ids)
        bad = [n for n, i in enumerate(ids) if not 0 <= i < self.vocab]
        if bad:
            what = problems.no_such_index(ids[bad[0]], "the vocabulary", "token", self.vocab)
            raise FieldError(("ids", bad[0]), what)
        if len(ids) > self.model.config.context:
            raise FieldError(("ids",), checks.too_long(len(ids), self.model.config.context))
        return ids

    def embed(self, ids: list[int]) -> np.ndarray:
        """1) the token embeddings (T, d): on the q4_1 path the tokens' stored rows, made float32."""
        if isinstance(self.model.embedding, QuantMatrix):
            return self.model.embedding.stored_rows(ids)
        return embed(self.model.embedding, np.asarray(ids, dtype=np.int64))

    def block(self, layer: int, x: np.ndarray, edits: BlockEdits | None) -> tuple[np.ndarray, np.ndarray]:
        """2) block ``layer`` on x (T, d): ``(output, attention output)``, each (T, d)."""
        res = fast_block(
            x,
            self.layers[layer],
            n_head=self.n_head,
            n_kv_head=self.n_kv_head,
            norm="pre",
            causal="bottom_right",
            rope=self.model.rope,
            positions=np.arange(0, x.shape[0]),
            cache=None,
            return_trace=False,
            edits=edits,
        )
        return res.output, res.attention.output

    def final_rms(self, x: np.ndarray) -> np.ndarray:
        """The final RMSNorm's divisor per row of x (n, d): ``sqrt(mean(x^2) + eps)``, as it computes it."""
        return np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.final_norm.eps)[..., 0]

    def logits(self, x: np.ndarray) -> np.ndarray:
        """3) the final norm and the tied output layer on rows x (n, d): logits (n, V), as the model's."""
        return self.model._logits(rms_norm(x, self.final_norm))

    def unembed(self, h: np.ndarray) -> np.ndarray:
        """Rows h (n, d), already normalised, through the output layer alone: (n, V)."""
        return self.model._logits(np.ascontiguousarray(h, dtype=self.dtype))

    def answer_logits(self, x: np.ndarray, tokens: tuple[int, ...]) -> np.ndarray:
        """The logits of ``tokens`` alone for rows x (n, d): (n, len(tokens)), float as the model's.

        The final norm as :meth:`logits` applies it (row by row: the same bits), then
        the tokens' columns of the output layer only. On the q4_1 path these are the
        forward's bits (each logit one FMA chain over the stored values; a lone row is
        doubled, since a one-row product sums in another order); on float weights, a
        small product on the tokens' rows: the forward's values to float32 rounding.
        """
        h = rms_norm(x, self.final_norm)
        e = self.model.embedding
        if isinstance(e, QuantMatrix):
            columns = self._answer_columns.get(tokens)
            if columns is None:
                rows = np.ascontiguousarray(e.parts[0][list(tokens)]) if len(e.parts) == 1 else None
                if rows is None:  # pragma: no cover - the shipped embedding is one part
                    raise NotImplementedError("an output layer in several parts")
                columns = self._answer_columns[tokens] = QuantMatrix(e.fmt, rows)
            lone = h.shape[0] == 1
            out = product(np.repeat(h, 2, axis=0) if lone else h, columns)
            return out[:1] if lone else out
        return h @ e[list(tokens)].T

    def token_rows(self, tokens) -> np.ndarray:
        """Rows of the (tied) embedding, float: (n, d) for token ids ``tokens``."""
        e = self.model.embedding
        if isinstance(e, QuantMatrix):
            return e.stored_rows(list(tokens))
        return np.asarray(e[list(tokens)])


class Encoder:
    """MiniLM in pieces (float32, the file's weights); one text, every token real."""

    kind = "encoder"

    def __init__(self, model) -> None:
        c = model.config
        self.model = model
        self.name = model.name
        self.path = "float32" if np.dtype(model.dtype) == np.float32 else np.dtype(model.dtype).name
        self.dtype = np.dtype(model.dtype)
        self.n_layer, self.n_head, self.n_kv_head = c.n_layer, c.n_head, c.n_head
        self.d_model = c.d_model
        self.d_head = c.d_model // c.n_head
        self.vocab = model.embeddings["word"].shape[0]
        self.layers = model.layers

    def check_ids(self, ids) -> list[int]:
        ids = _ids(ids)
        bad = [n for n, i in enumerate(ids) if not 0 <= i < self.vocab]
        if bad:
            what = problems.no_such_index(ids[bad[0]], "the vocabulary", "token", self.vocab)
            raise FieldError(("ids", bad[0]), what)
        limit = self.model.embeddings["position"].shape[0]
        if len(ids) > limit:
            raise FieldError(("ids",), checks.too_long(len(ids), limit))
        return ids

    def embed(self, ids: list[int]) -> np.ndarray:
        """1) word + position + token type 0, then the embedding LayerNorm: (T, d)."""
        e = self.model.embeddings
        n = len(ids)
        x = embed(e["word"], np.asarray(ids, dtype=np.int64)[None]) + e["position"][:n] + e["token_type"][0]
        x = layer_norm(x, LayerNormParams(e["norm_weight"], e["norm_bias"], self.model.config.eps))
        return x[0]

    def block(self, layer: int, x: np.ndarray, edits: BlockEdits | None) -> tuple[np.ndarray, np.ndarray]:
        """2) block ``layer`` on x (T, d), as a batch of one, every key real: (output, attention output)."""
        res = reference_block(
            x[None],
            self.layers[layer],
            n_head=self.n_head,
            norm="post",
            key_padding_mask=np.ones((1, x.shape[0]), dtype=bool),
            return_trace=False,
            edits=edits,
        )
        return res.output[0], res.attention.output[0]

    def pooled(self, x: np.ndarray) -> np.ndarray:
        """3) the sentence embedding of x (T, d): the mean over the tokens, scaled to unit length (d,)."""
        x = x[None]
        m = np.ones((1, x.shape[1], 1), dtype=x.dtype)  # every token real, as MiniLM.encode's mask
        pooled = (x * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        norms = np.sqrt((pooled * pooled).sum(axis=1, keepdims=True))
        return (pooled / np.maximum(norms, 1e-12))[0]


def stack_of(model) -> Decoder | Encoder:
    """The pieces of ``model``: SmolLM2 (has ``final_norm``) or MiniLM (has ``embeddings``)."""
    if hasattr(model, "final_norm") and hasattr(model, "rope"):
        return Decoder(model)
    if hasattr(model, "embeddings"):
        return Encoder(model)
    raise FieldError(("model",), checks.unknown_choice(type(model).__name__, ("SmolLM2", "MiniLM")))


def _ids(ids) -> list[int]:
    if isinstance(ids, str | bytes) or not hasattr(ids, "__len__"):
        raise FieldError(("ids",), checks.not_an_index(ids))
    out = []
    for n, i in enumerate(ids):
        if isinstance(i, bool) or not isinstance(i, int | np.integer):
            raise FieldError(("ids", n), checks.not_an_index(i))
        out.append(int(i))
    if not out:
        raise FieldError(("ids",), problems.empty_text())
    return out
