"""'Which heads matter here' as the page shows it: direct logit attribution at one position.

:func:`attribution_view`: the logit of ``token`` (default the model's top token there) at
``position`` of a decoder's run, as a sum of the embedding's, each head's and each MLP's
terms (``models/circuits/attribution``), in the lab's words (``lab/circuits/attribution``).
An encoder has no logits: ``FieldError`` at ``model``.
"""

from __future__ import annotations

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits.attribution import attribution_view as words
from attnlab.lab.circuits.problems import encoder_has_no
from attnlab.models import registry
from attnlab.models.circuits.attribution import logit_attribution
from attnlab.models.circuits.runs import Cache
from attnlab.models.circuitviews.texts import program_source, token_texts


def attribution_view(model, cache: Cache, position: int = -1, token: int | None = None, *,
                     tokens: list[str] | None = None, job: str | None = None) -> dict:  # fmt: skip
    """JSON-ready attribution of ``cache``'s logit of ``token`` at ``position`` (-1: the last token)."""
    if model.kind != "decoder":
        raise FieldError(("model",), encoder_has_no("logit attribution", registry.title(model.name)))
    a = logit_attribution(model, cache, position, token)
    if tokens is None:
        texts = token_texts(model, cache.ids)
        tokens = [texts[int(i)] for i in cache.ids]
    token_text = token_texts(model, [a.token])[a.token]
    view = words(a, tokens=tokens, token_text=token_text, path=model.path, job=job)
    return view | {"program_source": program_source(model, cache.ids, tokens)}
