"""AttentionView: NumPy and torch weights of every accepted shape, exact values drawn, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.kinds import head_profile
from attnlab.widgets import AttentionView
from attnlab.widgets.arrays import ROW_SUM_TOL

TOKENS = ["The", "cat", "sat", "on", "mats"]


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def with_row(w, at, row):
    w = w.copy()
    w[at] = row
    return w


@pytest.fixture
def weights():
    return softmax(np.random.default_rng(1).normal(size=(2, 3, 5, 5)))  # (layers, H, L, S)


@pytest.mark.parametrize("index", [(0, 0), (0,), ()])
def test_every_numpy_shape_is_drawn_as_layers_heads_queries_keys(weights, index):
    given = weights[index]
    v = AttentionView(given, TOKENS)
    assert v.weights.shape == (1,) * (4 - given.ndim) + given.shape
    assert np.array_equal(v.weights.reshape(given.shape), given)
    assert v._head["weights"] == v.weights[0, 0].tolist()


def test_picking_a_layer_head_and_query_sends_that_heads_numbers(weights):
    v = AttentionView(weights, TOKENS, layer_names=["first", "second"])
    v.layer, v.head, v.focus = 1, 2, 3
    assert v._head["weights"] == weights[1, 2].tolist()
    assert v._head["kind"] == head_profile(weights[1, 2], np.ones((5, 5), bool))["kind"]
    assert "second, head 2" in v._head["caption"]
    row = v._row["sources"]
    assert [s["label"] for s in row] == TOKENS
    assert [float(s["precise"]) for s in row] == weights[1, 2, 3].tolist()  # full precision, round-trips
    assert [s["share"] for s in row] == fmt.percents(weights[1, 2, 3].tolist())  # one set, adding up to 100
    # the model view: every layer's and head's thumbnail and kind
    assert v._model["n_layer"] == 2 and v._model["n_head"] == 3 and len(v._model["heads"]) == 6
    with pytest.raises(ValueError, match="head must be 0 to 2; got 3"):
        v.head = 3
    assert v.head == 2


def test_a_hugging_face_tuple_of_float32_tensors_is_drawn_exactly():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    # as output_attentions=True gives them: (batch=1, H, L, S) per layer
    layers = tuple(torch.softmax(torch.randn(1, 4, 5, 5), dim=-1) for _ in range(3))
    v = AttentionView(layers, TOKENS)
    assert v.weights.shape == (3, 4, 5, 5) and v.weights.dtype == np.float64
    v.layer, v.head = 2, 1
    want = layers[2][0, 1].double().numpy()
    assert v._head["weights"] == want.tolist()  # float32 widened exactly, never rounded
    assert np.array_equal(v.weights, torch.stack(layers)[:, 0].double().numpy())


class FakeActivationCache:
    """What AttentionView reads of TransformerLens's ActivationCache: keys() and [name]."""

    def __init__(self, entries):
        self.entries = entries

    def keys(self):
        return self.entries.keys()

    def __getitem__(self, name):
        return self.entries[name]


def test_a_transformer_lens_cache_gives_its_patterns_in_layer_order(weights):
    # a cache holds much more than patterns, in no particular order; each pattern is (batch=1, H, L, S)
    entries = {"blocks.1.attn.hook_pattern": weights[1][None], "blocks.0.hook_resid_pre": np.zeros((1, 5, 8))}
    entries["blocks.0.attn.hook_pattern"] = weights[0][None]
    assert np.array_equal(AttentionView(FakeActivationCache(entries), TOKENS).weights, weights)
    del entries["blocks.0.attn.hook_pattern"]
    with pytest.raises(ValueError, match=r"no blocks\.0\.attn\.hook_pattern"):
        AttentionView(FakeActivationCache(entries), TOKENS)
    with pytest.raises(ValueError, match="no blocks.<l>.attn.hook_pattern entries"):
        AttentionView({"blocks.0.hook_resid_pre": np.zeros((1, 5, 8))}, TOKENS)


def test_a_stacked_torch_tensor_with_a_batch_axis_is_accepted():
    torch = pytest.importorskip("torch")
    w = torch.softmax(torch.randn(2, 1, 3, 5, 5, dtype=torch.float64), dim=-1)  # (layers, 1, H, L, S)
    assert np.array_equal(AttentionView(w, TOKENS).weights, w[:, 0].numpy())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda w: w[..., :4], "5 queries and 4 keys"),
        (lambda w: w[0, 0, 0], r"shape \(5,\); expected"),
        (lambda w: np.stack([w, w, w], axis=1), r"batch of 3 \(shape \(2, 3, 3, 5, 5\)\)"),
        (lambda w: np.where(np.arange(5) == 2, np.nan, w), "layer 0, head 0, query 0, key 2 is NaN"),
        (lambda w: np.where(np.arange(5) == 4, np.inf, w), "key 4 is infinite"),
        (lambda w: w * 1.001, r"query 0 sum to 1\.001.*not 1 \(tolerance 1e-05\)"),
        (lambda w: with_row(w, (1, 2, 3), [1.5, -0.5, 0, 0, 0]), "head 2, query 3, key 1 is -0.5: negative"),
        (lambda w: np.zeros_like(w), "sum to 0.0"),
        (lambda w: w.astype(str), "must be numbers"),
    ],
)
def test_bad_weights_are_refused_with_a_message_that_says_where(weights, change, message):
    with pytest.raises(ValueError, match=message):
        AttentionView(change(weights), TOKENS)


def test_rows_within_the_stated_tolerance_are_accepted(weights):
    nudged = weights.copy()
    nudged[..., 0] += ROW_SUM_TOL / 2
    assert np.array_equal(AttentionView(nudged, TOKENS).weights, nudged)


def test_tokens_and_names_must_match_the_weights(weights):
    with pytest.raises(ValueError, match="tokens has 4 entries; weights has 5 keys"):
        AttentionView(weights, TOKENS[:4])
    with pytest.raises(ValueError, match="tokens must be a list"):
        AttentionView(weights, "The cat sat on mats")
    with pytest.raises(ValueError, match="head_names has 2 entries; weights has 3 heads"):
        AttentionView(weights, TOKENS, head_names=["a", "b"])
    with pytest.raises(ValueError, match="layer_names has 1 entry; weights has 2 layers"):
        AttentionView(weights, TOKENS, layer_names=["a"])
    with pytest.raises(ValueError, match="weights.1. has shape"):
        AttentionView([weights[0], weights[1, :2]], TOKENS)


def masked_softmax(x, ok):
    """Softmax over the allowed keys only: blocked cells exactly 0 (as a causal model's weights are)."""
    e = np.where(ok, np.exp(x - np.where(ok, x, -np.inf).max(axis=-1, keepdims=True)), 0.0)
    return e / e.sum(axis=-1, keepdims=True)


CAUSAL = np.tril(np.ones((5, 5), dtype=bool))


@pytest.fixture
def causal_weights():
    return masked_softmax(np.random.default_rng(2).normal(size=(2, 3, 5, 5)), CAUSAL)


def test_a_causal_models_upper_triangle_is_drawn_as_blocked(causal_weights):
    v = AttentionView(causal_weights, TOKENS, causal=True)
    assert np.array_equal(v._trace.allowed, CAUSAL)
    v.layer, v.head, v.focus = 1, 2, 2
    w = causal_weights[1, 2]
    want = [[float(w[i, j]) if j <= i else None for j in range(5)] for i in range(5)]
    assert v._head["weights"] == want  # None is what realmodel-draw.js draws as a blocked cell
    assert v._head["shares"][1] == [fmt.rounded(w[1, 0], 2), fmt.rounded(w[1, 1], 2), "", "", ""]
    assert v._head["legend"]["blocked"]  # the legend gains the grey "blocked" swatch
    row = v._row["sources"]
    assert [s["share"] for s in row] == [*fmt.percents(w[2, :3].tolist()), "blocked", "blocked"]
    assert [s["allowed"] for s in row] == [True, True, True, False, False]
    assert sum(float(s["precise"]) for s in row if s["allowed"]) == pytest.approx(1, abs=1e-12)
    # the head's breadth is over the keys a query may see, as the page's (not over all 5)
    assert v._head["breadth"] == head_profile(w, CAUSAL)["breadth"]
    assert v._head["breadth"] != head_profile(w, np.ones((5, 5), bool))["breadth"]
    # every thumbnail cell above the diagonal is blocked
    thumb = v._model["heads"][5]["thumb"]
    assert [thumb[i][j] for i in range(5) for j in range(5) if j > i] == [None] * 10


def test_allowed_broadcasts_and_combines_with_causal(causal_weights):
    # a padding mask: key 4 is padding for every query, given as a (S,) row
    keys = np.array([True, True, True, True, False])
    ok = CAUSAL & keys
    w = masked_softmax(np.random.default_rng(3).normal(size=(3, 5, 5)), ok)
    v = AttentionView(w, TOKENS, allowed=keys, causal=True)
    assert np.array_equal(v._trace.allowed, ok)
    v.focus = 4
    assert [s["share"] for s in v._row["sources"]][4] == "blocked"
    # the same mask given whole, as a torch bool tensor
    torch = pytest.importorskip("torch")
    v2 = AttentionView(torch.from_numpy(w), TOKENS, allowed=torch.from_numpy(ok))
    assert v2._head == v._head | {"caption": v2._head["caption"]}
    # without a mask nothing is blocked, and the legend has no blocked swatch
    assert not AttentionView(causal_weights, TOKENS)._head["legend"]["blocked"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"allowed": CAUSAL.astype(float)},
            "allowed must be booleans .True = may attend.; got dtype float64",
        ),
        ({"allowed": np.ones((4, 5), bool)}, r"allowed has shape \(4, 5\); it must broadcast to .* \(5, 5\)"),
        ({"allowed": ~CAUSAL}, "lets query 4 attend to no key"),
        ({"causal": "yes"}, "causal must be True or False"),
    ],
)
def test_a_bad_mask_is_refused_naming_it(causal_weights, kwargs, message):
    with pytest.raises(ValueError, match=message):
        AttentionView(causal_weights, TOKENS, **kwargs)


def test_a_blocked_cell_that_is_not_exactly_zero_is_refused_naming_it(causal_weights, weights):
    with pytest.raises(
        ValueError, match=r"layer 0, head 0, query 0, key 1 is 0\.\d+, but that key is blocked"
    ):
        AttentionView(weights, TOKENS, causal=True)  # an unmasked softmax: its upper triangle is not 0
    tiny = causal_weights.copy()
    tiny[1, 2, 3, 4], tiny[1, 2, 3, 0] = 1e-300, tiny[1, 2, 3, 0] - 1e-300  # the row still sums to 1
    with pytest.raises(
        ValueError, match="layer 1, head 2, query 3, key 4 is 1e-300, but that key is blocked"
    ):
        AttentionView(tiny, TOKENS, causal=True)
