"""One head's view and the model view: thumbnails, share strings, and every label built from the scores."""

from __future__ import annotations

import base64
import json

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.kinds import SHORT, THRESHOLDS, definitions, head_profile, layer_profiles
from attnlab.lab.realmodel.modelview import (
    bins,
    head_numbers,
    head_view,
    model_view,
    model_view_body,
    named_caption,
    precise_row,
    score_line,
    share_texts,
)
from attnlab.models.toy import ToyModel
from attnlab.models.traces import ModelTrace, overview, thumbnails


def test_thumbnails_keep_the_largest_share_of_each_block():
    w = np.zeros((1, 1, 5, 5))
    w[0, 0, np.arange(5), np.arange(5)] = 1.0
    allowed = np.tril(np.ones((5, 5), dtype=bool))
    assert bins(5, 2) == [[0, 2], [2, 5]]
    t = thumbnails(w, allowed, 2)[0, 0]
    assert t[0, 0] == 1.0 and t[1, 1] == 1.0 and t[1, 0] == 0.0 and np.isnan(t[0, 1])


def test_the_model_view_has_every_head_in_layer_major_order():
    trace = ToyModel("smollm2").trace(" ".join(f"w{i}" for i in range(40)), details=True)
    view = model_view(trace)
    assert (view["n_layer"], view["n_head"], view["size"]) == (2, 2, 32)
    assert [(h["layer"], h["head"]) for h in view["heads"]] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert view["bins"][0] == [0, 1] and view["bins"][-1] == [38, 40]
    thumb = view["heads"][3]["thumb"]
    assert len(thumb) == 32 and thumb[0][1] is None  # the causal upper corner is blocked
    assert thumb[31][0] == round(float(trace.weights[1, 1, 38:40, 0:1].max()), 4)


def test_share_texts_equal_the_scalar_formatter_at_every_half_and_blocked_cells_are_empty():
    rng = np.random.default_rng(3)
    halves = np.arange(100) / 100 + 0.005  # x.xx5: where rint(100 w) and round(w, 2) may part
    w = np.concatenate([halves, halves.astype(np.float32), rng.random(300), [0.0, 1.0, 1e-9, 0.999999]])
    w = w[: 22 * 22].reshape(22, 22)  # (504 values)
    allowed = rng.random((22, 22)) > 0.2
    cells = zip(w.ravel().tolist(), allowed.ravel().tolist())
    expected = [fmt.rounded(x, 2) if ok else "" for x, ok in cells]
    assert sum(share_texts(w, allowed), []) == expected


def test_a_layers_heads_print_their_scores_and_shares_as_the_scalar_formatter_does():
    trace = ToyModel("smollm2").trace("one two three four five six", details=True)
    for h, p in enumerate(layer_profiles(trace, 1)):
        w = trace.head_weights(1, h).astype(float)
        shown = head_numbers(p, w, trace.allowed)
        assert (shown["previous"], shown["first"]) == (fmt.percent(p["previous"]), fmt.percent(p["first"]))
        assert shown["breadth"] == fmt.rounded(p["breadth"], 2)
        assert shown["shares"] == [[fmt.rounded(x, 2) if ok else "" for x, ok in zip(row, oks)]
                                   for row, oks in zip(w.tolist(), trace.allowed.tolist())]  # fmt: skip
        assert shown["shares"][0][1] == ""  # causal: the first token may not see the second


def test_a_heads_view_packed_or_not_has_the_traces_numbers_and_the_model_view_is_kept_as_json():
    trace = ToyModel("smollm2").trace("one two three four five six", details=True)
    plain, packed = head_view(trace, 1, 0), head_view(trace, 1, 0, packed=True)
    n = plain["n_tokens"]
    cells = np.frombuffer(base64.b64decode(packed.pop("weights_f32")), dtype="<f4").reshape(n, n)
    w = trace.weights[1, 0]
    assert plain.pop("weights") == [[float(w[i, j]) if j <= i else None for j in range(n)] for i in range(n)]
    ok = trace.allowed
    assert np.array_equal(np.isnan(cells), ~ok) and (cells[ok] == w[ok]).all()
    assert packed == plain and plain["shares"][0][1] == "" and plain["shares"][0][0] == "1"
    kept = model_view_body("job-1", trace, overview(trace))  # from the numbers the worker sent with the trace
    assert json.loads(kept) == json.loads(json.dumps({"job": "job-1", **model_view(trace)}))
    assert json.loads(model_view_body("job-1", trace)) == json.loads(kept)  # or from the trace, here


def _repeated_trace(causal: bool = True) -> ModelTrace:
    """One layer, two heads on ``a b c d a b c d``: head 0 copies (induction), head 1 rests on token 0."""
    ids = [0, 1, 2, 3, 0, 1, 2, 3]
    n = len(ids)
    allowed = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    sink = np.zeros((n, n))
    sink[:, 0] = 1.0
    copy = sink.copy()
    for i in range(4, n):  # query i: the token after the earlier occurrence of ids[i] is i - 3
        copy[i] = 0.0
        copy[i, i - 3] = 1.0
    return ModelTrace(
        model="toy",
        tokens=["a", "b", "c", "d"] * 2,
        ids=ids,
        weights=np.stack([copy, sink])[None],  # (1, 2, T, T)
        allowed=allowed,
        scale=0.5,
        kv_groups=[[0], [1]],
    )


def test_the_model_view_says_each_heads_kind_and_induction_score_from_the_lab():
    view = model_view(_repeated_trace())
    copy, sink = view["heads"]
    assert (copy["kind"], copy["induction"], copy["induction_display"]) == ("induction", 1.0, "100%")
    assert copy["label"] == "L0 H0 · induction" and copy["thumb_text"] == "H0 · induction"
    assert copy["title"] == (
        "Layer 0, head 0: induction head; induction 100%, duplicate token 0%, previous token 14%, "
        "first token 43%, breadth 0"
    )
    assert copy["button_label"] == "Head 0: " + copy["title"].split(": ", 1)[1]
    assert sink["kind"] == "first-token" and sink["induction"] == 0.0
    assert "sentence" not in copy  # the thumbnail carries labels; the head's own view has the sentence
    # the legend: every kind's definition, with the threshold the rule uses
    assert [d["kind"] for d in view["kinds"]] == [d["kind"] for d in definitions()]
    for d in view["kinds"]:
        assert d["name"] == SHORT[d["kind"]]
        assert d["claims"]["threshold"] == THRESHOLDS.get(d["kind"], THRESHOLDS["broad"])
    assert view["rule"]["claims"]["thresholds"] == THRESHOLDS


def test_a_text_without_repeats_says_it_has_no_induction_score():
    trace = ToyModel("smollm2").trace("one two three four five six", details=True)
    view = model_view(trace)
    assert all(h["induction"] is None and h["induction_display"] == "—" for h in view["heads"])
    assert "no induction score (no token repeats)" in view["heads"][0]["title"]
    head = head_view(trace, 0, 0)
    assert head["about"][1]["text"].endswith(
        "no token repeats in this text, so there is no induction or duplicate-token score."
    )


def test_one_heads_view_says_its_kind_where_its_attention_goes_and_its_breadth():
    trace = _repeated_trace()
    head = head_view(trace, 0, 0)
    p = head_profile(trace.weights[0, 0], trace.allowed, trace.ids)
    assert head["kind_sentence"] == p["sentence"] and head["kind_words"] == p["sentence"]["text"]
    assert head["kind_sentence"]["claims"] == {"kind": "induction", "score": 1.0, "threshold": 0.4}
    assert head["caption"] == "Layer 0, head 0 of toy: an induction head."
    assert [s["text"] for s in head["about"]] == [
        "An induction head: tokens that repeat an earlier token put 100% of their attention, on average, "
        "on the tokens right after every earlier occurrence of it (named at 40% or more).",
        "On average, 14% of each token's attention goes to the previous token and 43% to the first token; "
        "tokens that repeat an earlier token put 100% on the tokens after every earlier occurrence of it "
        "(induction) "
        "and 0% on the earlier occurrences themselves (duplicate token).",
        "Breadth 0 (0 = each token attends to one key, 1 = its attention is spread evenly over every key "
        "it may see).",
    ]
    assert head["about_text"] == " ".join(s["text"] for s in head["about"])
    claims = head["about"][1]["claims"]
    assert claims == {"previous": 1 / 7, "first": 3 / 7, "induction": 1.0, "duplicate": 0.0}
    assert head["induction_display"] == fmt.percent(head["induction"])


def test_score_line_and_the_widgets_words_come_from_the_lab():
    p = head_profile(np.eye(3), np.ones((3, 3), dtype=bool), [0, 1, 0])
    assert score_line(p) == (
        "self head; induction 0%, duplicate token 0%, previous token 0%, first token 0%, breadth 0"
    )
    assert named_caption("first", "head 2") == {
        "caption": "Attention of first, head 2: rows are queries, columns are keys",
        "lines_label": "Attention of first, head 2, as lines from each query to its keys",
    }
    row = precise_row(_repeated_trace(), 0, 0, 5)
    assert row["title"] == "Query 5 (b): its share of each key, at full precision"
    shares = [s["share"] for s in row["sources"]]
    assert shares == ["0%", "0%", "100%", "0%", "0%", "0%", "blocked", "blocked"]
    assert row["sources"][2]["precise"] == "1" and row["sources"][6]["precise"] == ""
