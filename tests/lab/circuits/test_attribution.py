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
    assert ("within the bound" in v["exact"]["text"]) == e["within"]
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


def test_the_exact_sum_sentence_reads_so():
    s = exact_sentence(13.686357634438338, 13.686355590820312, 0.046, 301, "float32")
    assert s["text"] == (
        "The 301 terms add up to 13.686357634438338 and the model's logit is 13.686355590820312: they differ "
        "by 2e-6, within the bound on the float32 forward pass's own rounding, 4.6e-2."
    )
    assert s["claims"]["within"] is True
    assert exact_sentence(1.0, 2.0, 0.5, 3, "float64")["text"].endswith(
        "more than the bound on the float64 forward pass's own rounding, 5e-1.")


def test_the_norm_sentence_says_the_scale_is_frozen():
    s = norm_sentence(0.25, "8 ␣of")
    assert s["claims"] == {"scale": 0.25, "rms": 4.0}
    assert s["text"].startswith("The final RMSNorm divides the residual stream at 8 ␣of by its rms, 4;")
    assert "frozen at its value in the real forward pass (scale 1/rms = 0.25)" in s["text"]
