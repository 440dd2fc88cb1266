"""attention(): worked numbers, masks, alignment, dtypes, namespaces, traces and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlab.engine import attention, causal_mask, trace_query


def test_worked_example_two_keys():
    q = np.array([[1.0, 0.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0]])
    v = np.array([[1.0, 2.0], [3.0, 4.0]])
    res = attention(q, k, v, scale=1.0)
    e = math.e
    assert res.weights[0, 0] == pytest.approx(e / (e + 1), abs=1e-16)
    assert res.weights[0, 1] == pytest.approx(1 / (e + 1), abs=1e-16)
    assert res.output[0, 0] == pytest.approx((e * 1 + 3) / (e + 1), abs=1e-15)
    assert res.output[0, 1] == pytest.approx((e * 2 + 4) / (e + 1), abs=1e-15)
    assert res.trace is None and res.fully_masked.tolist() == [False]


def test_default_scale_is_one_over_sqrt_dk():
    q, k = np.array([[2.0, 0.0, 0.0, 0.0]]), np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    res = attention(q, k, np.eye(2), return_trace=True)
    assert res.trace["scores"][0].tolist() == [1.0, 0.0]  # 2 / sqrt(4)
    assert res.weights[0, 0] == pytest.approx(math.e / (math.e + 1), abs=1e-16)


def test_agrees_with_the_one_query_explorer(rng):
    q, k, v = rng.standard_normal(5), rng.standard_normal((9, 5)), rng.standard_normal((9, 3))
    allowed = [True, False, True, True, True, False, True, True, True]
    single = trace_query(q.tolist(), k.tolist(), v.tolist(), allowed=allowed)
    res = attention(q[None], k, v, mask=np.array(allowed))
    np.testing.assert_allclose(res.weights[0], single.weights, rtol=0, atol=1e-15)
    np.testing.assert_allclose(res.output[0], single.output, rtol=0, atol=1e-15)


def test_causal_masks_named_alignments():
    top = causal_mask(2, 4, "top_left")
    bottom = causal_mask(2, 4, "bottom_right")
    assert top.tolist() == [[True, False, False, False], [True, True, False, False]]
    assert bottom.tolist() == [[True, True, True, False], [True, True, True, True]]
    assert causal_mask(3, 1, "bottom_right").tolist() == [[False], [False], [True]]


def test_masks_combine_and_blocked_weights_are_exactly_zero(rng):
    q, k, v = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6, 2))
    real = np.array([[True] * 6, [True, True, True, True, False, False]])
    mask = np.ones((4, 6), bool)
    mask[:, 0] = False
    res = attention(q, k, v, mask=mask, causal="bottom_right", key_padding_mask=real)
    allowed = mask & causal_mask(4, 6, "bottom_right") & real[:, None, :]
    assert np.all(res.weights[~allowed] == 0.0)
    np.testing.assert_allclose(res.weights.sum(-1), 1.0, atol=1e-15)


def test_fully_masked_row_is_zero_and_reported():
    q, k, v = np.ones((3, 2)), np.ones((4, 2)), np.arange(8.0).reshape(4, 2)
    mask = np.array([[True, True, False, False], [False] * 4, [False, False, False, True]])
    res = attention(q, k, v, mask=mask, return_trace=True)
    assert res.fully_masked.tolist() == [False, True, False]
    assert res.output[1].tolist() == [0.0, 0.0] and res.weights[1].tolist() == [0.0] * 4
    assert res.output[2].tolist() == [6.0, 7.0]
    assert not np.isnan(res.trace["max"]).any()


def test_underflow_is_not_a_mask():
    q, k, v = np.array([[1.0]]), np.array([[0.0], [-2000.0]]), np.array([[1.0], [5.0]])
    res = attention(q, k, v, scale=1.0, return_trace=True)
    assert res.weights[0].tolist() == [1.0, 0.0]
    assert res.trace["allowed"] if "allowed" in res.trace else True
    assert "allowed" not in res.trace and not res.fully_masked[0]


def test_large_logits_stay_finite():
    q, k = np.array([[1e150, 0.0]]), np.array([[1e150, 0.0], [-1e150, 0.0]])
    res = attention(q, k, np.array([[1.0], [2.0]]), scale=1e-152)
    assert res.output.tolist() == [[1.0]]


def test_float_mask_minus_inf_blocks_and_finite_values_shift():
    q, k, v = np.zeros((1, 2)), np.zeros((3, 2)), np.array([[1.0], [2.0], [4.0]])
    res = attention(q, k, v, mask=np.array([0.0, np.log(3.0), -np.inf]))
    np.testing.assert_allclose(res.weights[0], [0.25, 0.75, 0.0], atol=1e-16)
    assert res.weights[0, 2] == 0.0


def test_trace_names_and_shapes(rng):
    q, k, v = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 7, 3)), rng.standard_normal((2, 7, 4))
    res = attention(q, k, v, causal="top_left", return_trace=True)
    assert res.trace.shapes() == {
        "q": (2, 5, 3), "k": (2, 7, 3), "v": (2, 7, 4), "dots": (2, 5, 7), "scores": (2, 5, 7),
        "allowed": (2, 5, 7), "max": (2, 5, 1), "exps": (2, 5, 7), "sum": (2, 5, 1),
        "weights": (2, 5, 7), "output": (2, 5, 4),
    }  # fmt: skip
    np.testing.assert_array_equal(res.trace["weights"], res.weights)
    np.testing.assert_allclose(res.trace["dots"], q @ k.transpose(0, 2, 1), atol=1e-15)


def test_dtypes(rng):
    q, k, v = (rng.standard_normal((4, 8)) for _ in range(3))
    ref = attention(q, k, v).output
    r32 = attention(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32))
    assert r32.output.dtype == np.float32 and r32.weights.dtype == np.float32
    assert np.max(np.abs(r32.output - ref)) < 1e-5
    mixed = attention(q.astype(np.float32), k, v)
    assert mixed.output.dtype == np.float64
    ints = attention(np.ones((2, 2), np.int64), np.eye(2, dtype=np.int64), np.eye(2, dtype=np.int64))
    assert ints.output.dtype == np.float64
    from_lists = attention([[1.0, 0.0]], [[1.0, 0.0]], [[2.0]])
    assert from_lists.output.tolist() == [[2.0]]


def test_every_namespace_gives_the_numpy_numbers(xp, to_xp, to_np, rng):
    q, k, v = (
        rng.standard_normal((2, 3, 23, 15)),
        rng.standard_normal((2, 3, 56, 15)),
        rng.standard_normal((2, 3, 56, 7)),
    )
    mask = rng.random((23, 56)) < 0.8
    real = rng.random((2, 1, 56)) < 0.9
    bias = np.where(rng.random((23, 56)) < 0.2, -np.inf, rng.standard_normal((23, 56)))
    for kwargs in (
        {"causal": "top_left"},
        {"causal": "bottom_right", "key_padding_mask": real},
        {"mask": mask},
        {"mask": bias},
    ):
        ref = attention(q, k, v, **kwargs)
        conv = {n: to_xp(a) if isinstance(a, np.ndarray) else a for n, a in kwargs.items()}
        res = attention(to_xp(q), to_xp(k), to_xp(v), **conv)
        assert type(res.output) is type(to_xp(q))
        np.testing.assert_allclose(to_np(res.output), ref.output, rtol=0, atol=1e-14)
        np.testing.assert_array_equal(to_np(res.fully_masked), ref.fully_masked)


def test_gqa_on_every_namespace(xp, to_xp, to_np, rng):
    q, k, v = (
        rng.standard_normal((1, 6, 5, 4)),
        rng.standard_normal((1, 2, 9, 4)),
        rng.standard_normal((1, 2, 9, 4)),
    )
    ref = attention(q, np.repeat(k, 3, axis=1), np.repeat(v, 3, axis=1), causal="bottom_right")
    res = attention(to_xp(q), to_xp(k), to_xp(v), causal="bottom_right", enable_gqa=True)
    np.testing.assert_allclose(to_np(res.output), ref.output, rtol=0, atol=1e-15)
    assert tuple(res.weights.shape) == (1, 6, 5, 9)


# --- bad input ---------------------------------------------------------------


def _qkv(L=3, S=4, d=2, dv=2):
    return np.ones((L, d)), np.ones((S, d)), np.ones((S, dv))


@pytest.mark.parametrize(
    "args,kwargs,message",
    [
        (
            (np.ones((3, 2)), np.ones((4, 5)), np.ones((4, 2))),
            {},
            r"q has shape \(3, 2\) and k has shape \(4, 5\)",
        ),
        (
            (np.ones((3, 2)), np.ones((4, 2)), np.ones((5, 2))),
            {},
            r"k has shape \(4, 2\) and v has shape \(5, 2\)",
        ),
        ((np.ones(3), np.ones((4, 3)), np.ones((4, 2))), {}, r"q has shape \(3,\)"),
        ((np.ones((2, 3, 2)), np.ones((5, 4, 2)), np.ones((5, 4, 2))), {}, r"q \(2,\), k \(5,\)"),
        ((np.ones((0, 2)), np.ones((4, 2)), np.ones((4, 2))), {}, r"q has shape \(0, 2\)"),
        (_qkv(), {"causal": "bottom-right"}, r"causal='bottom-right' is not an alignment"),
        (_qkv(), {"causal": True}, r"causal=True is not an alignment"),
        (_qkv(), {"mask": np.ones((4, 3), bool)}, r"mask has shape \(4, 3\).*\(3, 4\)"),
        (_qkv(), {"mask": np.ones((2, 3, 4), bool)}, r"mask has shape \(2, 3, 4\)"),
        (_qkv(), {"mask": np.ones((3, 4), np.int64)}, r"mask has dtype int64"),
        (_qkv(), {"mask": np.full((3, 4), np.nan)}, r"NaN or \+inf"),
        (_qkv(), {"mask": np.full((3, 4), np.inf)}, r"NaN or \+inf"),
        (_qkv(), {"key_padding_mask": np.ones(5, bool)}, r"key_padding_mask has shape \(5,\)"),
        (_qkv(), {"key_padding_mask": np.ones(4)}, r"key_padding_mask has dtype float64"),
        (_qkv(), {"scale": float("nan")}, r"scale is nan"),
        (_qkv(), {"scale": "0.5"}, r"scale must be a number"),
        (
            (np.ones((1, 6, 3, 2)), np.ones((1, 4, 3, 2)), np.ones((1, 4, 3, 2))),
            {"enable_gqa": True},
            r"q has 6 heads .* k has 4",
        ),  # fmt: skip
    ],
)
def test_bad_input_names_the_shapes(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        attention(*args, **kwargs)


@pytest.mark.parametrize("field", ["q", "k", "v"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_are_refused_even_when_masked(field, bad):
    q, k, v = _qkv()
    arrays = {"q": q, "k": k, "v": v}
    arrays[field] = arrays[field].copy()
    arrays[field][-1, -1] = bad
    real = np.array([True, True, True, False])  # the bad key/value is padding
    shape = arrays[field].shape
    with pytest.raises(ValueError, match=rf"{field} of shape \({shape[0]}, {shape[1]}\) has 1 NaN"):
        attention(arrays["q"], arrays["k"], arrays["v"], key_padding_mask=real)


def test_overflowing_dot_products_are_refused():
    big = np.full((1, 2), 1e200)
    with pytest.raises(ValueError, match="overflowed"):
        attention(big, big, np.ones((1, 1)))


def test_non_numbers_are_refused():
    with pytest.raises(ValueError, match="q must be an array of numbers"):
        attention([["a", "b"]], np.ones((1, 2)), np.ones((1, 2)))
    with pytest.raises(ValueError, match="q must hold real numbers"):
        attention(np.ones((1, 2), bool), np.ones((1, 2)), np.ones((1, 2)))


def test_low_precision_torch_inputs_are_computed_in_float32(rng):
    torch = pytest.importorskip("torch", reason="torch not installed: no float16 tensors to try")
    q, k, v = (
        rng.standard_normal((2, 9, 16)),
        rng.standard_normal((2, 11, 16)),
        rng.standard_normal((2, 11, 8)),
    )
    ref = attention(q, k, v, causal="bottom_right").output
    half = [torch.from_numpy(a).to(torch.float16) for a in (q, k, v)]
    res = attention(*half, causal="bottom_right")
    assert res.output.dtype == torch.float32 and res.weights.dtype == torch.float32
    assert float((res.output.double() - torch.from_numpy(ref)).abs().max()) < 5e-3  # float16 inputs
    mask = causal_mask(3, 5, "bottom_right", like=half[0])
    assert mask.dtype == torch.bool and mask.tolist()[0] == [True, True, True, False, False]


# -- the hook points inside attend (the forward's hook_attn_scores and hook_pattern) --------------------


def _gqa_inputs(rng):
    """4 query heads on 2 KV heads, 3 new queries after 2 cached keys, the last key padding."""
    q = rng.standard_normal((4, 3, 8))
    k, v = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 6))
    padding = np.array([[True, True, True, True, False]])  # (1, S): every head, every query
    return q, k, v, padding


def _attend(q, k, v, padding, **hooks):
    from attnlab.engine.attention import attend

    return attend(q, k, v, mask=None, causal="bottom_right", scale=None, key_padding_mask=padding,
                  enable_gqa=True, return_trace=False, check_values=True, **hooks)  # fmt: skip


def test_hooks_on_the_scores_and_weights_that_return_their_argument_change_no_bit(rng):
    q, k, v, padding = _gqa_inputs(rng)
    plain = _attend(q, k, v, padding)
    seen = {}
    hooked = _attend(q, k, v, padding, on_scores=lambda a: seen.setdefault("scores", a),
                     on_weights=lambda a: seen.setdefault("weights", a))  # fmt: skip
    assert hooked.output.tobytes() == plain.output.tobytes()
    assert hooked.weights.tobytes() == plain.weights.tobytes()
    # the hooks see query heads (H, L, S), GQA or not; blocked keys (the future, the padding) are -inf
    assert seen["scores"].shape == seen["weights"].shape == (4, 3, 5)
    blocked = ~(causal_mask(3, 5, "bottom_right") & padding)
    assert np.all(np.isneginf(seen["scores"][:, blocked]))
    assert np.all(np.isfinite(seen["scores"][:, ~blocked]))
    want = np.einsum("hld,hsd->hls", q, np.repeat(k, 2, axis=0)) / math.sqrt(8)
    np.testing.assert_allclose(seen["scores"][:, ~blocked], want[:, ~blocked], rtol=0, atol=1e-14)
    assert seen["weights"].tobytes() == plain.weights.tobytes()


def test_a_scores_hook_changes_the_softmax_but_never_unblocks_a_key(rng):
    q, k, v, padding = _gqa_inputs(rng)
    res = _attend(q, k, v, padding, on_scores=lambda a: np.zeros_like(a))  # every score 0, blocked too
    allowed = causal_mask(3, 5, "bottom_right") & padding
    uniform = np.where(allowed, 1.0, 0.0) / allowed.sum(-1, keepdims=True)
    np.testing.assert_allclose(res.weights, np.broadcast_to(uniform, (4, 3, 5)), rtol=0, atol=1e-16)
    assert np.all(res.weights[:, ~allowed] == 0.0)


def test_a_weights_hooks_replacement_is_what_mixes_the_values(rng):
    q, k, v, padding = _gqa_inputs(rng)
    mine = rng.random((4, 3, 5))
    mine /= mine.sum(-1, keepdims=True)  # on blocked keys too: the hook decides
    res = _attend(q, k, v, padding, on_weights=lambda a: mine)
    assert res.weights.tobytes() == mine.tobytes()
    np.testing.assert_allclose(res.output, mine @ np.repeat(v, 2, axis=0), rtol=0, atol=1e-15)


def test_a_hook_on_attention_must_keep_the_shape_and_return_no_nan(rng):
    from attnlab.engine.errors import FieldError

    q, k, v, padding = _gqa_inputs(rng)
    q = q[:2]  # two query heads on two KV heads: no grouping
    wrong = r"a hook on the scores returned shape \(3, 5\); it must keep \(2, 3, 5\)"
    with pytest.raises(FieldError, match=wrong):
        _attend(q, k, v, padding, on_scores=lambda a: a[0])
    for where in ("on_scores", "on_weights"):
        with pytest.raises(FieldError, match=f"a hook on the {where[3:]} returned NaN"):
            _attend(q, k, v, padding, **{where: lambda a: a * np.nan})


GQA_SHAPE_BUG = (
    "with GQA, attend() reshapes a hook's answer to the grouped shape before checking it: "
    "a wrong shape raises NumPy's reshape error, not the FieldError"
)


def test_a_hook_of_the_wrong_shape_is_refused_by_name_with_gqa_too(rng):
    from attnlab.engine.errors import FieldError

    q, k, v, padding = _gqa_inputs(rng)
    with pytest.raises(FieldError, match="a hook on the scores returned shape"):
        _attend(q, k, v, padding, on_scores=lambda a: a[0])
