"""What one head reads and writes, as the page shows it.

:func:`head_view`: ``models/circuits/heads``' :func:`head_reads` (both models) and, for a
decoder, :func:`head_writes` at query ``position``, in the lab's words (``lab/circuits/head``).
"""

from __future__ import annotations

from attnlab.lab.circuits.head import head_view as words
from attnlab.models.circuits import checks
from attnlab.models.circuits.heads import head_reads, head_writes
from attnlab.models.circuits.runs import Cache
from attnlab.models.circuitviews.texts import program_source, token_texts

SOURCES = 5  # keys the head attends to most, each with the tokens its value promotes
TOP = 5


def head_view(model, cache: Cache, layer: int, head: int, position: int = -1, *,
              tokens: list[str] | None = None, job: str | None = None) -> dict:  # fmt: skip
    """JSON-ready: query head ``head`` of ``layer`` at query ``position`` (-1: the last token)."""
    query = checks.position(position, cache.n_tokens, loc=("position",))
    reads = head_reads(model, cache, layer, head)
    writes = None
    if model.kind == "decoder":
        writes = head_writes(model, cache, layer, head, query, sources=SOURCES, top=TOP)
    if tokens is None:
        texts = token_texts(model, cache.ids)
        tokens = [texts[int(i)] for i in cache.ids]
    texts = None
    if writes is not None:
        texts = token_texts(model, [*writes.promoted_ids.ravel(), *writes.written_ids])
    rotated = model.kind == "decoder"
    view = words(reads, writes, query=query, tokens=tokens, texts=texts, rotated=rotated, job=job)
    return view | {"program_source": program_source(model, cache.ids, tokens)}
