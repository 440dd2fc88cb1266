"""A loaded model: its architecture, its weights as stored, its tokenizer, and the one forward.

A :class:`Model` is data (``arch``: an :class:`attnlab.engine.model.Architecture`,
``weights``: :class:`attnlab.engine.model.Weights`, ``tokenizer``: a ``tokenizers``
Tokenizer) and the ops its products run on (``path``: "q4_1" on the shipped SmolLM2's
GGUF blocks, "stored" on any other file's own numbers (GGUF blocks, safetensors' 16- or
32-bit rows), "float32" or "float64" on float weights). Every number it gives comes from
:func:`attnlab.engine.forward.forward`:

- :meth:`Model.forward`, and for a decoder :meth:`Decoder.prefill`, :meth:`Decoder.generate_ids`
  and :meth:`Decoder.generate` (a KV cache, one token a step);
- the hooks API, TransformerLens's: :meth:`Model.run_with_cache` (every activation, or those
  ``names`` lists, by hook point: ``cache["blocks.18.attn.hook_pattern"]``) and
  :meth:`Model.run_with_hooks` (``fwd_hooks=[(name, fn)]``: read or change activations);
- :meth:`Model.trace`: what the Real model view shows of one text (:class:`ModelTrace`).

Hooks on the fast path: a hook that returns its argument changes no bit (the forward's steps
are only taken apart around it: tested). A hook on ``hook_attn_scores`` or ``hook_pattern``
takes the attention apart into three steps, and any hook makes its activation a whole array
where the forward kept views (docs/performance.md gives the cost).

Numbers and typed errors only: a refusal is a ``FieldError`` whose words come from the lab's
problems module (the text at fault is the caller's field).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from attnlab.engine.cache import KVCache, new_caches
from attnlab.engine.errors import FieldError
from attnlab.engine.fast.ops import FAST, ROWS, rows_apply
from attnlab.engine.forward import forward
from attnlab.engine.hooks import Hooks, block_names, hook_names
from attnlab.engine.model import Architecture, Weights
from attnlab.engine.threads import CORES, one_blas_thread
from attnlab.models.errors import Refusal
from attnlab.models.sampling import Sampling, pick
from attnlab.models.traces import ModelTrace

Progress = Callable[[int, int], None]  # (layers done, layers in all)
BLOCK_PATHS = ("q4_1", "stored")  # products on a file's own numbers, float32 activations
Names = Iterable[str] | Callable[[str], bool] | None


@dataclass(frozen=True, kw_only=True)
class Piece:
    """One streamed step: the new token, the text it completes, and why generation stopped."""

    id: int
    text: str
    finish: str | None = None  # None while going; "end_of_turn" or "length" on the last piece


class ActivationCache(dict):
    """Activations by hook point name (NumPy arrays, read-only), as TransformerLens's cache.

    ``cache["blocks.3.attn.hook_pattern"]``, or the short form ``cache["pattern", 3]``
    (``"resid_pre"``, ``"q"``, ``"z"``, ``"mlp_out"`` ...: a field of
    :class:`attnlab.engine.hooks.BlockNames`, or ``"normalized"`` for ``ln_final``).
    """

    def __getitem__(self, key):
        if isinstance(key, tuple) and len(key) == 2:
            what, layer = key
            names = block_names(int(layer))
            key = getattr(names, {"attn_scores": "scores", "normalized": "ln2"}.get(what, what), key)
        return super().__getitem__(key)


class Model:
    """A model of any description, run by the one forward (see the module docstring).

    ``name``: its registry name; ``path``: what its products run on; ``ops``: the forward's
    steps for its numbers (the fast path's); ``trace_ops``: the steps a trace of the Real
    model view takes (the reference's on the weights' float values, with the fast embedding
    and output layer: the numbers that view has always shown).
    """

    def __init__(
        self,
        *,
        name: str,
        arch: Architecture,
        weights: Weights,
        tokenizer,
        path: str,
        ops=FAST,
        trace_ops=None,
        source=None,
        reload: Callable[[str], Model] | None = None,
    ) -> None:
        from attnlab.engine.fast.ops import ON_VALUES

        self.name = name
        self.arch = arch
        self.weights = weights
        self.tokenizer = tokenizer
        self.path = path
        self.ops = ops
        self.trace_ops = trace_ops or ON_VALUES
        self.source = source
        self._reload = reload
        self.dtype = np.dtype(np.float32 if path in BLOCK_PATHS else path)
        self.hook_names = hook_names(arch)

    def __repr__(self) -> str:
        a = self.arch
        return f"<{type(self).__name__} {self.name}: {a.family}, {a.n_layer} layers, path {self.path}>"

    # -- tokens ---------------------------------------------------------------

    def to_tokens(self, text: str) -> list[int]:
        """The token ids the model reads for ``text`` (its tokenizer's specials included)."""
        if not isinstance(text, str):
            raise Refusal(("text",), "not_text", type(text).__name__)
        return list(self.tokenizer.encode(text).ids)

    def to_str_tokens(self, text: str | Sequence[int]) -> list[str]:
        """Each token's own text, for ``text`` or for token ids."""
        ids = self.to_tokens(text) if isinstance(text, str) else list(text)
        return self.token_labels(ids)

    def token_labels(self, ids: Sequence[int]) -> list[str]:
        """A readable label per token: its own text (a split UTF-8 character shows as U+FFFD)."""
        return [self.tokenizer.decode([i], skip_special_tokens=False) for i in ids]

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)

    def check_ids(self, ids) -> list[int]:
        """The token ids as ints: at least one, each in the vocabulary (``FieldError`` at ``ids``)."""
        if isinstance(ids, str | bytes) or not hasattr(ids, "__len__"):
            raise Refusal(("ids",), "circuits.not_an_index", ids)
        out = []
        for n, i in enumerate(ids):
            if isinstance(i, bool) or not isinstance(i, int | np.integer):
                raise Refusal(("ids", n), "circuits.not_an_index", i)
            if not 0 <= int(i) < self.arch.d_vocab:
                raise Refusal(("ids", n), "outside_vocabulary", int(i), self.arch.d_vocab)
            out.append(int(i))
        if not out:
            raise Refusal(("ids",), "no_tokens")
        return out

    # -- the forward pass, and its hooks ----------------------------------------

    def _input(self, input) -> list[int] | None:
        if input is None:  # the forward starts from a given residual stream (``resid=``)
            return None
        return self.check_ids(self.to_tokens(input) if isinstance(input, str) else input)

    def _hooks(self, fwd_hooks, progress: Progress | None) -> Hooks | None:
        pairs = list(fwd_hooks or ())
        if progress is not None:
            n = self.arch.n_layer
            last = "ln2" if self.arch.norm_placement == "post" else "resid_post"
            pairs += [(getattr(block_names(i), last), _progress(progress, i + 1, n)) for i in range(n)]
        return Hooks(pairs, self.hook_names) if pairs else None

    @property
    def kind(self) -> str:
        """"decoder" (its head gives next-token logits) or "encoder" (a sentence embedding)."""
        return "decoder" if self.arch.head == "logits" else "encoder"

    def forward(
        self,
        ids: Sequence[int] | None,
        *,
        cache: list[KVCache] | None = None,
        fwd_hooks=(),
        progress: Progress | None = None,
        last_only: bool = False,
        ops=None,
        **options,
    ) -> np.ndarray:
        """The head's output for token ids ``ids``: logits (T, d_vocab), or an encoder's sentence
        embedding (d_model,). With ``cache`` (one KVCache per layer) the new tokens sit after
        what it holds. ``options``: the forward's (``start_at_layer``, ``resid``, ``stop_at_layer``);
        from ``resid`` (T, d_model) entering block ``start_at_layer``, ``ids`` may be None.
        """
        if ids is not None or options.get("resid") is None:
            ids = self.check_ids(ids)
            past = cache[0].length if cache else 0
            if self.arch.causal and past + len(ids) > self.arch.n_ctx:
                raise Refusal(("ids",), "over_context", past + len(ids), self.arch.n_ctx)
        hooks = self._hooks(fwd_hooks, progress)
        # one BLAS thread: OpenBLAS's threads would split products, and round, by the thread count
        with one_blas_thread():
            return forward(self.arch, self.weights, ids, ops=ops or self.ops, hooks=hooks, caches=cache,
                           last_only=last_only, **options)  # fmt: skip

    def head(self, resid: np.ndarray) -> np.ndarray:
        """The forward's head on the residual stream leaving the last block (T, d_model): the final
        norm and the logits (T, d_vocab), or an encoder's sentence embedding (d_model,)."""
        return self.forward(None, start_at_layer=self.arch.n_layer, resid=resid)

    def unembed(self, h: np.ndarray) -> np.ndarray:
        """Rows h (n, d_model), already normalised, through the output layer (and the logits' soft cap,
        where the model caps them): (n, d_vocab)."""
        with one_blas_thread():
            logits = self.ops.unembed(np.ascontiguousarray(h, dtype=self.dtype), self.weights)
            return self._capped(logits)

    def _capped(self, logits: np.ndarray) -> np.ndarray:
        cap = self.arch.final_softcap
        return logits if cap is None else self.ops.softcap(logits, cap)

    def answer_logits(self, resid: np.ndarray, tokens: tuple[int, ...]) -> np.ndarray:
        """The logits of ``tokens`` alone for residual rows (n, d_model): (n, len(tokens)).

        The final norm as the forward applies it, then those tokens' columns of the output layer
        only (the forward's own bits on quantised blocks; float weights: its values to rounding),
        soft-capped where the model caps its logits.
        """
        with one_blas_thread():
            h = self.ops.final_norm(resid, self.weights.final_norm)
            return self._capped(self.ops.unembed_columns(h, self.weights, tuple(tokens)))

    def token_rows(self, tokens: Sequence[int]) -> np.ndarray:
        """Rows of the token embeddings W_E, float (n, d_model), for token ids ``tokens``."""
        return np.asarray(self.ops.embed(self.weights.embed, list(tokens)))

    def run_with_hooks(self, input, *, fwd_hooks=(), **options) -> np.ndarray:
        """The forward on ``input`` (a text or token ids) with ``fwd_hooks`` [(name or filter, fn)]:
        ``fn(activation, name)`` returns a new value, or None to leave it. Returns the head's output."""
        return self.forward(self._input(input), fwd_hooks=fwd_hooks, **options)

    def run_with_cache(self, input, *, names: Names = None, fwd_hooks=(), **options):
        """``(output, cache)``: the forward on ``input`` keeping every activation (or those ``names``
        lists or accepts) in an :class:`ActivationCache`; ``fwd_hooks`` run first where both act."""
        cache = ActivationCache()
        wanted = _chooser(names, self.hook_names)

        def keep(a, name):
            a = np.asarray(a)
            if a.flags.writeable:
                a = a.view()
                a.flags.writeable = False
            cache[name] = a

        out = self.forward(self._input(input), fwd_hooks=[*fwd_hooks, (wanted, keep)], **options)
        return out, cache

    # -- traces ---------------------------------------------------------------

    def trace(self, text: str, *, details: bool = False, progress: Progress | None = None) -> ModelTrace:
        """Every layer's and head's attention on ``text``: the Real model view's trace.

        Without ``details`` it keeps every head's weights (L, H, T, T); with ``details`` q, k, v
        (after RoPE) per layer, the journey, and (decoders) the logits, and recomputes a head's
        scores and weights from them on demand, as the forward computed them: far smaller, the
        same bits. Runs the trace's steps (``trace_ops``).
        """
        from attnlab.models.journey import journey_arrays

        if not isinstance(text, str) or not text.strip():
            raise Refusal(("text",), "empty_text")
        ids = self._trace_ids(text)
        a = self.arch
        pick = ["pattern"] if not details else ["rot_q" if a.positions == "rope" else "q",
                                                 "rot_k" if a.positions == "rope" else "k", "v"]  # fmt: skip
        if details:
            pick += ["resid_pre", "resid_mid", "attn_out", "mlp_out", "mlp_post", "ln1", "ln2", "resid_post"]
        names = {getattr(block_names(i), p) for i in range(a.n_layer) for p in pick}
        out, cache = self.run_with_cache(ids, names=names, ops=self.trace_ops, progress=progress)
        per_layer = [block_names(i) for i in range(a.n_layer)]
        extra: dict = {}
        if details:
            for key, field in (("q", "rot_q" if a.positions == "rope" else "q"),
                               ("k", "rot_k" if a.positions == "rope" else "k"), ("v", "v")):  # fmt: skip
                extra[key] = np.stack([cache[getattr(n, field)].transpose(1, 0, 2) for n in per_layer])
            extra["journey"] = journey_arrays(cache, a)
            extra["attend_options"] = self._attend_options()
            if a.head == "logits":
                extra["logits"] = np.asarray(out)  # (T, vocab): the next-token views answer from these
        else:
            extra["weights"] = np.stack([cache[n.pattern] for n in per_layer])  # (L, H, T, T)
        n = len(ids)
        allowed = np.tril(np.ones((n, n), dtype=bool)) if a.causal else np.ones((n, n), dtype=bool)
        return ModelTrace(
            model=self.name,
            tokens=self.token_labels(ids),
            ids=ids,
            allowed=allowed,
            scale=a.scale,
            kv_groups=[list(range(g * a.group, (g + 1) * a.group)) for g in range(a.n_kv_head)],
            path=self.path,
            **extra,
        )

    def _trace_ids(self, text: str) -> list[int]:
        return self.to_tokens(text)

    def _attend_options(self) -> dict:
        a = self.arch
        if a.causal:
            return {"causal": "bottom_right", "enable_gqa": a.n_kv_head != a.n_head}
        return {"key_padding": True}

    def with_path(self, path: str) -> Model:
        """The same model with its products on ``path`` ("q4_1", "float32", "float64")."""
        if path == self.path:
            return self
        if self._reload is None:
            raise Refusal(("weights",), "unknown_weights", path, (self.path,))
        return self._reload(path)

    def with_dtype(self, dtype) -> Model:
        """The same model computing in ``dtype`` on float weights (float64: the engine's exact default)."""
        return self.with_path(np.dtype(dtype).name)


class Decoder(Model):
    """A causal language model: logits, a KV cache, generation.

    ``stop_ids``: the tokens that end a turn (generation stops after one); ``chat``: the chat form
    its files carry (:class:`attnlab.models.chat.ChatTemplate`), or why it has none
    (:class:`attnlab.models.chat.NoChat`); ``chat_template``: that template's source, or None.
    """

    def __init__(self, *, stop_ids: Iterable[int] = (), chat_template: str | None = None, chat=None,
                 **kwargs) -> None:  # fmt: skip
        from attnlab.models.chat import ChatTemplate, NoChat

        super().__init__(**kwargs)
        self.stop_ids = frozenset(int(i) for i in stop_ids)
        self.chat_template = chat_template
        if chat is None:
            chat = ChatTemplate(source=chat_template) if chat_template else NoChat(reason="none")
        self.chat = chat

    def chat_prompt(self, messages, *, add_generation_prompt: bool = True) -> str:
        """``messages`` ([{"role", "content"}, ...]) rendered by the model's chat template, ready for the
        assistant's turn; a model without a template refuses (``FieldError`` at ``messages``)."""
        from attnlab.models.chat import NoChat

        if isinstance(self.chat, NoChat):
            raise Refusal(("messages",), "opening.no_chat", self.name)
        return self.chat.render(messages, add_generation_prompt=add_generation_prompt)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (as :meth:`to_tokens`)."""
        return self.to_tokens(text)

    def new_cache(self) -> list[KVCache]:
        """Empty KV caches, one per layer."""
        return new_caches(self.arch.n_layer)

    def logits(self, ids: Sequence[int]) -> np.ndarray:
        """Next-token logits at every position of ``ids``, computed in one full pass."""
        return self.forward(ids)

    def prefill(self, ids: Sequence[int], *, cache: list[KVCache]) -> np.ndarray:
        """Next-token logits ``(vocab,)`` after the prompt ``ids``: the prompt pass generation makes.

        Every layer runs on every token (their keys and values go into ``cache``); the output
        layer runs on the last token alone. They are the last row of :meth:`forward`'s logits
        to rounding (a one-row product sums in another order than a prompt's).
        """
        return self.forward(ids, cache=cache, last_only=True)[-1]

    def step_rows(self, tokens: Sequence[int], caches: Sequence[list[KVCache]]) -> np.ndarray:
        """Next-token logits (R, vocab) after each row's token: row r appends ``tokens[r]`` to the
        sequence whose caches are ``caches[r]`` (rows sharing one list are consecutive tokens of
        it, in order). Row r's logits are the bits a one-token :meth:`forward` on those caches gives."""
        ids = self.check_ids(tokens)
        if len(caches) != len(ids):
            raise ValueError(f"{len(ids)} tokens and {len(caches)} caches: give one list of caches a row")
        positions = positions_of(caches)
        top = int(positions.max()) + 1
        if top > self.arch.n_ctx:
            raise Refusal(("ids",), "over_context", top, self.arch.n_ctx)
        if not rows_apply(self.arch, self.weights):  # each row its own one-token pass, in order
            return np.concatenate([self.forward([t], cache=c) for t, c in zip(ids, caches)])
        per_layer = [[row[i] for row in caches] for i in range(self.arch.n_layer)]
        with one_blas_thread():  # as the model's own forward: BLAS never splits a sum by the thread count
            return forward(self.arch, self.weights, ids, ops=ROWS, caches=per_layer, positions=positions)

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

        Stops after ``max_new_tokens`` or, when ``stop``, after an end-of-turn token (yielded last).
        """
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise Refusal(("max_new_tokens",), "not_whole", max_new_tokens, 1)
        sampling = sampling or Sampling()
        rng = sampling.generator()
        cache = self.new_cache()
        logits = self.prefill(ids, cache=cache)  # the prompt in one pass (the output layer on its last token)
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

        A piece's text is what the tokens so far add to the decoded string; a character split
        over two tokens arrives with the second.
        """
        if not isinstance(prompt, str) or not prompt:
            raise Refusal(("prompt",), "empty_prompt")
        ids = self.to_tokens(prompt)
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


class Encoder(Model):
    """A sentence encoder: token ids with ``[CLS] … [SEP]``, a sentence embedding per text."""

    # Pieces of a batch that our threads share in encode: fixed pieces of 8 sentences keep every number
    # independent of the thread count (OpenBLAS's own threads changed them) and are faster than one
    # piece (docs/performance.md)
    PIECE_TEXTS = 8

    def __init__(self, *, max_length: int, pad_id: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.max_length = max_length  # sentence-transformers' max_seq_length: longer texts are cut
        self.pad_id = pad_id

    def tokenize(self, texts: Sequence[str], *, max_length: int | None = None):
        """Token ids and mask ``(B, T)``, ``[CLS] ... [SEP]``, cut at ``max_length`` (default 256)."""
        from attnlab.models.tokens import encode_batch

        texts = _texts(texts)
        limit = self.max_length if max_length is None else max_length
        if isinstance(limit, bool) or not isinstance(limit, int) or not 2 <= limit <= self.arch.n_ctx:
            raise Refusal(("max_length",), "out_of_range", limit, 2, self.arch.n_ctx)
        return encode_batch(self.tokenizer, texts, max_length=limit, pad_id=self.pad_id)

    def _trace_ids(self, text: str) -> list[int]:
        return self.tokenize([text]).ids[0].tolist()

    def token_labels(self, ids: Sequence[int]) -> list[str]:
        """Each token as its vocabulary writes it (WordPiece: ``##ing`` continues a word)."""
        return [self.tokenizer.id_to_token(int(i)) for i in ids]

    def embed_batch(self, batch) -> np.ndarray:
        """Unit-length sentence embeddings (B, d_model) of a tokenized batch (key padding masked out)."""
        with one_blas_thread():
            return forward(self.arch, self.weights, batch.ids, ops=self.ops,
                           key_padding=batch.mask.astype(bool))  # fmt: skip

    def encode(self, texts: Sequence[str], *, batch_size: int = 32, max_length: int | None = None):
        """Unit-length sentence embeddings ``(N, d_model)`` float32, in the order given.

        Texts are sorted by length before batching (as sentence-transformers does) so each batch
        carries little padding. A batch runs in pieces of at most 8 texts (padded to the batch's
        length), which our threads share: the pieces depend on the batch alone, never on the
        thread count, so the numbers are the same bits however many threads run.
        """
        from attnlab.engine.fast.workers import run
        from attnlab.models.tokens import Batch

        texts = _texts(texts)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise Refusal(("batch_size",), "not_whole", batch_size, 1)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.arch.d_model), dtype=np.float32)
        pieces = []  # (rows of out, their slice of a tokenized batch)
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            batch = self.tokenize([texts[i] for i in rows], max_length=max_length)
            for p in range(0, len(rows), self.PIECE_TEXTS):
                part = slice(p, p + self.PIECE_TEXTS)
                piece = Batch(ids=batch.ids[part], mask=batch.mask[part], tokens=batch.tokens[part])
                pieces.append((rows[part], piece))

        def embed_piece(piece, _buffers) -> None:
            rows, batch = piece
            out[rows] = forward(self.arch, self.weights, batch.ids, ops=self.ops,
                                key_padding=batch.mask.astype(bool))  # fmt: skip

        with one_blas_thread():  # held once for all the pieces, not set and reset per piece
            run(embed_piece, pieces, min(CORES, len(pieces)))
        return out


def positions_of(caches: Sequence[list[KVCache]]) -> np.ndarray:
    """Each row's position: its caches' length, plus the rows before it on the same caches."""
    seen: dict[int, int] = {}
    out = []
    for c in caches:
        at = seen.get(id(c), c[0].length)
        out.append(at)
        seen[id(c)] = at + 1
    return np.asarray(out, dtype=np.int64)


def _progress(progress: Progress, done: int, total: int):
    def report(a, name):
        progress(done, total)

    return report


def _chooser(names: Names, known: tuple[str, ...]):
    if names is None:
        return lambda name: True
    if callable(names):
        return names
    chosen = set(names)
    for name in chosen:
        if name not in known:
            from attnlab.engine.hooks import unknown_name

            raise FieldError(("names",), unknown_name(name, known))
    return lambda name: name in chosen


def _texts(texts: object) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, Sequence) or len(texts) == 0:
        raise Refusal(("texts",), "no_texts")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise Refusal(("texts", i), "not_text", type(t).__name__)
    return list(texts)
