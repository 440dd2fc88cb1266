"""A text as a model reads it for circuits: token ids and each token's own text, and an answer's one token.

An encoder's ids are ``[CLS] … [SEP]`` (as its trace has them), each token as its vocabulary writes
it (WordPiece: ``##ing``); a decoder's have no BOS unless its tokenizer adds one, each token its own
decoded text. A text the model reads as no token, or as more than its cap, and an answer that is not
one token, are typed refusals at their field (worded by the lab).
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.models import registry
from attnlab.models.errors import Refusal
from attnlab.models.jobs.texts import check_text, too_many_tokens


def _cap(model) -> int:
    spec = registry.SPECS.get(model.name)
    return spec.max_tokens if spec is not None else registry.DEFAULT_MAX_TOKENS


def is_encoder(model) -> bool:
    """A sentence encoder (its head is the pooled sentence: ``[CLS]`` and ``[SEP]``, no next token)."""
    return model.kind == "encoder"


def tokenize(model, text: object, *, field: str = "text") -> tuple[list[int], list[str]]:
    """``text``'s token ids and their texts, or a refusal at ``field`` (empty, half a character, no
    token, over the cap)."""
    text = check_text(text, field=field)
    if is_encoder(model):
        batch = model.tokenize([text], max_length=model.arch.n_ctx)  # counted whole, refused over the cap
        ids, tokens = batch.ids[0].tolist(), list(batch.tokens[0])
    else:
        ids = model.to_tokens(text)
        tokens = model.token_labels(ids)
    if not ids:
        raise Refusal((field,), "circuits.no_tokens", registry.title(model.name))
    cap = _cap(model)
    if len(ids) > cap:
        raise too_many_tokens(field, model.name, len(ids), cap)
    return ids, tokens


def token_texts(model, ids: Sequence[int]) -> dict[int, str]:
    """Each id's text (id -> text), for the tokens a view names."""
    unique = sorted({int(i) for i in ids})
    return dict(zip(unique, model.token_labels(unique)))


def answer_id(model, text: object, *, field: str) -> int:
    """The one token ``text`` is for ``model`` (``" Paris"``), else a refusal at ``field``."""
    if not isinstance(text, str):
        raise Refusal((field,), "circuits.not_one_token", "", [], registry.title(model.name))
    ids = model.to_tokens(text) if not is_encoder(model) else []
    if len(ids) != 1:
        pieces = model.token_labels(ids) if ids else []
        raise Refusal((field,), "circuits.not_one_token", text, pieces, registry.title(model.name))
    return int(ids[0])
