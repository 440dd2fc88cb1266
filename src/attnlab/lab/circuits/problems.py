"""What is wrong with a circuits request, in words that never name the field.

``models/circuits`` (the numbers: :mod:`attnlab.models.circuits.checks`) and the
circuits views raise :class:`~attnlab.engine.errors.FieldError` with these problems;
the field is named only where the error is shown (the page's words,
``attnlab.lab.fields``: "Corrupted prompt is 9 tokens long and the clean prompt 10; …").
Layers, heads and positions outside the model or the text use the Real model view's
problems (:mod:`attnlab.lab.realmodel.problems`).
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.lab.heads import FORMAT, head_name
from attnlab.lab.realmodel.tokens import token_label


def not_an_index(value: object) -> str:
    return f"{value!r} is not a whole number"


def too_long(n_tokens: int, limit: int) -> str:
    return f"is {n_tokens} tokens long; the model reads at most {limit}"


def lengths_differ(n_clean: int, n_corrupt: int) -> str:
    return (
        f"is {n_corrupt} tokens long and the clean prompt {n_clean}; patching needs two prompts "
        "of the same token length"
    )


def same_answers(token: int) -> str:
    return f"name token {token} twice; give two different tokens"


def not_two_answers(value: object) -> str:
    return f"{value!r:.40} is not two token ids"


def unknown_choice(value: object, choices: Sequence[str]) -> str:
    return f"{value!r:.40} is unknown; use one of {', '.join(choices)}"


def edits_below(first: int, layer: int) -> str:
    return f"is {layer}, above an edit in layer {first}; run again from layer {first} or lower"


def already_edited() -> str:
    return "is a run with interventions already; ablate a run of the text as it is"


def not_a_head(value: object) -> str:
    return f"{value!r:.40} is not a (layer, head) pair"


def no_unembedding(model: str) -> str:
    return f"{model} is an encoder: it has no next token and no unembedding"


def wrong_shape(shape: tuple, expected: tuple) -> str:
    return f"has shape {shape}; expected {expected}"


# -- the page's inputs ---------------------------------------------------------------------------


def no_heads() -> str:
    """An ablation that names no head."""
    return f"names no head: give at least one, such as {head_name(18, 6)}"


def unreadable_head(piece: str) -> str:
    """A piece of the heads list that is not written ``L<layer> H<head>`` (cut to 20 characters)."""
    return f"has {piece[:20]!r}, which is not a head: write each as {FORMAT}, such as {head_name(18, 6)}"


def too_many_heads(n: int, limit: int) -> str:
    return f"names {n} heads; at most {limit} at a time"


def no_tokens(title: str) -> str:
    """A text the model reads as no token at all (a lone control character, say)."""
    return f"makes no token for {title}: give a text with a word in it"


def not_one_token(text: str, pieces: Sequence[str], title: str) -> str:
    """An answer that is not one token of the model (``pieces``: its tokens' texts, labelled here)."""
    if not pieces:
        return f"is empty: give one token of {title}, such as ' Paris'"
    shown = " + ".join(token_label(p)["label"] for p in pieces[:6]) + (" + …" if len(pieces) > 6 else "")
    return f"is {len(pieces)} tokens for {title} ({shown}); give one token, such as ' Paris'"


def layers_reversed(first: int, last: int) -> str:
    """A sweep's first layer after its last."""
    return f"is {last}, below the first layer {first}; give a last layer of {first} or more"


def encoder_has_no(what: str, title: str) -> str:
    """A view only a decoder has (``what``: "logit lens", "logit attribution"), asked of an encoder."""
    return f"cannot show a {what}: {title} is an encoder, with no next token and no unembedding"


def no_such_job() -> str:
    """A circuits job id the server does not keep."""
    return "This result is no longer kept: run it again"


def no_such_head(label: str, model: str, n_layer: int, n_head: int) -> str:
    """A head the model does not have, as the learner wrote it (``label``: "L31 H6")."""
    return (
        f"has {label}, which {model} does not have: its layers are 0..{n_layer - 1} and its heads "
        f"0..{n_head - 1}"
    )


def same_answer(label: str) -> str:
    """The other answer is the right answer's token (``label``: as the page shows tokens)."""
    return f"is the same token as the right answer ({label}); give a different one"
