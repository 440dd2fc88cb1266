"""Direct logit attribution: the terms add up to the logit (within the stated rounding on both float32
paths, to 1e-9 in float64), and each term equals transformers' on its hooked activations."""

from __future__ import annotations

import numpy as np
import pytest
from circuitkit import CLEAN, close, sentence_ids

from attnlab.engine.errors import FieldError
from attnlab.models.circuits.attribution import logit_attribution
from attnlab.models.circuits.runs import run

pytestmark = pytest.mark.models


def test_the_terms_add_up_to_the_logit_within_float32_rounding(decoder):
    c = run(decoder, decoder.encode(CLEAN))
    for position, token in ((8, None), (8, 7268), (3, 11)):
        a = logit_attribution(decoder, c, position, token)
        assert a.heads.shape == (30, 9) and a.mlps.shape == (30,) and not a.attn_bias.any()
        assert a.logit == float(c.logits[position, a.token])
        assert a.scale == 1.0 / float(c.final_rms[position])
        assert abs(a.total - a.logit) <= a.bound
        assert a.bound < 0.1  # the rounding bound of a 30-layer float32 pass, well under a logit's size
        terms = a.terms()
        assert terms.shape == (1 + 30 * 11,) and terms[0] == a.embedding
        total = 0.0
        for t in terms:
            total += t
        assert total == a.total  # the order the docstring states
    assert logit_attribution(decoder, c).token == int(np.argmax(c.logits[-1])) == 7042


def test_in_float64_the_terms_add_up_to_the_logit(smollm2):
    exact = smollm2.with_dtype(np.float64)
    c = run(exact, exact.encode(CLEAN))
    a = logit_attribution(exact, c)
    assert a.bound < 1e-9 and abs(a.total - a.logit) <= a.bound


def test_an_encoder_has_no_logit_to_attribute(minilm):
    with pytest.raises(FieldError) as error:
        logit_attribution(minilm, run(minilm, sentence_ids(minilm)))
    assert error.value.loc == ("model",)


@pytest.mark.oracle
def test_each_term_equals_transformers_on_its_hooked_activations(decoder, hf_decoder):
    ids = decoder.encode(CLEAN)
    ours = logit_attribution(decoder, run(decoder, ids), -1, 7042)
    hf = hf_decoder.run(ids)
    w = hf_decoder.weights()
    u = w["gamma"] * w["embedding"][7042] / hf["final_rms"][-1]  # (576,): the frozen final norm, then E[t]
    z = hf["z"][:, -1]  # (30, 9, 64)
    heads = np.einsum("lhd,lmhd,m->lh", z, w["w_o"].reshape(30, 576, 9, 64), u)
    theirs = {"embedding": hf["resid"][0, -1] @ u, "heads": heads, "mlps": hf["mlp_out"][:, -1] @ u}
    tol = close(decoder.path, hf["logits"][-1])
    for name, value in theirs.items():
        assert np.abs(getattr(ours, name) - value).max() <= tol, name
    assert abs(ours.total - hf["logits"][-1, 7042]) <= tol


def test_the_same_bits_on_one_blas_thread_or_two(smollm2, monkeypatch):
    """Its float64 products (W_O's rows and the MLP outputs with u) run inside one BLAS thread, so the
    terms never depend on the thread count the process was given."""
    from threadpoolctl import threadpool_limits

    from attnlab.engine.threads import blas_threads
    from attnlab.models.circuits import attribution

    c = run(smollm2, smollm2.encode(CLEAN))
    seen = []
    real = attribution._values

    def watched(w):
        seen.append(blas_threads())  # w_o @ u comes next
        return real(w)

    monkeypatch.setattr(attribution, "_values", watched)
    got = {}
    for n in (1, 2):
        with threadpool_limits(limits=n, user_api="blas"):
            a = logit_attribution(smollm2, c, 8)
            assert blas_threads() == {n}  # restored afterwards
        got[n] = np.concatenate([a.terms(), [a.total, a.bound]])
    assert len(seen) == 2 * 30 and all(s == {1} for s in seen)
    assert got[1].tobytes() == got[2].tobytes()

