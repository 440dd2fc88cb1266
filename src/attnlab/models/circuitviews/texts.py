"""A text as a model reads it for circuits: token ids and their texts, and an answer's one token.

MiniLM's ids are ``[CLS] … [SEP]`` (as its trace has them); SmolLM2's have no BOS (as
``SmolLM2.encode``). A text over the model's token cap is refused at its field in the
lab's words, as a trace is.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits import problems
from attnlab.lab.realmodel.tokens import token_label
from attnlab.models import registry
from attnlab.models.jobs.texts import check_text, token_cap_message


def _cap(model) -> int:
    spec = registry.SPECS.get(model.name)
    return spec.max_tokens if spec is not None else registry.DEFAULT_MAX_TOKENS


def is_encoder(model) -> bool:
    """MiniLM (``tokenize``, ``[CLS]`` and ``[SEP]``) rather than SmolLM2."""
    return hasattr(model, "tokenize")


def tokenize(model, text: object, *, field: str = "text") -> tuple[list[int], list[str]]:
    """``text``'s token ids and their texts, or ``FieldError`` at ``field`` (empty, half a character, no
    token, over the cap)."""
    text = check_text(text, field=field)
    if is_encoder(model):
        batch = model.tokenize([text], max_length=512)  # counted whole, then refused over the cap
        ids, tokens = batch.ids[0].tolist(), list(batch.tokens[0])
    else:
        ids = model.encode(text)
        tokens = model.token_labels(ids)
    if not ids:
        raise FieldError((field,), problems.no_tokens(registry.title(model.name)))
    cap = _cap(model)
    if len(ids) > cap:
        raise FieldError((field,), token_cap_message(model.name, len(ids), cap))
    return ids, tokens


def token_texts(model, ids: Sequence[int]) -> dict[int, str]:
    """Each id's text (id -> text), for the tokens a view names."""
    unique = sorted({int(i) for i in ids})
    if is_encoder(model):
        return {i: model.tokenizer.id_to_token(i) for i in unique}
    return dict(zip(unique, model.token_labels(unique)))


def program_source(model, ids, tokens: list[str], corrupt_ids=None) -> dict:
    """What "How is this computed?" needs besides a number's descriptor (``POST /api/models/program``):
    the model, the token ids (and a patch's corrupted prompt's), their texts, the path the numbers ran on."""
    out = {"model": model.name, "ids": [int(i) for i in ids], "tokens": list(tokens),
           "path": model.path}  # fmt: skip
    if corrupt_ids is not None:
        out["corrupt_ids"] = [int(i) for i in corrupt_ids]
    return out


def answer_id(model, text: object, *, field: str) -> int:
    """The one token ``text`` is for ``model`` (``" Paris"``), else ``FieldError`` at ``field``."""
    if not isinstance(text, str):
        raise FieldError((field,), problems.not_one_token("", [], registry.title(model.name)))
    ids = model.encode(text) if not is_encoder(model) else []
    if len(ids) != 1:
        pieces = [token_label(t)["label"] for t in model.token_labels(ids)] if ids else []
        raise FieldError((field,), problems.not_one_token(text, pieces, registry.title(model.name)))
    return int(ids[0])
