"""Ablation as the page shows it: switch heads off on a text's run, and what changed.

:func:`ablation_view` takes a loaded model and a run of the text (a :class:`Cache`, from
:func:`.kept.cache_of` or :func:`attnlab.models.circuits.runs.run`) or its token ids; a
decoder answers each position's next-token probabilities and loss before and after
(``lab/circuits/ablation.next_token_view``), the encoder how the residual stream leaving
``layer`` (default: the last) moved (``layer_view``).
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.lab.circuits.ablation import check_heads, layer_view, next_token_view
from attnlab.models.circuits.ablation import ablate, layer_change, next_token_change
from attnlab.models.circuits.runs import Cache, run
from attnlab.models.circuitviews.texts import program_source, token_texts

TOP = 5  # tokens shown before and after at each position


def ablation_view(model, ids_or_cache, heads: Sequence[tuple[int, int]], *, how: str = "zero",
                  layer: int | None = None, tokens: list[str] | None = None,
                  job: str | None = None) -> dict:  # fmt: skip
    """JSON-ready: ``heads`` ((layer, head) pairs) switched off (``how``: "zero" or "mean").

    ``tokens``: the text's token texts (default: the model's labels of the ids); ``layer``:
    the encoder's layer whose output is shown (default the last; a decoder ignores it).
    """
    heads = [(int(layer_), int(head)) for layer_, head in heads]
    check_heads(heads, model=model.name, n_layer=model.arch.n_layer, n_head=model.arch.n_head)
    cache = ids_or_cache if isinstance(ids_or_cache, Cache) else run(model, list(ids_or_cache))
    if tokens is None:
        texts = token_texts(model, cache.ids)
        tokens = [texts[int(i)] for i in cache.ids]
    a = ablate(model, cache, heads, how=how)
    source = {"program_source": program_source(model, cache.ids, tokens)}
    if model.kind == "decoder":
        change = next_token_change(a, top=TOP)
        texts = token_texts(model, [*change["top_ids_before"].ravel(), *change["top_ids_after"].ravel()])
        return next_token_view(change, heads=a.heads, how=how, tokens=tokens, texts=texts, job=job) | source
    change = layer_change(a, model.arch.n_layer - 1 if layer is None else layer)
    return layer_view(change, heads=a.heads, how=how, tokens=tokens, job=job) | source
