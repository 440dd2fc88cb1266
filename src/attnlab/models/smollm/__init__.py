"""SmolLM2-135M-Instruct, a Llama-style decoder, run by attnlab's engine.

30 pre-norm blocks, d_model 576; 9 query heads and 3 KV heads of 64 (GQA:
query head h reads KV head h // 3); RoPE (base 100000) on q and k; RMSNorm
(eps 1e-5); SwiGLU feed-forward of 1536; the output layer reuses the token
embeddings (tied). Weights come from a GGUF file (layers Q4_1, embeddings
Q8_0), memory-mapped: on the ``q4_1`` path the products run on the stored
blocks, on the ``float32`` path (the reference) on gguf's dequantized values
(see :mod:`attnlab.models.smollm.weights`). Every weight has the same float32
value on both; only the products' summation order differs.

    1) embed:  x = E[id]                                        (T, 576)
    2) decode: 30 x  h = x + MHA(RMSNorm(x));  x = h + SwiGLU(RMSNorm(h))
               causal, bottom-right aligned (right with a KV cache too)
    3) logits = RMSNorm(x) @ E^T                                 (T, 49152)

GGUF stores W_Q and W_K with each head's rows in interleaved pairs (llama.cpp
permutes Hugging Face's half-split layout), so the engine's RoPE runs with
``convention="interleaved"`` on the weights as stored. Scores are unchanged;
q and k coordinates in a trace are in that interleaved order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnlab.engine.block import BlockParams
from attnlab.engine.cache import KVCache, new_caches
from attnlab.engine.errors import FieldError
from attnlab.engine.fast.block import transformer_block
from attnlab.engine.fast.quant import QuantMatrix, product
from attnlab.engine.fast.workers import run
from attnlab.engine.layers import RMSNormParams, rms_norm
from attnlab.engine.positions import RoPE, embed
from attnlab.engine.threads import CORES, one_blas_thread
from attnlab.lab.realmodel import problems
from attnlab.models import files
from attnlab.models.sampling import Sampling, pick
from attnlab.models.smollm.config import SmolLM2Config, config_of  # noqa: F401 (re-exported)
from attnlab.models.traces import ModelTrace

Progress = Callable[[int, int], None]  # (layers done, layers in all)

# OpenBLAS's matrix-vector product on the whole 49152 x 576 embedding runs
# several times slower than on row slices of it (cache blocking): the output layer
# multiplies slice by slice, and our worker threads share the slices out. The
# slices are fixed by this constant alone, so a logit is the same single-threaded
# BLAS sum whichever thread, and however many, computed it.
_LOGIT_ROWS = 4096


@dataclass(frozen=True, kw_only=True)
class Piece:
    """One streamed step: the new token, the text it completes, and why generation stopped."""

    id: int
    text: str
    finish: str | None = None  # None while going; "end_of_turn" or "length" on the last piece


class SmolLM2:
    """The decoder's weights (pre-transposed for the engine), tokenizer and generation."""

    name = "smollm2"  # its registry entry (models/registry.py): title, shapes, caps

    def __init__(
        self,
        *,
        config: SmolLM2Config,
        tokenizer,
        embedding: np.ndarray | QuantMatrix,
        layers: list[BlockParams],
        final_norm: RMSNormParams,
        path: str = "float32",
        source: Path | None = None,
    ) -> None:
        self.config = config
        self.tokenizer = tokenizer
        self.embedding = embedding  # (vocab, d_model); on the q4_1 path E^T (d_model, vocab) as blocks
        self.layers = layers
        self.final_norm = final_norm
        self.dtype = embedding.dtype
        self.path = path  # "q4_1": products on the file's blocks; "float32": the reference
        self.source = source  # the GGUF file, for the float32 weights on demand
        self.rope = RoPE(head_dim=config.d_head, base=config.rope_base, convention="interleaved")
        self.im_start_id = tokenizer.token_to_id("<|im_start|>")
        self.im_end_id = tokenizer.token_to_id("<|im_end|>")
        self.eos_id = tokenizer.token_to_id("<|endoftext|>")
        self.stop_ids = frozenset({self.im_end_id, self.eos_id})

    @classmethod
    def load(
        cls, path: Path | str | None = None, *, dtype=np.float32, weights: str = "auto", cache_dir=None
    ) -> SmolLM2:
        """Open the shipped GGUF file (memory-mapped) and build the tokenizer from its metadata.

        ``weights``: "q4_1" (products on the stored blocks: loads in well under a
        second), "float32" (the reference: gguf's dequantized values, from the
        weight cache, built the first time: docs/performance.md) or "auto": q4_1 when ``dtype`` is
        float32 and the compiled kernels passed their self-check here
        (:func:`attnlab.engine.fast.quant.kernel`), else float32. ``cache_dir``: the
        weight cache's folder (default :func:`attnlab.models.weight_cache.cache_dir`).
        """
        from attnlab.engine.fast import quant
        from attnlab.models.gguf_file import GGUFFile
        from attnlab.models.smollm import weights as sw
        from attnlab.models.tokens import gguf_bpe_tokenizer

        if weights not in ("auto", *sw.PATHS):
            raise FieldError(("weights",), problems.unknown_weights(weights, sw.PATHS))
        dtype = np.dtype(dtype)
        g = GGUFFile(path if path is not None else files.smollm2_gguf())
        config = config_of(g.metadata)
        if weights == "auto":
            weights = "q4_1" if dtype == np.float32 and quant.kernel() is not None else "float32"
        if weights == "q4_1":
            if dtype != np.float32:
                raise FieldError(("dtype",), problems.blocks_need_float32())
            if quant.kernel() is None:
                raise RuntimeError(f"the q4_1 path cannot run here: {quant.reason()}")
            w = sw.block_weights(g, config.n_layer, config.eps)
        else:
            w = sw.float32_weights(g, config.n_layer, config.eps, cache_dir=cache_dir)
            if dtype != np.float32:
                w = sw.cast(w, dtype)
        return cls(
            config=config,
            tokenizer=gguf_bpe_tokenizer(g.metadata),
            embedding=w.embedding,
            layers=w.layers,
            final_norm=w.final_norm,
            path=w.path,
            source=g.path,
        )

    def with_dtype(self, dtype) -> SmolLM2:
        """The same model computing in ``dtype`` on float weights (float64: the engine's exact default).

        On the q4_1 path the float weights are the reference path's (gguf's values,
        from the weight cache), so ``with_dtype(np.float32)`` is the float32 path.
        """
        from attnlab.models.gguf_file import GGUFFile
        from attnlab.models.smollm import weights as sw

        if self.path == "float32":
            w = sw.Weights(embedding=self.embedding, layers=self.layers, final_norm=self.final_norm,
                           path="float32")  # fmt: skip
        else:
            w = sw.float32_weights(GGUFFile(self.source), self.config.n_layer, self.config.eps)
        w = sw.cast(w, dtype)
        return SmolLM2(
            config=self.config,
            tokenizer=self.tokenizer,
            embedding=w.embedding,
            layers=w.layers,
            final_norm=w.final_norm,
            path="float32",
            source=self.source,
        )

    # -- tokens ---------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; control tokens such as ``<|im_start|>`` stay whole. No BOS."""
        if not isinstance(text, str):
            raise FieldError(("text",), problems.not_text(type(text).__name__))
        return list(self.tokenizer.encode(text).ids)

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)

    def token_labels(self, ids: Sequence[int]) -> list[str]:
        """A readable label per token: its own text (a split UTF-8 character shows as U+FFFD)."""
        return [self.tokenizer.decode([i], skip_special_tokens=False) for i in ids]

    # -- the forward pass -------------------------------------------------------

    def new_cache(self) -> list[KVCache]:
        """Empty KV caches, one per layer."""
        return new_caches(self.config.n_layer)

    def forward(
        self,
        ids: Sequence[int],
        *,
        cache: list[KVCache] | None = None,
        details: bool = False,
        progress: Progress | None = None,
        results: list | None = None,
    ) -> np.ndarray:
        """Logits ``(len(ids), vocab)`` for the new tokens ``ids``, after what ``cache`` holds.

        With ``cache``, each layer's keys and values are appended to it and the
        new tokens sit at positions ``cache length, +1, ...``. ``results``
        (a list) receives each block's result when given.
        """
        return self._run(ids, cache, details, progress, results, last_only=False)

    def prefill(self, ids: Sequence[int], *, cache: list[KVCache]) -> np.ndarray:
        """Next-token logits ``(vocab,)`` after the prompt ``ids``: the prompt pass generation makes.

        Every layer runs on every token (their keys and values go into ``cache``,
        as in :meth:`forward`); the output layer runs on the last token alone, the
        only one whose logits generation needs. They are the last row of
        :meth:`forward`'s logits to rounding (a one-row product sums in another
        order than a prompt's).
        """
        return self._run(ids, cache, False, None, None, last_only=True)[-1]

    def _run(self, ids, cache, details, progress, results, *, last_only: bool) -> np.ndarray:
        """:meth:`forward`; with ``last_only`` the logits of the last token alone, (1, vocab)."""
        ids = self._check_ids(ids)
        past = cache[0].length if cache else 0
        if past + len(ids) > self.config.context:
            raise FieldError(("ids",), problems.over_context(past + len(ids), self.config.context))
        # one BLAS thread: OpenBLAS's threads would split products, and round, by the thread count
        with one_blas_thread():
            return self._forward(ids, past, cache, details, progress, results, last_only)

    def _forward(self, ids, past, cache, details, progress, results, last_only) -> np.ndarray:
        # 1) embed (on the q4_1 path: the tokens' stored rows, made float32)
        if isinstance(self.embedding, QuantMatrix):
            x = self.embedding.stored_rows(ids)
        else:
            x = embed(self.embedding, np.asarray(ids, dtype=np.int64))  # (T, d_model)
        positions = np.arange(past, past + len(ids))
        # 2) the causal blocks (bottom-right: the new tokens are the last rows)
        for i, params in enumerate(self.layers):
            res = transformer_block(
                x,
                params,
                n_head=self.config.n_head,
                n_kv_head=self.config.n_kv_head,
                norm="pre",
                causal="bottom_right",
                rope=self.rope,
                positions=positions,
                cache=None if cache is None else cache[i],
                return_trace=details,
            )
            x = res.output
            if results is not None:
                results.append(res)
            if progress is not None:
                progress(i + 1, len(self.layers))
        # 3) final norm and the tied output layer (a prompt's other rows are not needed to go on)
        h = rms_norm(x[-1:] if last_only else x, self.final_norm)  # (T or 1, d_model)
        return self._logits(h)

    def _logits(self, h: np.ndarray) -> np.ndarray:
        e = self.embedding
        if isinstance(e, QuantMatrix):  # the blocks of E^T: fixed slices that our threads share
            return product(h, e)
        out = np.empty((h.shape[0], e.shape[0]), dtype=h.dtype)

        def logit_slice(start: int, _buffers) -> None:
            part = e[start : start + _LOGIT_ROWS]  # (rows, d_model), contiguous
            out[:, start : start + part.shape[0]] = (part @ h.T).T

        # the output layer streams the whole embedding (113 MB in float32): two cores read it
        # about twice as fast as one (docs/performance.md)
        run(logit_slice, range(0, e.shape[0], _LOGIT_ROWS), CORES)
        return out

    def logits(self, ids: Sequence[int]) -> np.ndarray:
        """Next-token logits at every position of ``ids``, computed in one full pass."""
        return self.forward(ids)

    def _check_ids(self, ids: Sequence[int]) -> list[int]:
        ids = [int(i) for i in ids]
        if not ids:
            raise FieldError(("ids",), problems.no_tokens())
        bad = [n for n, i in enumerate(ids) if not 0 <= i < self.config.vocab]
        if bad:
            raise FieldError(("ids", bad[0]), problems.outside_vocabulary(ids[bad[0]], self.config.vocab))
        return ids

    # -- generation -------------------------------------------------------------

    def generate_ids(
        self,
        ids: Sequence[int],
        *,
        max_new_tokens: int,
        sampling: Sampling | None = None,
        stop: bool = True,
        on_logits: Callable[[np.ndarray], None] | None = None,
    ) -> Iterator[int]:
        """Yield new token ids one at a time, reusing the KV cache (one token per step).

        Stops after ``max_new_tokens`` or, when ``stop``, after an end-of-turn
        token (``<|im_end|>`` or ``<|endoftext|>``, which is yielded last).
        """
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise FieldError(("max_new_tokens",), problems.not_whole(max_new_tokens, 1))
        sampling = sampling or Sampling()
        rng = sampling.generator()
        cache = self.new_cache()
        # prefill: the prompt in one pass (the output layer on its last token only)
        logits = self.prefill(ids, cache=cache)
        for step in range(max_new_tokens):
            if on_logits is not None:
                on_logits(logits)  # the row this step draws from (the Real model view shows it)
            token = pick(logits, sampling, rng)
            yield token
            if (stop and token in self.stop_ids) or step == max_new_tokens - 1:
                return
            logits = self.forward([token], cache=cache)[-1]

    def generate(
        self,
        prompt: str,
        *,
        max_new_tokens: int = 64,
        sampling: Sampling | None = None,
        on_logits: Callable[[np.ndarray], None] | None = None,
    ) -> Iterator[Piece]:
        """Stream the continuation of ``prompt`` as text pieces; stop at end of turn.

        A piece's text is what the tokens so far add to the decoded string; a
        character split over two tokens arrives with the second.
        """
        if not isinstance(prompt, str) or not prompt:
            raise FieldError(("prompt",), problems.empty_prompt())
        ids = self.encode(prompt)
        new: list[int] = []
        shown = ""
        steps = self.generate_ids(ids, max_new_tokens=max_new_tokens, sampling=sampling, on_logits=on_logits)
        for token in steps:
            if token in self.stop_ids:
                yield Piece(id=token, text="", finish="end_of_turn")
                return
            new.append(token)
            text = self.decode(new)
            finish = "length" if len(new) == max_new_tokens else None
            if text.endswith("\ufffd") and finish is None:
                delta = ""  # half a character: wait for the rest
            else:
                delta, shown = text[len(shown) :], text
            yield Piece(id=token, text=delta, finish=finish)

    # -- traces ---------------------------------------------------------------

    def trace(self, text: str, *, details: bool = False, progress: Progress | None = None) -> ModelTrace:
        """Every layer's and head's attention on ``text``.

        Without ``details`` the trace keeps every head's weights ``(L, H, T, T)``; with
        ``details`` it keeps q, k, v (after RoPE), the logits and the journey, and
        recomputes a head's scores and weights from them on demand, as the blocks
        computed them (causal, bottom-right, GQA): far smaller, the same bits.
        """
        if not isinstance(text, str) or not text.strip():
            raise FieldError(("text",), problems.empty_text())
        ids = self.encode(text)
        results: list = []
        logits = self.forward(ids, details=details, progress=progress, results=results)
        extra: dict = {}
        if details:
            from attnlab.models.journey import journey_arrays

            extra["logits"] = np.asarray(logits)  # (T, vocab): the next-token views answer from these
            extra["journey"] = journey_arrays(results, norm="pre")
            for name, key in (("q", "attn.q_rotated"), ("k", "attn.k_rotated"), ("v", "attn.v")):
                extra[name] = np.stack([r.trace[key] for r in results])  # (L, H or H_kv, T, d_head)
            c = self.config
            extra["attend_options"] = {"causal": "bottom_right", "enable_gqa": c.n_kv_head != c.n_head}
        else:
            extra["weights"] = np.stack([r.attention.weights for r in results])  # (L, H, T, T)
        c = self.config
        group = c.n_head // c.n_kv_head
        n = len(ids)
        return ModelTrace(
            model=self.name,
            tokens=self.token_labels(ids),
            ids=ids,
            allowed=np.tril(np.ones((n, n), dtype=bool)),
            scale=1.0 / float(np.sqrt(c.d_head)),
            kv_groups=[list(range(g * group, (g + 1) * group)) for g in range(c.n_kv_head)],
            path=self.path,
            **extra,
        )
