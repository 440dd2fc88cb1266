"""Direct logit attribution's words: the exact-sum claim against its bound, the largest terms, the norm."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab import numbers as fmt
from attnlab.lab.circuits.attribution import NAMED, TOP, attribution_view, exact_sentence, norm_sentence
from attnlab.lab.circuits.heatmap import signed

SETTINGS = settings(max_examples=150, deadline=None)
term = st.floats(-20, 20, allow_nan=False)


@st.composite
def attributions(draw):
    n_layer, n_head = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    size = n_layer * n_head
    heads = np.array(draw(st.lists(term, min_size=size, max_size=size))).reshape(n_layer, n_head)
    mlps = np.array(draw(st.lists(term, min_size=n_layer, max_size=n_layer)))
    bias = np.zeros(n_layer)
    if draw(st.booleans()):
        bias = np.array(draw(st.lists(term, min_size=n_layer, max_size=n_layer)))
    embedding = draw(term)
    total = embedding + heads.sum() + bias.sum() + mlps.sum()
    logit = total + draw(st.floats(-1e-3, 1e-3))
    bound = draw(st.floats(0, 2e-3))
    scale = draw(st.floats(0.01, 2))
    return SimpleNamespace(position=2, token=7, logit=logit, scale=scale, embedding=embedding, heads=heads,
                           attn_bias=bias, mlps=mlps, total=total, bound=bound)  # fmt: skip


@SETTINGS
@given(attributions())
def test_the_attribution_says_its_terms_and_whether_they_add_up(a):
    tokens = ["The", " cat", " sat"]
    v = attribution_view(a, tokens=tokens, token_text=" mat", path="float32", job="j")
    n_layer, n_head = a.heads.shape
    has_bias = bool(np.any(a.attn_bias != 0))
    e = v["exact"]["claims"]
    assert e["count"] == 1 + n_layer * (n_head + 1 + has_bias)
    assert e["total"] == a.total and e["logit"] == a.logit and e["bound"] == a.bound
    assert e["difference"] == abs(a.total - a.logit)
    assert e["within"] == (abs(a.total - a.logit) <= a.bound)
    check_gap_and_bound(v["exact"], "float32")
    assert fmt.precise(a.total) in v["exact"]["text"] and fmt.precise(a.logit) in v["exact"]["text"]
    terms = [("embedding", a.embedding)]
    columns = [f"H{h}" for h in range(n_head)] + (["W_O bias"] if has_bias else []) + ["MLP"]
    for layer in range(n_layer):
        row = [*a.heads[layer], *([a.attn_bias[layer]] if has_bias else []), a.mlps[layer]]
        terms += [(f"L{layer} {c}", float(x)) for c, x in zip(columns, row)]
    assert len(terms) == e["count"]
    order = sorted(range(len(terms)), key=lambda k: (-abs(terms[k][1]), k))
    assert [(t["name"], t["value"]) for t in v["top"]] == [terms[k] for k in order[:TOP]]
    assert v["top_words"]["claims"]["top"] == [list(terms[k]) for k in order[:NAMED]]
    for name, value in v["top_words"]["claims"]["top"]:
        assert f"{name} {signed(value)}" in v["top_words"]["text"]
    sums = v["sums"]["claims"]
    assert sums["heads"] == float(a.heads.sum()) and sums["mlps"] == float(a.mlps.sum())
    assert v["map"]["values"] == [[float(x) for x in row] for row in np.column_stack(
        [a.heads, *([a.attn_bias] if has_bias else []), a.mlps])]  # fmt: skip
    assert v["norm"]["claims"]["scale"] == a.scale and v["norm"]["claims"]["rms"] == 1.0 / a.scale
    assert v["token"]["label"] == "␣mat" and v["label"] == "2 ␣sat"


def check_gap_and_bound(exact: dict, path: str) -> None:
    """The measured gap is stated beside the bound, each at its own size: the gap in steps of the float
    type's spacing at the logit, the bound as so many times the gap; only a gap over the bound is
    said not to add up."""
    e, text = exact["claims"], exact["text"]
    kind = np.float32 if path == "float32" else np.float64
    assert e["step"] == float(np.spacing(kind(abs(e["logit"]))))
    assert e["steps"] == e["difference"] / e["step"]
    assert e["looser"] == (e["bound"] / e["difference"] if e["difference"] > 0 else None)
    assert ("do not add up" in text) == (not e["within"])
    if e["difference"] > 0:
        assert f"the measured gap is {fmt.scientific(e['difference'])}" in text
    if e["within"] and e["difference"] > 0:
        assert f"{fmt.rounded(e['steps'], 1)} {path} step" in text
    loose = e["within"] and e["looser"] is not None and e["looser"] >= 10
    assert ("times larger, so that bound holds but says little" in text) == loose
    assert fmt.scientific(e["bound"]) in text


def test_the_exact_sum_sentence_states_the_measured_gap_beside_the_bound():
    """SmolLM2's attribution: the terms are 2e-6 from the logit, and the rounding bound is 4.6e-2, about
    23,000 times that gap. The sentence gives the gap as the evidence and the bound as loose."""
    s = exact_sentence(13.686357634438338, 13.686355590820312, 0.046, 301, "float32")
    assert s["text"] == (
        "The 301 terms add up to 13.686357634438338 and the model's logit is 13.686355590820312: the "
        "measured gap is 2e-6, 2.1 float32 steps at this size (neighbouring float32 numbers near 13.7 are "
        "9.5e-7 apart). That gap is the evidence that the terms add up to the logit; the worst case the "
        "forward pass's own rounding allows, 4.6e-2, is about 23,000 times larger, so that bound holds but "
        "says little."
    )
    assert s["claims"]["within"] is True and round(s["claims"]["looser"]) == 22509
    assert s["claims"]["step"] == 2.0**-20  # float32's spacing between 8 and 16
    check_gap_and_bound(s, "float32")
    over = exact_sentence(1.0, 2.0, 0.5, 3, "float64")
    assert over["text"].endswith(
        "That is more than the worst case the forward pass's own rounding allows, 5e-1: the terms do not "
        "add up to the logit."
    )
    check_gap_and_bound(over, "float64")
    equal = exact_sentence(1.0, 1.0, 1e-9, 3, "float64")
    assert "they are equal, to the last bit" in equal["text"] and equal["claims"]["looser"] is None
    check_gap_and_bound(equal, "float64")


def test_the_norm_sentence_says_the_scale_is_frozen():
    s = norm_sentence(0.25, "8 ␣of")
    assert s["claims"] == {"scale": 0.25, "rms": 4.0}
    assert s["text"].startswith("The final RMSNorm divides the residual stream at 8 ␣of by its rms, 4;")
    assert "frozen at its value in the real forward pass (scale 1/rms = 0.25)" in s["text"]
