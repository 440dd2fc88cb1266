"""Head kinds: the five scores against a plain per-query reference, and the label against the scores."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.kinds import (
    PATTERNS,
    SCORE_OF,
    THRESHOLDS,
    breadth_words,
    definitions,
    head_profile,
    head_scores,
    kind_of,
    profiles,
    rule_sentence,
    top_sources,
)

SETTINGS = settings(max_examples=200, deadline=None)


def _causal(n):
    return np.tril(np.ones((n, n), dtype=bool))


def test_head_kinds_on_made_up_patterns():
    n = 6
    previous = np.eye(n, k=-1)
    previous[0, 0] = 1.0
    assert head_profile(previous, _causal(n))["kind"] == "previous-token"
    sink = np.zeros((n, n))
    sink[:, 0] = 1.0
    assert head_profile(sink, _causal(n))["kind"] == "first-token"
    broad = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    profile = head_profile(broad, _causal(n))
    assert profile["kind"] == "broad" and profile["breadth"] == pytest.approx(1.0)
    assert head_profile(np.eye(n), _causal(n))["kind"] == "self"
    two = np.zeros((n, n))  # 40% on the first token, 40% on the previous one, 20% on itself
    two[1:, 0] += 0.4
    two[np.arange(1, n), np.arange(n - 1)] += 0.4
    two[np.arange(n), np.arange(n)] += 0.2
    two[0, 0] = 1.0
    assert head_profile(two, _causal(n))["kind"] == "focused"


def test_top_sources_are_largest_first_and_ties_keep_order():
    assert top_sources(np.array([0.2, 0.5, 0.2, 0.1]), ["a", "b", "c", "d"], k=3) == [
        ("b", 0.5),
        ("a", 0.2),
        ("c", 0.2),
    ]


def test_head_kinds_include_self_and_breadth_is_said_in_tokens():
    n = 6
    causal = np.tril(np.ones((n, n), dtype=bool))
    assert head_profile(np.eye(n), causal)["kind"] == "self"
    uniform = np.where(causal, 1.0, 0.0) / causal.sum(1, keepdims=True)
    p = head_profile(uniform, causal)
    assert p["kind"] == "broad" and math.isclose(p["breadth"], 1.0)
    assert breadth_words(1.0, 6).startswith(
        "breadth 1.00: on average a row is as spread out as an even split"
    )
    assert "about 6 of the up to 6 tokens" in breadth_words(1.0, 6)
    assert "about 1 of" in breadth_words(0.0, 6)


def _reference(w: np.ndarray, allowed: np.ndarray, ids: list[int]) -> dict:
    """The scores as the module's docstring defines them, one query at a time, in plain Python."""
    n = len(ids)
    mean = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731

    def over_targets(targets_of) -> float | None:
        sums = []
        for i in range(n):
            targets = [k for k in targets_of(i) if allowed[i, k]]
            if targets:
                sums.append(sum(float(w[i, k]) for k in targets))
        return mean(sums)

    spread = []
    for i in range(n):
        seen = int(allowed[i].sum())
        if seen > 1:
            ent = -sum(float(x) * math.log(float(x)) for x in w[i] if x > 0)
            spread.append(ent / math.log(seen))
    return {
        "previous": mean([float(w[i, i - 1]) for i in range(1, n)]) if n > 1 else 0.0,
        "first": mean([float(w[i, 0]) for i in range(1, n)]) if n > 1 else float(w[0, 0]),
        "self": mean([float(w[i, i]) for i in range(1, n)]) if n > 1 else float(w[0, 0]),
        "induction": over_targets(lambda i: [k for k in range(1, i) if ids[k - 1] == ids[i]]),
        "duplicate": over_targets(lambda i: [j for j in range(i) if ids[j] == ids[i]]),
        "breadth": mean(spread) if spread else 0.0,
    }


def _patterns(ids: list[int], allowed: np.ndarray) -> list[np.ndarray]:
    """Row-stochastic (T, T) heads, one per rule (uniform over the allowed keys where a row has no target)."""
    n = len(ids)
    uniform = allowed / allowed.sum(axis=1, keepdims=True)

    def pointing(targets_of) -> np.ndarray:
        out = uniform.copy()
        for i in range(n):
            targets = [k for k in targets_of(i) if allowed[i, k]]
            if targets:
                out[i] = 0.0
                out[i, targets] = 1.0 / len(targets)
        return out

    return [
        pointing(lambda i: [k for k in range(1, i) if ids[k - 1] == ids[i]]),  # induction
        pointing(lambda i: [j for j in range(i) if ids[j] == ids[i]]),  # duplicate token
        pointing(lambda i: [i - 1] if i else []),  # previous token
        pointing(lambda i: [0]),  # first token
        pointing(lambda i: [i]),  # self
        uniform,
    ]


@st.composite
def heads(draw):
    """(weights (H, T, T), allowed, ids): random mixtures of pattern heads and noise, causal or not."""
    n = draw(st.integers(1, 12))
    causal = draw(st.booleans())
    ids = draw(st.lists(st.integers(0, draw(st.integers(0, 12))), min_size=n, max_size=n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    allowed = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    pats = _patterns(ids, allowed)
    out = []
    for _ in range(draw(st.integers(1, 4))):
        noise = np.where(allowed & (rng.random((n, n)) > 0.3), rng.random((n, n)), 0.0)
        noise[np.arange(n), np.arange(n) if causal else 0] += 1e-3  # no row all zero
        noise /= noise.sum(axis=1, keepdims=True)
        mix = rng.dirichlet(np.full(len(pats) + 1, 0.3))
        out.append(sum(a * p for a, p in zip(mix, [*pats, noise])))
    return np.stack(out), allowed, ids


@SETTINGS
@given(heads())
def test_every_score_equals_its_definition_one_query_at_a_time(drawn):
    w, allowed, ids = drawn
    got = head_scores(w, allowed, ids)
    for h in range(len(w)):
        want = _reference(w[h], allowed, ids)
        for key, value in want.items():
            if value is None:
                assert got[key] is None, key
            else:
                assert math.isclose(float(got[key][h]), value, rel_tol=1e-9, abs_tol=1e-12), key
                assert -1e-12 <= value <= 1 + 1e-9


def _holds(kind: str, s: dict) -> bool:
    """The rule, read as conditions on the scores alone (not kind_of's code path)."""
    ratio = {k: s[SCORE_OF[k]] / THRESHOLDS[k] for k in PATTERNS if s[SCORE_OF[k]] is not None}
    reached = {k: r for k, r in ratio.items() if r >= 1}
    if kind in PATTERNS:
        earlier = PATTERNS[: PATTERNS.index(kind)]
        return kind in reached and all(
            r < reached[kind] if k in earlier else r <= reached[kind] for k, r in reached.items()
        )
    if reached:
        return False
    if kind == "first-token":
        return s["first"] >= THRESHOLDS["first-token"]
    if s["first"] >= THRESHOLDS["first-token"]:
        return False
    return (s["breadth"] >= THRESHOLDS["broad"]) == (kind == "broad")


@SETTINGS
@given(heads())
def test_a_heads_label_holds_of_its_scores_and_its_sentence_claims_them(drawn):
    w, allowed, ids = drawn
    for p in profiles(w, allowed, ids):
        kind = p["kind"]
        named = [k for k in (*PATTERNS, "first-token", "broad", "focused") if _holds(k, p)]
        assert named == [kind]  # the label holds, and no other does
        claims = p["sentence"]["claims"]
        score = p[SCORE_OF[kind]]
        assert claims == {"kind": kind, "score": score, "threshold": THRESHOLDS.get(kind, 0.8)}
        if kind in ("broad", "focused"):
            assert (score >= claims["threshold"]) == (kind == "broad")
            assert f"breadth {fmt.rounded(score, 2)}" in p["sentence"]["text"]
        else:
            assert score >= claims["threshold"]
            assert f"{fmt.percent(score)} of" in p["sentence"]["text"]
        assert f"{fmt.percent(claims['threshold'])} or more" in p["sentence"]["text"] or kind in (
            "broad",
            "focused",
        )


def test_a_strong_copier_reads_induction_though_most_of_its_rows_rest_on_token_0():
    ids = list(range(10)) + [0, 1, 2]  # ten different tokens, then three repeats
    n = len(ids)
    w = np.zeros((n, n))
    w[:, 0] = 1.0  # resting on the first token...
    for i in (10, 11, 12):  # ...except where the text repeats: 90% on the token after the earlier occurrence
        w[i] = 0.0
        w[i, i - 9], w[i, 0] = 0.9, 0.1
    p = head_profile(w, np.tril(np.ones((n, n), dtype=bool)), ids)
    assert p["first"] >= 0.5 and p["induction"] == pytest.approx(0.9)
    assert p["kind"] == "induction"
    assert p["sentence"]["text"].startswith("An induction head: tokens that repeat an earlier token put 90%")


def test_without_ids_or_repeats_there_is_no_induction_or_duplicate_score():
    w = np.full((4, 4), 0.25)
    for ids in (None, [5, 6, 7, 8]):
        p = head_profile(w, np.ones((4, 4), dtype=bool), ids)
        assert p["induction"] is None and p["duplicate"] is None and p["kind"] == "broad"
    with pytest.raises(ValueError, match=r"^ids \(3,\) do not match weights \(\.\.\., 4, 4\)$"):
        head_scores(w, np.ones((4, 4), dtype=bool), [1, 2, 3])


def test_a_doubled_token_is_not_its_own_induction_target():
    # "x x": query 1's only earlier occurrence is token 0, and the token after it is query 1 itself
    w = np.array([[1.0, 0.0], [0.0, 1.0]])
    p = head_profile(w, np.tril(np.ones((2, 2), dtype=bool)), [7, 7])
    assert p["induction"] is None and p["duplicate"] == 0.0 and p["kind"] == "self"


def test_kind_of_breaks_ties_in_the_stated_order_and_compares_multiples_of_thresholds():
    base = {"previous": 0.0, "first": 0.9, "induction": None, "duplicate": None, "self": 0.0, "breadth": 0.9}
    assert kind_of(base) == "first-token"
    assert kind_of({**base, "induction": 0.4, "previous": 0.5}) == "induction"  # both 1x: the order
    assert kind_of({**base, "induction": 0.44, "previous": 0.6}) == "previous-token"  # 1.1x < 1.2x
    assert kind_of({**base, "first": 0.1}) == "broad"
    assert kind_of({**base, "first": 0.1, "breadth": 0.79}) == "focused"


def test_the_definitions_and_the_rule_state_the_thresholds_the_labels_use():
    by_kind = {d["kind"]: d for d in definitions()}
    assert list(by_kind) == [*PATTERNS, "first-token", "broad", "focused"]
    for kind, d in by_kind.items():
        assert d["claims"] == {"kind": kind, "score": SCORE_OF[kind], "threshold": THRESHOLDS.get(kind, 0.8)}
        shown = fmt.rounded(0.8, 2) if kind in ("broad", "focused") else fmt.percent(d["claims"]["threshold"])
        assert shown in d["text"]
    assert "tokens right after every earlier occurrence of it" in by_kind["induction"]["text"]
    rule = rule_sentence()
    assert rule["claims"]["order"] == [*PATTERNS, "first-token", "broad", "focused"]
    assert rule["text"].startswith("A head's name: among induction, previous token, duplicate token and self")
