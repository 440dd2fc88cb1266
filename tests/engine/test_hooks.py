"""Hook points: TransformerLens's names, each activation's shape where the forward passes it, and
hooks that refuse what would hook nothing or poison the rest of the forward."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine.cache import KVCache
from attnlab.engine.errors import FieldError
from attnlab.engine.forward import REFERENCE, forward
from attnlab.engine.hooks import Hooks, block_names, hook_names, no_hooks

from .tinykit import bert, llama

LLAMA_BLOCK = [
    "hook_resid_pre", "ln1.hook_normalized", "attn.hook_q", "attn.hook_k", "attn.hook_v", "attn.hook_rot_q",
    "attn.hook_rot_k", "attn.hook_attn_scores", "attn.hook_pattern", "attn.hook_z", "hook_attn_out",
    "hook_resid_mid", "ln2.hook_normalized", "mlp.hook_pre", "mlp.hook_pre_linear", "mlp.hook_post",
    "hook_mlp_out", "hook_resid_post",
]  # fmt: skip
BERT_BLOCK = [
    "hook_resid_pre", "attn.hook_q", "attn.hook_k", "attn.hook_v", "attn.hook_attn_scores",
    "attn.hook_pattern", "attn.hook_z", "hook_attn_out", "hook_resid_mid", "ln1.hook_normalized",
    "mlp.hook_pre", "mlp.hook_post", "hook_mlp_out", "hook_resid_post", "ln2.hook_normalized",
]  # fmt: skip


def test_block_names_are_spelled_as_transformer_lens_spells_them():
    n = block_names(11)
    assert n.resid_pre == "blocks.11.hook_resid_pre" and n.ln1 == "blocks.11.ln1.hook_normalized"
    assert (n.q, n.k, n.v) == ("blocks.11.attn.hook_q", "blocks.11.attn.hook_k", "blocks.11.attn.hook_v")
    assert (n.rot_q, n.rot_k) == ("blocks.11.attn.hook_rot_q", "blocks.11.attn.hook_rot_k")
    assert (n.scores, n.pattern) == ("blocks.11.attn.hook_attn_scores", "blocks.11.attn.hook_pattern")
    assert (n.z, n.attn_out, n.resid_mid) == ("blocks.11.attn.hook_z", "blocks.11.hook_attn_out",
                                              "blocks.11.hook_resid_mid")  # fmt: skip
    assert (n.ln2, n.mlp_pre, n.mlp_pre_linear) == ("blocks.11.ln2.hook_normalized", "blocks.11.mlp.hook_pre",
                                                    "blocks.11.mlp.hook_pre_linear")  # fmt: skip
    assert (n.mlp_post, n.mlp_out, n.resid_post) == ("blocks.11.mlp.hook_post", "blocks.11.hook_mlp_out",
                                                     "blocks.11.hook_resid_post")  # fmt: skip
    assert block_names(11) is n  # spelled once, kept
    assert block_names(2).z == "blocks.2.attn.hook_z"


def test_a_pre_norm_decoders_hook_points_in_computation_order(rng):
    arch, _ = llama(rng, n_layer=2)
    names = hook_names(arch)
    blocks = [f"blocks.{i}.{s}" for i in range(2) for s in LLAMA_BLOCK]
    want = ["hook_embed", *blocks, "ln_final.hook_normalized"]
    assert list(names) == want
    unrotated = hook_names(arch.replace(positions="none"))
    assert set(names) - set(unrotated) == {f"blocks.{i}.attn.hook_rot_{x}" for i in range(2) for x in "qk"}
    learned = hook_names(arch.replace(positions="learned"))
    assert learned[:2] == ("hook_embed", "hook_pos_embed") and "blocks.0.attn.hook_rot_q" not in learned
    plain = hook_names(arch.replace(mlp="plain", activation="gelu"))
    assert "blocks.0.mlp.hook_pre_linear" not in plain and len(plain) == len(names) - 2
    assert hook_names(arch.replace(final_norm=False))[-1] == "blocks.1.hook_resid_post"


def test_a_post_norm_encoders_hook_points_in_computation_order(rng):
    arch, _ = bert(rng, n_layer=2)
    want = ["hook_embed", "hook_pos_embed", "hook_token_type_embed", "embed.ln.hook_normalized"]
    want += [f"blocks.{i}.{s}" for i in range(2) for s in BERT_BLOCK]
    assert list(hook_names(arch)) == want


def _visits(arch, w, ids, **options):
    """Every (name, shape, dtype) the forward passes to a hook, in order, and what it returned."""
    seen = []
    pairs = [(lambda name: True, lambda a, name: seen.append((name, a.shape, a.dtype)))]
    hooks = Hooks(pairs, hook_names(arch))
    out = forward(arch, w, ids, hooks=hooks, **options)
    return seen, out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_decoders_activations_pass_each_point_once_in_its_shape(rng, dtype):
    arch, w = llama(rng, dtype=dtype, n_layer=2, n_head=4, n_kv_head=2, d_head=8, d_model=16, d_ff=24)
    T, d, H, H_kv, dh, ff = 5, 16, 4, 2, 8, 24
    seen, logits = _visits(arch, w, rng.integers(0, arch.d_vocab, T))
    assert [name for name, _, _ in seen] == list(hook_names(arch))
    assert {dt for _, _, dt in seen} == {np.dtype(dtype)} and logits.shape == (T, 40)
    shapes = {name: shape for name, shape, _ in seen}
    assert shapes["hook_embed"] == shapes["ln_final.hook_normalized"] == (T, d)
    for i in range(2):
        n = block_names(i)
        for name in (n.resid_pre, n.ln1, n.attn_out, n.resid_mid, n.ln2, n.mlp_out, n.resid_post):
            assert shapes[name] == (T, d), name
        assert shapes[n.q] == shapes[n.rot_q] == shapes[n.z] == (T, H, dh)
        assert shapes[n.k] == shapes[n.v] == shapes[n.rot_k] == (T, H_kv, dh)
        assert shapes[n.scores] == shapes[n.pattern] == (H, T, T)
        assert shapes[n.mlp_pre] == shapes[n.mlp_pre_linear] == shapes[n.mlp_post] == (T, ff)


def test_with_a_cache_the_keys_are_the_new_tokens_and_the_scores_span_the_cache(rng):
    arch, w = llama(rng, n_layer=2)
    caches = [KVCache() for _ in range(2)]
    forward(arch, w, [1, 2, 3, 4], caches=caches)
    seen, _ = _visits(arch, w, [5, 6], caches=caches)
    shapes = {name: shape for name, shape, _ in seen}
    n = block_names(1)
    assert shapes[n.k] == shapes[n.rot_k] == shapes[n.v] == (2, 2, 8)
    assert shapes[n.q] == (2, 4, 8) and shapes[n.scores] == shapes[n.pattern] == (4, 2, 6)
    assert shapes[n.resid_post] == (2, 16) and caches[1].length == 6


def test_an_encoders_batch_leads_every_activation(rng):
    arch, w = bert(rng, n_layer=2, d_model=16, n_head=4, d_ff=32)
    B, T, d, H, dh, ff = 3, 7, 16, 4, 4, 32
    padding = np.ones((B, T), bool)
    padding[1, 5:] = False
    seen, pooled = _visits(arch, w, rng.integers(0, arch.d_vocab, (B, T)), key_padding=padding)
    assert [name for name, _, _ in seen] == list(hook_names(arch))
    shapes = {name: shape for name, shape, _ in seen}
    assert pooled.shape == (B, d)
    assert shapes["hook_embed"] == shapes["embed.ln.hook_normalized"] == (B, T, d)
    assert shapes["hook_pos_embed"] == (T, d)  # one table row a position, added to every text of the batch
    assert shapes["hook_token_type_embed"] == (d,)  # token type 0's row, added to every token
    for i in range(2):
        n = block_names(i)
        for name in (n.resid_pre, n.attn_out, n.resid_mid, n.ln1, n.mlp_out, n.resid_post, n.ln2):
            assert shapes[name] == (B, T, d), name
        assert shapes[n.q] == shapes[n.k] == shapes[n.v] == shapes[n.z] == (B, T, H, dh)
        assert shapes[n.scores] == shapes[n.pattern] == (B, H, T, T)
        assert shapes[n.mlp_pre] == shapes[n.mlp_post] == (B, T, ff)


# -- Hooks: what they refuse -------------------------------------------------------------------------


def test_a_misspelt_name_is_refused_with_the_nearest_names(rng):
    arch, _ = llama(rng)
    names = hook_names(arch)
    with pytest.raises(FieldError) as err:
        Hooks([("blocks.0.attn.hook_z", print), ("blocks.1.attn.hook_patern", print)], names)
    assert err.value.loc == ("fwd_hooks", 1)
    assert "'blocks.1.attn.hook_patern' is not a hook point of this model" in str(err.value)
    assert "did you mean blocks.1.attn.hook_pattern" in str(err.value)
    with pytest.raises(FieldError) as err:
        Hooks([("blocks.7.hook_resid_post", print)], names)  # a layer this model does not have
    assert "did you mean blocks.1.hook_resid_post" in str(err.value)
    with pytest.raises(FieldError) as err:
        Hooks([("hook_pos_embed", print)], names)  # rotary positions: no learned table to hook
    assert "'hook_pos_embed' is not a hook point of this model" in str(err.value)
    with pytest.raises(FieldError) as err:
        Hooks([("the attention", print)], names)
    assert str(err.value).endswith("is not a hook point of this model")  # nothing near: no hint


@pytest.mark.parametrize(
    ("pair", "words"),
    [("blocks.0.attn.hook_z", "a pair (name or filter, function)"), (("blocks.0.attn.hook_z",), "a pair"),
     (("blocks.0.attn.hook_z", "not a function"), "a pair"), ((3, print), "a hook point's name or a filter")],
)  # fmt: skip
def test_a_hook_that_is_not_a_name_or_filter_with_a_function_is_refused(rng, pair, words):
    arch, _ = llama(rng)
    with pytest.raises(FieldError) as err:
        Hooks([("blocks.0.hook_resid_pre", print), pair], hook_names(arch))
    assert err.value.loc == ("fwd_hooks", 1) and words in str(err.value)


def test_a_filter_picks_points_and_hooks_on_one_point_run_in_the_order_given(rng):
    arch, _ = llama(rng, n_layer=3)
    every_z, one_z = (lambda n: n.endswith("hook_z")), "blocks.1.attn.hook_z"
    pairs = [(every_z, lambda a, n: a + 1.0), (one_z, lambda a, n: a * 10.0)]
    hooks = Hooks(pairs, hook_names(arch))
    assert sorted(hooks.table) == ["blocks.0.attn.hook_z", "blocks.1.attn.hook_z", "blocks.2.attn.hook_z"]
    assert "blocks.1.attn.hook_z" in hooks and "blocks.1.hook_resid_post" not in hooks and hooks
    z = np.arange(6.0).reshape(1, 2, 3)
    np.testing.assert_array_equal(hooks("blocks.1.attn.hook_z", z), (z + 1.0) * 10.0)  # first +1, then x10
    np.testing.assert_array_equal(hooks("blocks.2.attn.hook_z", z), z + 1.0)
    assert hooks("blocks.2.hook_resid_post", z) is z  # nothing hooked there
    assert not Hooks([], hook_names(arch)) and not Hooks([(lambda n: False, print)], hook_names(arch))
    assert no_hooks("blocks.0.attn.hook_z", z) is z


def test_a_hook_returning_none_or_its_argument_changes_nothing_and_others_are_made_like_it():
    pairs = [("a", lambda a, n: None), ("b", lambda a, n: a), ("c", lambda a, n: a.tolist()),
             ("d", lambda a, n: np.asfortranarray(a.astype(np.float64)))]  # fmt: skip
    hooks = Hooks(pairs, ["a", "b", "c", "d"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert hooks("a", x) is x and hooks("b", x) is x
    for name in ("c", "d"):  # a list, a float64 Fortran copy: back to x's dtype, C-contiguous
        out = hooks(name, x)
        assert out.dtype == np.float32 and out.flags.c_contiguous and out.tobytes() == x.tobytes()


def test_a_hook_must_keep_the_shape_and_return_finite_numbers():
    names = ["blocks.0.attn.hook_z", "blocks.0.attn.hook_attn_scores", "blocks.0.attn.hook_pattern"]
    x = np.zeros((2, 3))
    wrong = Hooks([("blocks.0.attn.hook_z", lambda a, n: a[:1])], names)
    with pytest.raises(FieldError) as err:
        wrong("blocks.0.attn.hook_z", x)
    assert err.value.loc == ("fwd_hooks",)
    assert "the hook at blocks.0.attn.hook_z returned shape (1, 3); it must keep (2, 3)" in str(err.value)
    for bad in (np.nan, np.inf, -np.inf):
        hooks = Hooks([(lambda n: True, lambda a, n, bad=bad: np.full_like(a, bad))], names)
        with pytest.raises(FieldError, match="the hook at blocks.0.attn.hook_z returned NaN or infinity"):
            hooks("blocks.0.attn.hook_z", x)
        with pytest.raises(FieldError, match="hook at blocks.0.attn.hook_pattern returned NaN or infinity"):
            hooks("blocks.0.attn.hook_pattern", x)
    # -inf blocks a key in the scores: the one place it is allowed; NaN and +inf are not
    blocked = np.array([[0.5, -np.inf, 1.0]])
    scores = Hooks([("blocks.0.attn.hook_attn_scores", lambda a, n: blocked)], names)
    assert scores("blocks.0.attn.hook_attn_scores", np.zeros((1, 3))).tobytes() == blocked.tobytes()
    for bad in (np.nan, np.inf):
        poison = [("blocks.0.attn.hook_attn_scores", lambda a, n, bad=bad: np.where(a == 0, bad, a))]
        hooks = Hooks(poison, names)
        with pytest.raises(FieldError, match="attn.hook_attn_scores returned NaN or infinity"):
            hooks("blocks.0.attn.hook_attn_scores", np.zeros((1, 3)))


POINTS = ["blocks.1.hook_resid_mid", "blocks.0.attn.hook_pattern", "blocks.1.attn.hook_v"]


@pytest.mark.parametrize("name", POINTS)
def test_a_bad_hook_inside_the_forward_is_refused_naming_its_point(rng, name):
    arch, w = llama(rng)
    for returned, words in ((lambda a: a[..., :1], "returned shape"), (lambda a: a * np.nan, "returned NaN")):
        hooks = Hooks([(name, lambda a, n, f=returned: f(a))], hook_names(arch))
        with pytest.raises(FieldError) as err:
            forward(arch, w, [1, 2, 3], hooks=hooks, ops=REFERENCE)
        assert name in str(err.value) and words in str(err.value)
