"""The real-model words' claims, checked against the numbers they are about.

Synthetic rows, logits, blocks and heads (any size, scale and mask), and real rows of both
models: random layers, heads, queries and keys of a few texts each model traced once.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sharekit import check_set, total, value

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.bridge import LABELLED, plane_labels
from attnlab.lab.realmodel.journey import (
    NORM_NAMES,
    NORMS,
    SERIES,
    STAT_NAMES,
    journey_display,
    token_journey,
)
from attnlab.lab.realmodel.kinds import SHORT, head_profile, kind_phrase
from attnlab.lab.realmodel.modelview import head_view, model_view
from attnlab.lab.realmodel.neuron import (
    TOP,
    bar_titles,
    neuron_words,
    plane,
    products_and_sums,
    ranked,
    row_words,
)
from attnlab.lab.realmodel.nexttoken import next_token
from attnlab.lab.realmodel.query import query_row
from attnlab.lab.realmodel.row import row_view
from attnlab.lab.realmodel.status import count_words, generation_status
from attnlab.models.sampling import Sampling, cut
from attnlab.models.traces import ModelTrace

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


def check_row_words(row, index: int) -> None:
    """Summary, Match, Share and Mix of ``row`` claim its numbers, one sentence each."""
    w = row_words(row, index)
    allowed = list(row.allowed_indices)
    by_share = sorted(allowed, key=lambda i: (-row.weights[i], i))
    by_score = sorted(allowed, key=lambda i: (-row.scores[i], i))
    s = w["summary"]["claims"]
    assert s["top"] == row.labels[by_share[0]] and s["share"] == row.weights[by_share[0]] == max(row.weights)
    assert s["score"] == max(row.scores[i] for i in allowed) and s["blocked"] == len(row.blocked)
    shown = fmt.percents(row.weights)  # the row's shares as one set: every view of the row says these
    check_set([shown[i] for i in allowed], [row.weights[i] for i in allowed])
    assert f"takes {shown[by_share[0]]} of its attention" in w["summary"]["text"]
    assert s["query"] == row.labels[index]
    m = w["match"]["claims"]
    assert m["highest"] == [[row.labels[i], row.scores[i]] for i in by_score[:TOP]]
    assert [x[1] for x in m["highest"]] == sorted((row.scores[i] for i in allowed), reverse=True)[:TOP]
    assert m["keys"] == len(allowed) and m["more"] == max(len(allowed) - TOP, 0) and m["scale"] == row.scale
    sh = w["share"]["claims"]
    assert [x[1] for x in sh["largest"]] == sorted((row.weights[i] for i in allowed), reverse=True)[:TOP]
    assert sh["shown"] == [shown[i] for i in by_share[:TOP]]
    for i in by_share[:TOP]:
        assert f"{row.labels[i]} {shown[i]}" in w["share"]["text"]
    if len(allowed) > TOP:
        assert math.isclose(sh["rest"], 1.0 - sum(row.weights[i] for i in by_share[:TOP]), abs_tol=1e-12)
        # "the rest hold N% together": N is 100 less the five shown, so the sentence adds up to 100
        assert f"the rest hold {sh['rest_shown']} together" in w["share"]["text"]
        assert total([*sh["shown"], sh["rest_shown"]]) == 100 or sh["rest_shown"].startswith("<")
        assert sh["rest_shown"] != "0%"
        assert abs(float(value(sh["rest_shown"])) - 100 * sh["rest"]) < len(allowed)  # a point per share
    else:
        assert sh["rest"] is None and sh["rest_shown"] is None
    mix = w["mix"]["claims"]
    assert math.isclose(
        mix["length"], math.sqrt(sum(x * x for x in row.output)), rel_tol=1e-12, abs_tol=1e-300
    )
    for said in w.values():
        _one_sentence(said["text"])


@settings(max_examples=150, deadline=None)
@given(rows(), st.data())
def test_a_rows_words_claim_what_its_numbers_are(row, data):
    check_row_words(row, data.draw(st.integers(0, row.n_sources - 1)))


def check_neuron_words(row, key: int) -> None:
    """The neuron view's sum and softmax claim the row's numbers; its bars' titles say them exactly."""
    dot = row.dots[key]
    ranked = sorted(row.allowed_indices, key=lambda i: (-row.weights[i], i))
    rank = ranked.index(key) + 1 if key in ranked else None
    t = neuron_words(row, 0, key, layer=1, head=2, dot=dot, rank=rank)
    assert t["sum"]["claims"]["score"] == dot * row.scale == row.scores[key]
    assert t["softmax"]["claims"]["share"] == row.weights[key]
    assert t["softmax"]["claims"]["rank"] == rank and (t["blocked"] is None) == row.allowed[key]
    products, running = products_and_sums(row.q, row.keys[key])
    titles = bar_titles(row.q, row.keys[key], products, running)
    for name, values in (("q", row.q), ("k", row.keys[key]), ("products", products), ("running", running)):
        assert [float(t.rsplit(" = ", 1)[1]) for t in titles[name]] == list(values), name
    assert running[-1] == dot or math.isclose(running[-1], dot, rel_tol=1e-12, abs_tol=1e-300)
    for said in (t["sum"], t["softmax"], t["blocked"]):
        if said is not None:
            _one_sentence(said["text"])


@settings(max_examples=80, deadline=None)
@given(rows(), st.data())
def test_the_neuron_views_sum_and_softmax_claim_the_rows_numbers(row, data):
    check_neuron_words(row, data.draw(st.integers(0, row.n_sources - 1)))


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


# -- the row panel's top sentence, the plane's caption, notes and titles ---------------------


def tokens_of(row) -> list[str]:
    """The token texts behind a synthetic row's labels ("3 ␣the" -> " the")."""
    shown = {"␣": " ", "⏎": "\n", "⇥": "\t"}
    return ["".join(shown.get(c, c) for c in label.split(" ", 1)[1]) for label in row.labels]


def check_row_view(row, index: int, tokens: list[str]) -> None:
    """The top sentence names the five largest shares (its parts join to it, each token exact)."""
    view = row_view(row, index, tokens)
    top = view["top_words"]
    order = ranked(row)
    named = [[row.labels[i], row.weights[i]] for i in order[:TOP]]
    shown = fmt.percents(row.weights)  # the row's set, as its table shows it
    assert top["claims"] == {"top": named, "shown": [shown[i] for i in order[:TOP]],
                             "more": len(order) - len(order[:TOP])}  # fmt: skip
    assert "".join(p.get("text", p.get("token")) for p in top["parts"]) == top["text"]
    marked = [(p["token"], p["exact"]) for p in top["parts"] if "token" in p]
    assert marked == [(row.labels[i], tokens[i]) for i in order[:TOP]]
    for i in order[:TOP]:
        assert f"{row.labels[i]} {shown[i]}" in top["text"]
    _one_sentence(top["text"])
    for i, src in enumerate(view["sources"]):
        assert src["exact"] == tokens[i]
        if row.allowed[i]:
            assert float(src["share_precise"]) == row.weights[i]
            assert src["title"] == f"{row.labels[i]}: {src['share_display']}"
            assert src["share_display"] == shown[i]
    allowed = list(row.allowed_indices)
    texts = [s["share_display"] for s in view["sources"] if s["allowed"]]
    check_set(texts, [row.weights[i] for i in allowed])
    assert view["more"] == f"All {fmt.plural(row.n_sources, 'key')}: scaled scores and shares"
    assert view["table"]["columns"][1] == f"scaled score (× {fmt.rounded(row.scale)})"


def check_plane(row, tokens: list[str]) -> None:
    """The plane's caption, what it leaves out, its notes and every point's title say its numbers."""
    p = plane(row)
    p.update(plane_labels(row, p, tokens))
    q_len = p["q"][0]
    allowed = list(row.allowed_indices)
    order = ranked(row)
    # the top key: the largest share whose key is not parallel to q (None: every key is)
    assert p["caption"]["claims"]["top"] == (None if p["top_key"] is None else row.labels[p["top_key"]])
    if p["top_key"] is not None:
        before = order[: order.index(p["top_key"])]  # skipped: parallel to q, nothing square to it
        for k in (k for k in p["keys"] if k["index"] in before):
            assert abs(k["y"]) <= 1e-8 * max(math.hypot(*row.keys[k["index"]]), 1e-300)
    left = p["leaves_out"]["claims"]
    assert left["directions_left"] == max(row.d_k - 2, 0) and left["d_v"] == row.d_v
    mean_kept = sum(k["kept"] for k in p["keys"]) / len(p["keys"])
    assert math.isclose(left["mean_kept"], mean_kept, rel_tol=1e-12)
    assert p["labels_note"]["claims"] == {"drawn": len(allowed), "labelled": sorted(order[:LABELLED])}
    assert [k["index"] for k in p["keys"] if k["labelled"]] == sorted(order[:LABELLED])
    big = max([abs(s) for s in row.scores] + [1e-300])
    for k in p["keys"]:
        i = k["index"]
        # the caption's claim: a key's score is exactly |q| x across x scale (q lies in the plane)
        assert math.isclose(q_len * k["x"] * row.scale, row.scores[i], rel_tol=1e-9, abs_tol=1e-9 * big)
        assert 0.0 <= k["kept"] <= 1.0 and k["exact"] == tokens[i]
        x, y, kept = fmt.rounded(k["x"]), fmt.rounded(k["y"]), fmt.percent(k["kept"])
        assert k["title"] == (
            f"{row.labels[i]}: along q {x}, up {y}; score {fmt.rounded(row.scores[i])} = |q| "
            f"{fmt.rounded(q_len)} × {x} × scale {fmt.rounded(row.scale)}; share "
            f"{fmt.percents(row.weights)[i]}; the plane shows {kept} of its length"
        )
    for said in (p["caption"], p["leaves_out"]):
        assert said["text"].endswith(".")


@settings(max_examples=120, deadline=None)
@given(rows(), st.data())
def test_the_row_panels_top_sentence_and_the_planes_words_claim_the_rows_numbers(row, data):
    tokens = tokens_of(row)
    check_row_view(row, data.draw(st.integers(0, row.n_sources - 1)), tokens)
    check_plane(row, tokens)


# -- the journey's readouts ----------------------------------------------------------------

finite = st.floats(-1e4, 1e4, allow_nan=False)


@st.composite
def journeys(draw):
    n_layer, n_tok, top = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    arrays = {k: np.array(draw(st.lists(finite, min_size=n_layer * n_tok, max_size=n_layer * n_tok)))
              .reshape(n_layer, n_tok) for k in NORMS}  # fmt: skip
    def grid(values, last: int) -> np.ndarray:
        size = n_layer * n_tok * last
        return np.array(draw(st.lists(values, min_size=size, max_size=size))).reshape(n_layer, n_tok, last)

    for n in NORM_NAMES:
        arrays[n] = grid(finite, 3)
    arrays["mlp_units"] = grid(st.integers(0, 5000), top)
    arrays["mlp_values"] = grid(finite, top)
    return arrays, draw(st.integers(0, n_tok - 1))


def check_journey(blocks: list[dict], norm: str, placement: str) -> None:
    """Every bar's readout and every table cell say their block's numbers (exactly where they say so)."""
    j = journey_display(blocks, label="3 ␣cat", norm=norm, placement=placement)
    assert j["lede"]["claims"] == {"norm": norm, "placement": placement}
    assert j["title"] == f"Token 3 ␣cat through {fmt.plural(len(blocks), 'block')}"  # "1 block" agrees
    for b, shown in zip(blocks, j["blocks"]):
        layer = b["layer"]
        assert shown["layer_display"] == f"{layer:,}"
        for k in NORMS:
            assert shown["display"][k] == fmt.rounded(b[k])
            assert shown["says"][k] == f"block {layer}: {SERIES[k]} {fmt.rounded(b[k])}"
        for n in NORM_NAMES:
            for s in STAT_NAMES:
                stat = shown[n]
                assert float(stat["precise"][s]) == b[n][s] and stat["display"][s] == fmt.rounded(b[n][s])
                said = re.fullmatch(rf"block {layer}: .+ = (\S+) \(exactly (\S+)\)", stat["says"][s])
                assert said and said[1] == fmt.rounded(b[n][s]) and float(said[2]) == b[n][s]
            assert shown["says"][n].endswith(f"rms of its input {fmt.rounded(b[n]['rms'])}")
        for unit, u in zip(b["mlp_top"], shown["mlp_top"]):
            assert float(u["value_precise"]) == unit["value"] and u["unit_display"] == f"{unit['unit']:,}"
            said = re.fullmatch(rf"block {layer}: MLP unit {unit['unit']} = (\S+) \(exactly (\S+)\)",
                                u["says"])  # fmt: skip
            assert said and said[1] == fmt.rounded(unit["value"]) and float(said[2]) == unit["value"]


@settings(max_examples=80, deadline=None)
@given(journeys(), st.sampled_from([("rms", "pre"), ("layer", "post")]))
def test_the_journeys_readouts_say_their_blocks_numbers(drawn, kind):
    arrays, index = drawn
    check_journey(token_journey(arrays, index), *kind)


# -- the model view's labels and titles, a head's caption -----------------------------------


@st.composite
def traces(draw):
    n_layer, n_head, n = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 7))
    causal = draw(st.booleans())
    allowed = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    size = n_layer * n_head * n * n
    raw = np.array(draw(st.lists(st.floats(-6, 6), min_size=size, max_size=size)))
    raw = raw.reshape(n_layer, n_head, n, n)
    w = np.where(allowed, np.exp(raw), 0.0)
    w = (w / w.sum(axis=-1, keepdims=True)).astype(np.float32)
    ids = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return ModelTrace(model="toy", tokens=[f"t{i}" for i in ids], ids=ids, allowed=allowed, weights=w,
                      scale=0.5, kv_groups=[[h] for h in range(n_head)])  # fmt: skip


def _says_scores(text: str, p: dict) -> None:
    """A head's label names its kind and every score as the lab prints it."""
    assert f"{SHORT[p['kind']]} head; " in text
    for name, key in (("previous token", "previous"), ("first token", "first")):
        assert f"{name} {fmt.percent(p[key])}" in text
    assert f"breadth {fmt.rounded(p['breadth'], 2)}" in text
    if p["induction"] is None:
        assert "no induction score (no token repeats)" in text
    else:
        pair = f"induction {fmt.percent(p['induction'])}, duplicate token {fmt.percent(p['duplicate'])}"
        assert pair in text


@settings(max_examples=60, deadline=None)
@given(traces())
def test_the_model_views_labels_and_titles_and_a_heads_caption_say_its_kind_and_scores(trace):
    view = model_view(trace)
    assert [x["label"] for x in view["layers"]] == [f"Layer {i}" for i in range(trace.n_layer)]
    for hd in view["heads"]:
        layer, h = hd["layer"], hd["head"]
        p = head_profile(trace.weights[layer, h], trace.allowed, trace.ids)  # recomputed from the weights
        assert hd["kind"] == p["kind"] and hd["kind_short"] == SHORT[p["kind"]]
        assert hd["label"] == f"L{layer} H{h} · {SHORT[p['kind']]}"
        assert hd["thumb_text"] == f"H{h} · {SHORT[p['kind']]}"
        assert hd["title"].startswith(f"Layer {layer}, head {h}: ")
        assert hd["button_label"].startswith(f"Head {h}: ")
        _says_scores(hd["title"], p)
        _says_scores(hd["button_label"], p)
        head = head_view(trace, layer, h)
        assert head["caption"] == f"Layer {layer}, head {h} of toy: {kind_phrase(p['kind'])}."
        assert head["kind_sentence"]["claims"]["kind"] == p["kind"]
        w, n = trace.weights[layer, h].astype(float), len(trace.tokens)
        exact = [[fmt.precise(w[i, j]) if trace.allowed[i, j] else "" for j in range(n)] for i in range(n)]
        assert head["precise"] == exact
    assert ("grey cells are blocked" in view["legend"]["label"]) == trace.causal
    assert ("binned" in view["legend"]["words"]) == (view["size"] < view["n_tokens"])


# -- real rows of both models ---------------------------------------------------------------

REAL_TEXTS = ("The cat sat on the mat.\nThe dog sat\ton the rug.", "Paris is the capital of France. Paris!")


@pytest.fixture(scope="module")
def real_traces():
    """Each installed model's traces of ``REAL_TEXTS`` (with details), made once for this module."""
    from attnlab.models import files
    from attnlab.models.registry import get_model

    traced, missing = {}, []
    for shipped in (files.MINILM, files.SMOLLM2):
        try:
            files.locate(shipped)
        except files.ModelNotInstalled as error:
            missing.append(str(error))
            continue
        traced[shipped.model] = [get_model(shipped.model).trace(t, details=True) for t in REAL_TEXTS]
    if not traced:
        pytest.skip(" ".join(missing))
    return traced


@pytest.mark.models
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_the_words_of_real_rows_claim_their_numbers(real_traces, data):
    model = data.draw(st.sampled_from(sorted(real_traces)))
    trace = data.draw(st.sampled_from(real_traces[model]))
    layer = data.draw(st.integers(0, trace.n_layer - 1))
    head = data.draw(st.integers(0, trace.n_head - 1))
    n = len(trace.tokens)
    query, key = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, n - 1))
    row = query_row(trace, layer, head, query)
    check_row_words(row, query)
    check_neuron_words(row, key)
    check_row_view(row, query, trace.tokens)
    check_plane(row, trace.tokens)
    check_journey(token_journey(trace.journey, query), "rms" if trace.causal else "layer",
                  "pre" if trace.causal else "post")  # fmt: skip
