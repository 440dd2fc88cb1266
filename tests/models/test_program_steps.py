"""The steps a standalone program runs the one forward with (models/program_steps.py): the engine's own
forward, run with them in-process, gives the engine's bits with its ops (every activation, hooked or not),
on tiny models whose shapes take each fast form (short and long prompts, compiled and NumPy steps) and on
SmolLM2 itself."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine.fast.decode import steps
from attnlab.engine.fast.ops import FAST, ON_VALUES
from attnlab.engine.fast.ops import Fast as EngineFast
from attnlab.engine.forward import REFERENCE, forward
from attnlab.models.program_steps import Fast, Kernels, Trace, compiled_steps_ran

from ..engine.tinykit import bert, hooked, llama


class NumpySteps(EngineFast):
    """The engine's fast steps where attnlab's compiled steps do not run."""

    kernels = staticmethod(lambda: None)


def same(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def every_activation_same(got: dict, want: dict) -> bool:
    return got.keys() == want.keys() and all(same(np.asarray(got[k]), np.asarray(want[k])) for k in want)


def tiny(seed: int = 0):
    """A SmolLM2-like decoder (float32, GQA 6/2, d_head 64: the compiled attention's shapes; q|k|v and
    gate|up side by side as the loader lays them out)."""
    return llama(np.random.default_rng(seed), dtype=np.float32, joined=True, n_layer=2, d_model=96, n_head=6,
                 n_kv_head=2, d_head=64, d_ff=160, d_vocab=9000, rope_base=100000.0)  # fmt: skip


@pytest.mark.parametrize("n_tokens", [1, 9, 40, 70, 130])  # one row, prompts, 64² scores, SiLU in chunks
def test_the_fast_steps_give_the_fast_paths_bits(n_tokens):
    if steps.kernels() is None:
        pytest.skip(f"attnlab's compiled steps do not run here: {steps.reason()}")
    arch, w = tiny()
    ids = np.random.default_rng(n_tokens).integers(0, arch.d_vocab, n_tokens)
    got, seen = hooked(arch, w, ids, ops=Fast(Kernels))
    want, expected = hooked(arch, w, ids, ops=FAST)
    assert same(got, want) and every_activation_same(seen, expected)


@pytest.mark.parametrize("n_tokens", [9, 70, 130])
def test_the_fast_steps_without_compiled_kernels_give_the_numpy_fast_paths_bits(n_tokens):
    arch, w = tiny(1)
    ids = np.random.default_rng(n_tokens).integers(0, arch.d_vocab, n_tokens)
    got, seen = hooked(arch, w, ids, ops=Fast(None))
    want, expected = hooked(arch, w, ids, ops=NumpySteps())
    assert same(got, want) and every_activation_same(seen, expected)


@pytest.mark.parametrize("n_tokens", [9, 70])
def test_the_trace_steps_give_the_trace_paths_bits(n_tokens):
    arch, w = tiny(2)
    ids = np.random.default_rng(n_tokens).integers(0, arch.d_vocab, n_tokens)
    got, seen = hooked(arch, w, ids, ops=Trace())
    want, expected = hooked(arch, w, ids, ops=ON_VALUES)
    assert same(got, want) and every_activation_same(seen, expected)


def test_a_pattern_hook_takes_the_attention_apart_alike():
    """A hook that changes the pattern (the pattern patch's) on the compiled steps' hooked path."""
    arch, w = tiny(3)
    ids = np.arange(11) * 7
    name = "blocks.1.attn.hook_pattern"

    def flatten(a, name):
        return np.where(a > 0, 1.0 / (np.arange(a.shape[-1]) + 1.0)[:, None], 0.0).astype(a.dtype)

    kernels = Kernels if steps.kernels() is not None else None
    got = forward(arch, w, ids, ops=Fast(kernels), hooks=_hooks(arch, [(name, flatten)]))
    want = forward(arch, w, ids, ops=FAST if kernels else NumpySteps(), hooks=_hooks(arch, [(name, flatten)]))
    assert same(got, want)
    assert not same(got, forward(arch, w, ids, ops=Fast(kernels)))


def test_an_encoder_leaves_every_step_to_the_reference():
    arch, w = bert(np.random.default_rng(4), dtype=np.float32)
    ids = np.arange(7)
    assert same(forward(arch, w, ids, ops=Fast(Kernels)), forward(arch, w, ids, ops=REFERENCE))
    assert same(forward(arch, w, ids, ops=Trace()), forward(arch, w, ids, ops=FAST))


def test_smollm2s_own_forward_on_the_program_steps_gives_its_bits(smollm2):
    """SmolLM2's float32 weights, as the model holds them: logits and the trace's logits."""
    m = smollm2.with_dtype(np.float32)
    ids = m.to_tokens("The Eiffel Tower is in the city of")
    kernels = Kernels if compiled_steps_ran() else None
    assert same(forward(m.arch, m.weights, ids, ops=Fast(kernels)), m.forward(ids))
    assert same(forward(m.arch, m.weights, ids, ops=Trace()), m.forward(ids, ops=m.trace_ops))


def _hooks(arch, pairs):
    from attnlab.engine.hooks import Hooks, hook_names

    return Hooks(pairs, hook_names(arch))
