"""The logit lens as the page shows it: each block's output at one position, read as if it were the last.

:func:`lens_view`: ``models/circuits/lens.logit_lens`` on a decoder's run, in the lab's
words (``lab/circuits/lens``). An encoder has no unembedding: ``FieldError`` at ``model``.
"""

from __future__ import annotations

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits.lens import lens_view as words
from attnlab.lab.circuits.problems import encoder_has_no
from attnlab.models import registry
from attnlab.models.circuits.lens import logit_lens
from attnlab.models.circuits.runs import Cache
from attnlab.models.circuitviews.texts import program_source, token_texts

TOP = 5


def lens_view(model, cache: Cache, position: int = -1, token: int | None = None, *,
              tokens: list[str] | None = None, job: str | None = None) -> dict:  # fmt: skip
    """JSON-ready lens of ``cache`` at ``position`` (-1: the last token), following ``token`` (default:
    the model's answer there)."""
    if model.kind != "decoder":
        raise FieldError(("model",), encoder_has_no("logit lens", registry.title(model.name)))
    lens = logit_lens(model, cache, position, top=TOP, token=token)
    if tokens is None:
        texts = token_texts(model, cache.ids)
        tokens = [texts[int(i)] for i in cache.ids]
    texts = token_texts(model, [*lens.top_ids.ravel(), lens.answer, lens.token])
    view = words(lens, tokens=tokens, texts=texts, job=job)
    return view | {"program_source": program_source(model, cache.ids, tokens)}
