"""Ablation's words: the heads field read, and every sentence's claims against the numbers it is about."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.errors import FieldError
from attnlab.lab import numbers as fmt
from attnlab.lab.circuits.ablation import (
    BIGGEST,
    MAX_HEADS,
    check_heads,
    layer_view,
    next_token_view,
    parse_heads,
    prob,
)
from attnlab.lab.realmodel.tokens import row_label

SETTINGS = settings(max_examples=150, deadline=None)


def test_the_heads_field_is_read_in_order_each_head_once():
    assert parse_heads("L18H6, L17H4") == [(18, 6), (17, 4)]
    assert parse_heads("l18h6;L17 H4  L18H6") == [(18, 6), (17, 4)]
    assert parse_heads(" L0H0 ") == [(0, 0)]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "names no head: give at least one, such as L18 H6"),
        (" , ", "names no head: give at least one, such as L18 H6"),
        ("18.6", "has '18.6', which is not a head: write each as L<layer> H<head>, such as L18 H6"),
        ("L18H6, head 4",
         "has 'head 4', which is not a head: write each as L<layer> H<head>, such as L18 H6"),
        (", ".join(f"L{i}H0" for i in range(MAX_HEADS + 1)), "names 65 heads; at most 64 at a time"),
    ],
)
def test_a_heads_field_the_lab_cannot_read_is_refused_at_heads(text, problem):
    with pytest.raises(FieldError) as caught:
        parse_heads(text)
    assert caught.value.loc == ("heads",) and caught.value.problem == problem


def test_a_head_the_model_does_not_have_is_refused_by_its_name():
    with pytest.raises(FieldError) as caught:
        check_heads([(3, 1), (30, 2)], model="smollm2", n_layer=30, n_head=9)
    assert caught.value.problem == (
        "has L30 H2, which smollm2 does not have: its layers are 0..29 and its heads 0..8"
    )


@st.composite
def changes(draw):
    n = draw(st.integers(1, 8))
    p = st.floats(0.0, 1.0, allow_nan=False)
    loss = st.floats(0.0, 20.0, allow_nan=False)
    pb = np.array(draw(st.lists(p, min_size=n - 1, max_size=n - 1)))
    same = draw(st.booleans())
    pa = pb.copy() if same else np.array(draw(st.lists(p, min_size=n - 1, max_size=n - 1)))
    lb = np.array(draw(st.lists(loss, min_size=n - 1, max_size=n - 1)))
    la = lb.copy() if same else np.array(draw(st.lists(loss, min_size=n - 1, max_size=n - 1)))
    top = np.tile(np.arange(5), (n, 1))
    tp = np.tile(np.linspace(0.5, 0.1, 5), (n, 1))
    change = {"next_ids": np.arange(1, n), "p_next_before": pb, "p_next_after": pa, "loss_before": lb,
              "loss_after": la, "top_ids_before": top, "top_p_before": tp, "top_ids_after": top,
              "top_p_after": tp, "kl": np.zeros(n)}  # fmt: skip
    return change, [f"w{i}" for i in range(n)]


@SETTINGS
@given(changes(), st.sampled_from(["zero", "mean"]))
def test_every_sentence_of_a_decoders_ablation_claims_its_numbers(drawn, how):
    change, tokens = drawn
    texts = {i: f" t{i}" for i in range(5)}
    v = next_token_view(change, heads=[(3, 1), (2, 0)], how=how, tokens=tokens, texts=texts, job="j")
    labels = [row_label(i, t) for i, t in enumerate(tokens)]
    assert v["lede"]["claims"] == {"heads": [[3, 1], [2, 0]], "how": how, "first": 2}
    assert v["lede"]["text"].startswith(f"{how.capitalize()} ablation of L3 H1, L2 H0: ")
    lb, la = change["loss_before"], change["loss_after"]
    m = v["mean_loss"]["claims"]
    if len(tokens) == 1:
        assert m == {"count": 0, "before": None, "after": None}
    else:
        assert m["count"] == len(lb)
        assert m["before"] == float(np.mean(lb)) and m["after"] == float(np.mean(la))
        assert f"{fmt.rounded(m['before'])} before, {fmt.rounded(m['after'])} after" in v["mean_loss"]["text"]
        # the change said is the difference of the two losses shown beside it
        assert m["change_shown"] == fmt.difference(fmt.rounded(m["after"]), fmt.rounded(m["before"]))
        change_text = v["mean_loss"]["text"].rsplit("(", 1)[1].removesuffix(" nats).")
        assert change_text.replace("−", "-").removeprefix("+") == m["change_shown"]
    delta = np.abs(la - lb)
    named = [b["claims"]["position"] for b in v["biggest"]]
    if not np.any(delta > 0):
        assert named == [None]
    else:
        changed = [i for i in range(len(delta)) if delta[i] > 0]
        assert named == sorted(changed, key=lambda i: (-delta[i], i))[:BIGGEST]
    for b in v["biggest"]:
        c = b["claims"]
        if c["position"] is None:
            continue
        i = c["position"]
        assert (c["p_before"], c["p_after"]) == (change["p_next_before"][i], change["p_next_after"][i])
        b_, a_ = c["p_before"], c["p_after"]
        assert c["direction"] == ("falls" if a_ < b_ else "rises" if a_ > b_ else "stays")
        assert c["direction"] in b["text"] and f"After {labels[i]}, " in b["text"]
        if c["direction"] != "stays":  # "falls from X to Y": X and Y read differently, neither 0% unless 0
            x, y = fmt.percent_pair(b_, a_)
            assert x != y and f"{c['direction']} from {x} to {y}" in b["text"]
            assert (x == "0%") == (b_ == 0.0) and (y == "0%") == (a_ == 0.0)
        assert f"{labels[i + 1]} " in b["text"]
    for i, p in enumerate(v["positions"][:-1]):
        assert p["p_before"] == change["p_next_before"][i] and p["next"]["label"] == labels[i + 1]
        assert p["p_before_display"] == prob(p["p_before"], p["p_after"])
        for shown, value in ((p["p_before_display"], p["p_before"]), (p["p_after_display"], p["p_after"])):
            assert (shown == "0%") == (value == 0.0)  # a probability is never shown as 0% unless it is 0
        ablated = {"kind": "ablation", "heads": "3.1,2.0", "how": how}
        assert p["how"]["p_after"] == {**ablated, "quantity": "p_next_after", "position": i}
        assert p["top_before"][2]["how"] == {**ablated, "quantity": "top_p_before", "position": i, "rank": 2}
    assert "p_before" not in v["positions"][-1]


@given(st.floats(0, 1, allow_nan=False), st.floats(0, 1, allow_nan=False))
def test_two_probabilities_never_print_alike_unless_they_are_alike(a, b):
    if a != b and (fmt.rounded(100 * a, 6) != fmt.rounded(100 * b, 6)):
        assert prob(a, b) != prob(b, a)
    assert prob(a) == fmt.percent(a)


def test_the_issues_small_probabilities_keep_two_significant_digits():
    # a loss of 9.978 nats is p = 0.0046% (once "0%" beside cells of "0.0055%"); 5.293 nats is 0.50%
    # (once "1%"); "falls from 0.1% to 0%" was said of a p that is not 0
    pb = np.array([math.exp(-9.978), math.exp(-5.293), 0.001])
    pa = np.array([math.exp(-9.8), math.exp(-5.293), 0.00004])
    lb, la = -np.log(pb), -np.log(pa) + np.array([0.0, 0.0, 0.0])
    top, tp = np.tile(np.arange(5), (4, 1)), np.tile(np.linspace(0.5, 0.1, 5), (4, 1))
    change = {"next_ids": np.arange(1, 4), "p_next_before": pb, "p_next_after": pa, "loss_before": lb,
              "loss_after": la, "top_ids_before": top, "top_p_before": tp, "top_ids_after": top,
              "top_p_after": tp, "kl": np.zeros(4)}  # fmt: skip
    v = next_token_view(change, heads=[(3, 1)], how="zero", tokens=["a", "b", "c", "d"],
                        texts={i: f" t{i}" for i in range(5)})  # fmt: skip
    cells = [(p["p_before_display"], p["loss_before_display"]) for p in v["positions"][:-1]]
    assert cells == [("0.0046%", "9.978"), ("0.50%", "5.293"), ("0.10%", "6.908")]
    assert v["positions"][0]["p_after_display"] == "0.0055%"
    assert v["positions"][2]["p_after_display"] == "0.0040%"
    falls = next(b["text"] for b in v["biggest"] if b["claims"]["position"] == 2)
    assert "falls from 0.10% to 0.0040%" in falls


@SETTINGS
@given(st.integers(1, 8), st.data())
def test_the_encoders_ablation_names_the_tokens_that_moved_most(n, data):
    floats = st.floats(0.0, 10.0, allow_nan=False)
    lengths = st.floats(0.01, 10.0) | st.just(0.0)  # a residual vector's length (0: a zero vector)
    norm = np.array(data.draw(st.lists(lengths, min_size=n, max_size=n)))
    moved = np.array(data.draw(st.lists(floats, min_size=n, max_size=n)))
    cos = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n)))
    pooled = data.draw(st.floats(-1, 1))
    change = {"layer": 5, "norm_before": norm, "change": moved, "cosine": cos, "pooled_cosine": pooled}
    v = layer_view(change, heads=[(3, 1)], how="zero", tokens=[f"w{i}" for i in range(n)])
    relative = np.divide(moved, norm, out=np.zeros(n), where=norm > 0)
    assert v["pooled"]["claims"] == {"cosine": pooled}
    assert fmt.rounded(pooled, 6) in v["pooled"]["text"]
    named = [b["claims"]["position"] for b in v["biggest"]]
    if not np.any(moved > 0):
        assert named == [None]
    else:
        changed = [i for i in range(n) if moved[i] > 0]
        assert named == sorted(changed, key=lambda i: (-relative[i], i))[:BIGGEST]
        for b in v["biggest"]:
            i = b["claims"]["position"]
            assert b["claims"]["relative"] == relative[i] and fmt.percent(relative[i]) in b["text"]
            assert math.isclose(b["claims"]["cosine"], cos[i])
    assert "note" not in v  # the head switched off (layer 3) is below the layer shown (5)
    above = layer_view({**change, "layer": 1}, heads=[(3, 1)], how="zero", tokens=[f"w{i}" for i in range(n)])
    assert above["note"]["claims"] == {"first": 3, "layer": 1}
