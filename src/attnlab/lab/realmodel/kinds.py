"""Name what an attention head does, from its weights and the text's token ids.

For one head's weights ``w`` (T, T) (row i = query i, each row summing to 1),
``allowed`` (T, T) (True = may attend) and the token ids ``t`` (T,), five
scores, each a share in [0, 1]:

- *previous-token*: the mean of ``w[i, i-1]`` over queries i = 1..T-1;
- *first-token* (an "attention sink"): the mean of ``w[i, 0]`` over queries
  i = 1..T-1 (token 0 is left out: in a causal model it can only see itself);
- *induction*: query i's targets are the keys k with 1 <= k <= i-1 and
  ``t[k-1] == t[i]`` (the token right after an earlier occurrence of i's own
  token, never i itself) that i may see; the score is the mean over the
  queries that have a target of ``sum_k w[i, k]`` over their targets.
  ``None`` when no query has one (the text repeats no token). Earlier
  occurrences only, in an encoder too: "what came next last time";
- *duplicate-token*: the same with targets j < i and ``t[j] == t[i]`` (the
  earlier occurrences themselves); ``None`` when no token repeats;
- *breadth*: each row's entropy divided by the entropy of an even split over
  the keys it may see, averaged over the rows that may see two keys or more
  (0 = all on one key, 1 = perfectly even).

and a sixth, *self*: the mean of ``w[i, i]`` over queries i = 1..T-1.

A head's kind (:func:`kind_of`), with the thresholds of :data:`THRESHOLDS`:

1. among the patterns (induction, previous-token, duplicate-token, self), the
   one whose score is the largest multiple of its threshold, if any reaches
   its threshold (ties: that order);
2. else *first-token*, if its score reaches its threshold;
3. else *broad* if breadth reaches 0.8, *focused* if not.

A pattern comes before the sink because the scores are averaged over
different queries: an induction head copies where the text repeats and rests
on token 0 everywhere else, so its first-token score counts the resting
queries while its induction score counts only those where copying is
possible. Naming it by its resting place would hide what it does.

:func:`head_scores` computes every score of every head at once (NumPy, no loop
over heads or queries; timed by
``benchmarks/bench_head_kinds.py``, figures in docs/performance.md).
"""

from __future__ import annotations

import math

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.said import said
from attnlab.models.circuits.scores import SCORES, head_scores  # noqa: F401 - the kinds' scores, read here

PATTERNS = ("induction", "previous-token", "duplicate-token", "self")
KINDS = (*PATTERNS, "first-token", "broad", "focused")

# kind -> the score that names it (the key in a profile)
SCORE_OF = {
    "induction": "induction",
    "previous-token": "previous",
    "duplicate-token": "duplicate",
    "self": "self",
    "first-token": "first",
    "broad": "breadth",
    "focused": "breadth",
}
# kind -> the score it needs (at least); "focused" is what is left: breadth under "broad"'s
THRESHOLDS = {
    "induction": 0.4,
    "previous-token": 0.5,
    "duplicate-token": 0.4,
    "self": 0.5,
    "first-token": 0.5,
    "broad": 0.8,
}

SHORT = {
    "induction": "induction",
    "previous-token": "previous token",
    "duplicate-token": "duplicate token",
    "self": "self",
    "first-token": "first token",
    "broad": "broad",
    "focused": "focused",
}


# -- the kind ----------------------------------------------------------------------


def kind_of(scores: dict) -> str:
    """The kind a head's ``scores`` (floats; induction/duplicate may be None) name: see the module."""
    reached = [
        k for k in PATTERNS if scores[SCORE_OF[k]] is not None and scores[SCORE_OF[k]] >= THRESHOLDS[k]
    ]
    if reached:  # max keeps the first of equals: PATTERNS' order breaks ties
        return max(reached, key=lambda k: scores[SCORE_OF[k]] / THRESHOLDS[k])
    if scores["first"] >= THRESHOLDS["first-token"]:
        return "first-token"
    return "broad" if scores["breadth"] >= THRESHOLDS["broad"] else "focused"


def kind_phrase(kind: str) -> str:
    """``"an induction head"``, ``"a first-token head"``: the kind with its article."""
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} head"


def kind_sentence(kind: str, scores: dict) -> dict:
    """The sentence that names a head, with its claims ``{"kind", "score", "threshold"}``.

    ``score`` is the score that names the kind and ``threshold`` the one it reached
    (``broad``) or stayed under (``focused``: breadth < 0.8, and no other rule held).
    """
    key = SCORE_OF[kind]
    score = scores[key]
    threshold = THRESHOLDS.get(kind, THRESHOLDS["broad"])
    p, at = fmt.percent(score), fmt.percent(threshold)
    phrase = kind_phrase(kind)
    head = phrase[0].upper() + phrase[1:]
    texts = {
        "induction": f"{head}: tokens that repeat an earlier token put {p} of their attention, on "
        f"average, on the tokens right after every earlier occurrence of it (named at {at} or more).",
        "previous-token": f"{head}: on average {p} of each token's attention goes to the token just "
        f"before it (named at {at} or more).",
        "duplicate-token": f"{head}: tokens that repeat an earlier token put {p} of their attention, "
        f"on average, on its earlier occurrences (named at {at} or more).",
        "self": f"{head}: on average {p} of each token's attention stays on the token itself "
        f"(named at {at} or more).",
        "first-token": f"{head} (an attention sink): on average {p} of each token's attention goes "
        f"to the first token (named at {at} or more when no pattern is).",
        "broad": f"{head}: no pattern or sink reaches its threshold, and each row spreads its "
        f"attention almost evenly (breadth {fmt.rounded(score, 2)}, named at "
        f"{fmt.rounded(threshold, 2)} or more).",
        "focused": f"{head}: no pattern or sink reaches its threshold, and each row puts its "
        f"attention on a few tokens (breadth {fmt.rounded(score, 2)}, under "
        f"{fmt.rounded(threshold, 2)}).",
    }
    return said(texts[kind], kind=kind, score=score, threshold=threshold)


def _profile(scores: dict) -> dict:
    kind = kind_of(scores)
    return {"kind": kind, **scores, "sentence": kind_sentence(kind, scores)}


def head_profile(weights: np.ndarray, allowed: np.ndarray, ids=None) -> dict:
    """Scores, kind and naming sentence of one head: ``weights`` (T, T), ``allowed`` (T, T), ``ids`` (T,)."""
    s = head_scores(weights, allowed, ids)
    return _profile({k: None if v is None else float(v) for k, v in s.items()})


def profiles(weights: np.ndarray, allowed: np.ndarray, ids=None) -> list[dict]:
    """:func:`head_profile` of every head of ``weights`` (..., T, T), flattened in C order."""
    return profiles_of(head_scores(weights, allowed, ids), np.shape(weights)[:-2])


def profiles_of(s: dict, shape: tuple[int, ...]) -> list[dict]:
    """:func:`head_profile` of every head from its scores ``s`` (score -> array of ``shape``, or None)."""
    flat = {k: None if v is None else np.broadcast_to(v, shape).ravel().tolist() for k, v in s.items()}
    count = math.prod(shape)
    return [_profile({k: None if v is None else v[i] for k, v in flat.items()}) for i in range(count)]


def layer_profiles(trace, layer: int) -> list[dict]:
    """:func:`head_profile` for every head of ``layer`` in a ModelTrace."""
    trace.check(layer=layer)
    return profiles(trace.layer_weights(layer), trace.allowed, trace.ids)


# -- the words ---------------------------------------------------------------------


def definitions() -> list[dict]:
    """Each kind's definition, as the page's legend and the docs state it, with its claims."""
    t = {k: fmt.percent(v) for k, v in THRESHOLDS.items()}
    texts = {
        "induction": "a token that appeared before puts its attention on the tokens right after every "
        "earlier occurrence of it: it copies what came next before. Score: that share, summed over the "
        "occurrences and averaged over "
        f"the tokens that repeat an earlier one; named at {t['induction']} or more.",
        "previous-token": "each token puts its attention on the token just before it. Score: that "
        f"share, averaged over every token but the first; named at {t['previous-token']} or more.",
        "duplicate-token": "a token that appeared before puts its attention on its earlier "
        "occurrences. Score: that share, averaged over the tokens that repeat an earlier one; "
        f"named at {t['duplicate-token']} or more.",
        "self": "each token's attention stays on the token itself. Score: that share, averaged over "
        f"every token but the first; named at {t['self']} or more.",
        "first-token": "each token's attention goes to the first token, a resting place (an "
        "attention sink). Score: the share on the first token, averaged over every token but the "
        f"first; named at {t['first-token']} or more when no pattern above is named.",
        "broad": "no pattern or sink is named, and each row spreads its attention almost evenly. "
        "Breadth: a row's entropy divided by that of an even split over the keys it may see, "
        f"averaged over the rows; named at {fmt.rounded(THRESHOLDS['broad'], 2)} or more.",
        "focused": "no pattern or sink is named, and each row puts its attention on a few tokens: "
        f"breadth under {fmt.rounded(THRESHOLDS['broad'], 2)}.",
    }
    out = []
    for kind in KINDS:
        threshold = THRESHOLDS.get(kind, THRESHOLDS["broad"])
        entry = said(texts[kind], kind=kind, score=SCORE_OF[kind], threshold=threshold)
        out.append({"kind": kind, "name": SHORT[kind], **entry})
    return out


def rule_sentence() -> dict:
    """How a head gets its one name: the order of the rules, and why a pattern outranks the sink."""
    names = [SHORT[k] for k in PATTERNS]
    return said(
        f"A head's name: among {', '.join(names[:-1])} and {names[-1]}, the score furthest above its "
        "threshold (as a multiple of it); if none reaches its threshold, first token if that does; "
        "else broad or focused by breadth. A pattern outranks the resting place because an "
        "induction head copies where the text repeats and rests on the first token everywhere "
        "else: its induction score counts only the tokens that repeat.",
        order=[*PATTERNS, "first-token", "broad", "focused"],
        thresholds=dict(THRESHOLDS),
    )


def shares_sentence(scores: dict) -> dict:
    """Where a head's attention goes on average, in one sentence, with the scores it states."""
    p = {k: fmt.percent(scores[k]) for k in ("previous", "first")}
    text = (
        f"On average, {p['previous']} of each token's attention goes to the previous token and "
        f"{p['first']} to the first token; "
    )
    if scores["induction"] is None:
        text += "no token repeats in this text, so there is no induction or duplicate-token score."
    else:
        text += (
            f"tokens that repeat an earlier token put {fmt.percent(scores['induction'])} on the tokens "
            f"after every earlier occurrence of it (induction) and {fmt.percent(scores['duplicate'])} on the "
            "earlier occurrences themselves (duplicate token)."
        )
    claims = {k: scores[k] for k in ("previous", "first", "induction", "duplicate")}
    return said(text, **claims)


def breadth_words(breadth: float, n_tokens: int) -> str:
    """What a breadth means, in tokens: a row as spread as a uniform row over about N tokens."""
    if n_tokens <= 1:
        return "breadth: with one token there is nothing to spread over"
    even = max(1, round(math.exp(breadth * math.log(n_tokens))))
    return (
        f"breadth {breadth:.2f}: on average a row is as spread out as an even split over about "
        f"{even} of the up to {n_tokens} tokens it may see (0 = all on one token, 1 = perfectly even)"
    )


def breadth_sentence(breadth: float) -> dict:
    """The head's breadth and what its two ends mean."""
    return said(
        f"Breadth {fmt.rounded(breadth, 2)} (0 = each token attends to one key, 1 = its attention is "
        "spread evenly over every key it may see).",
        breadth=breadth,
    )


def top_sources(row: np.ndarray, labels: list[str], k: int = 3) -> list[tuple[str, float]]:
    """The ``k`` keys with the largest shares in one query ``row``, largest first (ties: earlier)."""
    order = np.argsort(-np.asarray(row, dtype=np.float64), kind="stable")[:k]
    return [(labels[i], float(row[i])) for i in order]
