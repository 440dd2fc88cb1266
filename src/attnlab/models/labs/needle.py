"""The dilution lab's needle: one query's attention on a needle word in SmolLM2 as the haystack grows.

The lab gives the text's parts (a needle sentence holding the needle word, filler
sentences, a question); :func:`texts` writes, for each length n, the needle sentence, as
many filler words (the sentences' words in turn) as fit, and the question, so the text
is at most n tokens of the model's own tokenizer (the counter: no weights). Each text is
traced by a trace job. :func:`row` reads one traced text: the last token's scaled scores
in the stated head (the query: the question's last token), which of the tokens hold the
needle word, the head's weights on them (the model's float32 weights), the mean over
every head of every layer of the share on the needle, and the model's top next token.
"""

from __future__ import annotations

import numpy as np

from attnlab.models import registry


def _text(needle: str, filler: list[str], k: int, question: str) -> str:
    words = [filler[i % len(filler)] for i in range(k)]
    return needle + "".join(" " + w for w in words) + question


def texts(
    model: str, needle: str, filler: tuple[str, ...], question: str, lengths: tuple[int, ...]
) -> list[str]:
    """For each length, the longest text of the parts (filler words added in turn) of at most that many
    tokens; the needle sentence and the question alone when even they are longer."""
    count = registry.counter(model).tokens
    words = [w for sentence in filler for w in sentence.split()]
    out = []
    for n in lengths:
        lo, hi = 0, 4 * n  # a word is at least one token: more than n words never fit
        while lo < hi:  # the most words that fit
            mid = (lo + hi + 1) // 2
            if len(count(_text(needle, words, mid, question))) <= n:
                lo = mid
            else:
                hi = mid - 1
        out.append(_text(needle, words, lo, question))
    return out


def needle_tokens(tokens: list[str], text: str, word: str) -> list[int]:
    """The tokens of ``text`` (each token's own text, in order) that overlap the first ``word`` in it."""
    start = text.index(word)
    stop = start + len(word)
    out, at = [], 0
    for i, t in enumerate(tokens):
        if at < stop and at + len(t) > start:
            out.append(i)
        at += len(t)
    return out


def row(trace, text: str, word: str, layer: int, head: int) -> dict:
    """The needle row of one traced text (see the module docstring)."""
    tokens = list(trace.tokens)
    needle = needle_tokens(tokens, text, word)
    scores = trace.head_scores(layer, head)[-1]  # the question's last token: it sees every key
    weights = trace.head_weights(layer, head)[-1]
    every = np.stack([trace.layer_weights(lay)[:, -1, :] for lay in range(trace.n_layer)])  # (L, H, T)
    on_needle = every[:, :, needle].astype(np.float64).sum(axis=-1)  # (L, H)
    top = int(np.argmax(trace.logits[-1]))
    return {
        "n_tokens": len(tokens),
        "needle": needle,
        "needle_labels": [tokens[i] for i in needle],
        "query_label": tokens[-1],
        "scores": [float(x) for x in scores],
        "model_share": float(weights[needle].astype(np.float64).sum()),
        "mean_share": float(on_needle.mean()),
        "heads": int(on_needle.size),
        "top_next": registry.counter(trace.model).text(top),
        "top_next_id": top,
    }
