"""The real-model words' claims, checked against the numbers they are about (synthetic rows and logits)."""

from __future__ import annotations

import math
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.neuron import TOP, neuron_words, row_words
from attnlab.lab.realmodel.status import count_words, generation_status
from attnlab.models.nexttoken import next_token
from attnlab.models.sampling import Sampling, cut

ONE_SENTENCE = re.compile(r"[.!?…:]\s+[A-Z]")  # a second sentence would start after one of these


def _one_sentence(text: str) -> None:
    assert not ONE_SENTENCE.search(text.replace("Top-k", "top-k").replace("Top-p", "top-p")), text
    assert text.endswith((".", "…", ":")), text


@st.composite
def rows(draw):
    n = draw(st.integers(1, 12))
    d = draw(st.integers(1, 6))
    num = st.floats(-4, 4, allow_nan=False).map(lambda x: round(x, 3))
    q = draw(st.lists(num, min_size=d, max_size=d))
    keys = draw(st.lists(st.lists(num, min_size=d, max_size=d), min_size=n, max_size=n))
    values = draw(st.lists(st.lists(num, min_size=d, max_size=d), min_size=n, max_size=n))
    allowed = draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(any))
    labels = [f"{i} {t}" for i, t in enumerate(draw(st.lists(st.sampled_from(["␣the", "⏎", "cat", "⇥"]),
                                                              min_size=n, max_size=n)))]  # fmt: skip
    scale = draw(st.sampled_from([1.0, 0.5, 1 / math.sqrt(d)]))
    return trace_query(q, keys, values, labels=labels, allowed=allowed, scale=scale)


@settings(max_examples=150, deadline=None)
@given(rows(), st.data())
def test_a_rows_words_claim_what_its_numbers_are(row, data):
    index = data.draw(st.integers(0, row.n_sources - 1))
    w = row_words(row, index)
    allowed = list(row.allowed_indices)
    by_share = sorted(allowed, key=lambda i: (-row.weights[i], i))
    by_score = sorted(allowed, key=lambda i: (-row.scores[i], i))
    s = w["summary"]["claims"]
    assert s["top"] == row.labels[by_share[0]] and s["share"] == row.weights[by_share[0]] == max(row.weights)
    assert s["score"] == max(row.scores[i] for i in allowed) and s["blocked"] == len(row.blocked)
    assert fmt.percent(s["share"]) in w["summary"]["text"] and s["query"] == row.labels[index]
    m = w["match"]["claims"]
    assert m["highest"] == [[row.labels[i], row.scores[i]] for i in by_score[:TOP]]
    assert [x[1] for x in m["highest"]] == sorted((row.scores[i] for i in allowed), reverse=True)[:TOP]
    assert m["keys"] == len(allowed) and m["more"] == max(len(allowed) - TOP, 0) and m["scale"] == row.scale
    sh = w["share"]["claims"]
    assert [x[1] for x in sh["largest"]] == sorted((row.weights[i] for i in allowed), reverse=True)[:TOP]
    if len(allowed) > TOP:
        assert math.isclose(sh["rest"], 1.0 - sum(row.weights[i] for i in by_share[:TOP]), abs_tol=1e-12)
        assert fmt.percent(sh["rest"]) in w["share"]["text"]
    else:
        assert sh["rest"] is None
    mix = w["mix"]["claims"]
    assert math.isclose(
        mix["length"], math.sqrt(sum(x * x for x in row.output)), rel_tol=1e-12, abs_tol=1e-300
    )
    for said in w.values():
        _one_sentence(said["text"])


@settings(max_examples=80, deadline=None)
@given(rows(), st.data())
def test_the_neuron_views_sum_and_softmax_claim_the_rows_numbers(row, data):
    key = data.draw(st.integers(0, row.n_sources - 1))
    dot = row.dots[key]
    ranked = sorted(row.allowed_indices, key=lambda i: (-row.weights[i], i))
    rank = ranked.index(key) + 1 if key in ranked else None
    t = neuron_words(row, 0, key, layer=1, head=2, dot=dot, rank=rank)
    assert t["sum"]["claims"]["score"] == dot * row.scale == row.scores[key]
    assert t["softmax"]["claims"]["share"] == row.weights[key]
    assert (t["blocked"] is None) == row.allowed[key]
    for said in (t["sum"], t["softmax"], t["blocked"]):
        if said is not None:
            _one_sentence(said["text"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.floats(-20, 20, allow_nan=False), min_size=2, max_size=30),
    st.sampled_from([0.0, 0.5, 1.0, 1.7]),
    st.integers(0, 40),
    st.floats(0.05, 1.0),
)
def test_what_each_control_removed_is_what_the_cut_removed(logits, temperature, top_k, top_p):
    row = np.array(logits)
    sampling = Sampling(temperature=temperature, top_k=top_k or None, top_p=top_p)
    view = next_token(
        row, sampling, decode=lambda i: " " * (i % 3) + f"t{i}", top=5, actual=1, context="0 ␣a"
    )
    c = cut(row, sampling)
    assert view["removed"][0]["words"]["claims"]["temperature"] == temperature
    if not sampling.greedy:
        gone_k = np.isfinite(row) & ~c.after_top_k
        gone_p = c.after_top_k & ~c.after_top_p
        for removed, gone in zip(view["removed"][1:], (gone_k, gone_p)):
            claims = removed["words"]["claims"]
            assert claims["count"] == int(gone.sum())
            assert math.isclose(claims["mass"], float(c.p_tempered[gone].sum()), abs_tol=1e-12)
    words = view["words"]
    assert words["kept"]["claims"]["kept"] == int((c.p > 0).sum())
    assert words["actual"]["claims"]["rank"] == view["actual"]["rank"]
    for e in view["entries"]:  # every token visible, its exact text kept
        assert e["token_exact"] == e["token"] and " " not in e["token_label"]
    for said in [*(r["words"] for r in view["removed"]), words["kept"], words["actual"], words["context"]]:
        _one_sentence(said["text"])


def test_the_status_and_count_words_say_their_numbers():
    done = generation_status(status="done", title="SmolLM2", place=None, tokens=1, max_new_tokens=8,
                             finish="end_of_turn", chat=False, said_text="", message="")  # fmt: skip
    assert done["status_line"]["text"] == "Stopped at the end of its turn after 1 token."
    assert "Answer as the assistant (chat template)" in done["hint"] and done["mode"] == "Continue the text"
    chat = generation_status(status="done", title="SmolLM2", place=None, tokens=8, max_new_tokens=8,
                             finish="length", chat=True, said_text="Paris", message="")  # fmt: skip
    assert chat["hint"] == "" and chat["status_line"]["text"] == "Stopped after 8 tokens (the limit)."
    over = count_words(count=302, cap=256, title="all-MiniLM-L6-v2")
    assert over["claims"] == {"count": 302, "cap": 256, "fits": False} and over["text"].endswith("by 46.")
    _one_sentence(over["text"])
