"""The views' calculations on made-up traces (no weights): rows, neuron view, plane, next token, journey."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlab.engine.single import trace_query
from attnlab.lab.realmodel.neuron import neuron_view, plane, products_and_sums
from attnlab.lab.realmodel.nexttoken import next_token
from attnlab.lab.realmodel.query import row_labels
from attnlab.models.rows import explorer_row
from attnlab.models.sampling import Sampling
from attnlab.models.toy import ToyModel


def _vectors(n: int, d: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d).tolist()
    keys = rng.standard_normal((n, d)).tolist()
    values = rng.standard_normal((n, d)).tolist()
    return q, keys, values, [f"{i} t" for i in range(n)]


@pytest.mark.parametrize("n, causal_at", [(40, None), (40, 3), (40, 0), (256, None), (256, 200)])
def test_a_row_is_trace_query_at_any_length(n, causal_at):
    q, keys, values, labels = _vectors(n)
    allowed = [True] * n if causal_at is None else [i <= causal_at for i in range(n)]
    ours = explorer_row(q, keys, values, labels=labels, allowed=allowed, scale=0.125)
    theirs = trace_query(q, keys, values, labels=labels, allowed=allowed, scale=0.125, max_sources=256)
    assert ours == theirs  # every field, ==


def test_a_row_longer_than_the_explorers_cap_has_the_same_numbers_per_key():
    q, keys, values, labels = _vectors(256, d=64, seed=1)
    allowed = [i <= 200 for i in range(256)]
    row = explorer_row(q, keys, values, labels=labels, allowed=allowed, scale=0.125)
    assert len(row.weights) == 256 and row.blocked == tuple(range(201, 256))
    for j in (0, 63, 64, 200, 255):  # each key's dot and score as trace_query computes it alone
        alone = trace_query(q, [keys[j]], [values[j]], scale=0.125)
        assert (row.dots[j], row.scores[j]) == (alone.dots[0], alone.scores[0])
    assert math.isclose(sum(row.weights), 1.0, rel_tol=1e-12)
    assert row.weights[201:] == (0.0,) * 55


def test_products_and_their_running_sum_end_on_the_dot_product():
    q, keys, values, labels = _vectors(3, d=64)
    products, running = products_and_sums(tuple(q), tuple(keys[1]))
    assert products == [a * b for a, b in zip(q, keys[1])]
    row = trace_query(q, keys, values, labels=labels, scale=0.125)
    assert running[-1] == row.dots[1] and running[0] == products[0]


def test_the_neuron_view_equals_trace_query_on_the_same_vectors():
    trace = ToyModel("smollm2").trace("one two three four five six", details=True)
    view = neuron_view(trace, 1, 0, 4, 2)
    q = trace.q[1, 0, 4].astype(float).tolist()
    keys = trace.k[1, 0].astype(float).tolist()
    values = trace.v[1, 0].astype(float).tolist()
    ref = trace_query(
        q, keys, values, labels=row_labels(trace), allowed=trace.allowed[4].tolist(), scale=trace.scale
    )
    assert view["q"] == list(ref.q) and view["k"] == list(ref.keys[2])
    assert view["dot"] == ref.dots[2] and view["score"] == ref.scores[2]
    assert (
        view["row"]["weights"] == list(ref.weights)
        and view["row"]["z"] == ref.z
        and view["row"]["m"] == ref.m
    )
    assert view["row"]["scores"] == [s if ok else None for s, ok in zip(ref.scores, ref.allowed)]
    assert view["row"]["key_share"] == ref.weights[2]
    assert view["allowed"] and view["d_k"] == 4
    with pytest.raises(ValueError, match=r"^key 6 does not exist; the text has tokens 0..5"):
        neuron_view(trace, 1, 0, 4, 6)


def test_the_plane_keeps_every_score_and_says_what_it_leaves_out():
    q, keys, values, labels = _vectors(12, d=64, seed=3)
    row = trace_query(q, keys, values, labels=labels, scale=0.125)
    p = plane(row)
    q_len = math.sqrt(sum(x * x for x in q))
    for key in p["keys"]:
        assert math.isclose(q_len * key["x"] * 0.125, row.scores[key["index"]], rel_tol=1e-9, abs_tol=1e-12)
        assert 0.0 <= key["kept"] <= 1.0
    top = max(range(12), key=lambda i: row.weights[i])
    assert p["top_key"] == top and math.isclose(p["keys"][top]["kept"], 1.0)  # the top key lies in the plane
    assert p["q"] == [q_len, 0.0]
    assert "62 directions" in p["leaves_out"]["text"] and "64 dimensions" in p["leaves_out"]["text"]
    assert p["leaves_out"]["claims"] == {"directions_left": 62, "mean_kept": p["mean_kept"], "d_v": 64}
    assert p["caption"]["text"].startswith("A projection")


def test_next_token_ranks_by_logit_and_says_what_each_control_removed():
    logits = np.array([1.0, 3.0, 2.0, 3.0, -1.0])
    view = next_token(logits, Sampling(temperature=0.5, top_k=3, top_p=0.5), decode=lambda i: f"t{i}", top=5)
    assert [e["id"] for e in view["entries"]] == [1, 3, 2, 0, 4]  # ties: the lower id first
    assert [e["kept"] for e in view["entries"]] == [True, True, False, False, False]
    assert view["entries"][0]["p"] == view["entries"][1]["p"] == 0.5
    top_k, top_p = view["removed"][1], view["removed"][2]
    assert (top_k["count"], top_p["count"]) == (2, 1)
    tempered = np.exp(logits / 0.5 - 6) / np.exp(logits / 0.5 - 6).sum()
    assert math.isclose(top_k["mass"], tempered[[0, 4]].sum()) and math.isclose(top_p["mass"], tempered[2])
    p_model = np.exp(logits - 3) / np.exp(logits - 3).sum()
    assert math.isclose(view["entries"][4]["p_model"], p_model[4])
    greedy = next_token(logits, Sampling(), decode=str, top=2, actual=2)
    assert [e["p"] for e in greedy["entries"]] == [1.0, 0.0] and greedy["kept"] == 1
    assert greedy["actual"]["rank"] == 3 and greedy["actual"]["p"] == 0.0


def test_sampling_shares_never_warn_on_minus_infinity_or_greedy():
    from attnlab.models.sampling import shares

    logits = np.array([1.0, -np.inf, 3.0, -np.inf])
    np.testing.assert_array_equal(shares(logits, Sampling()), [0.0, 0.0, 1.0, 0.0])  # greedy: the arg-max
    p = shares(logits, Sampling(temperature=0.5, top_k=3))
    assert p[1] == p[3] == 0.0 and math.isclose(p[2], 1 / (1 + math.exp(-4.0)))
    with pytest.raises(ValueError, match="at least one finite"):
        shares(np.full(3, -np.inf), Sampling(temperature=1.0))


def test_the_status_line_counts_layers_and_says_loading_only_while_loading():
    from attnlab.lab.realmodel.status import stage_display
    from attnlab.models.jobs.kinds import TraceJob

    job = TraceJob(id="x", model="smollm2", text="hi")

    def line(place=None):
        title = "SmolLM2-135M-Instruct"
        return stage_display(status=job.status, title=title, place=place, layers_done=job.layers_done,
                             n_layer=job.n_layer, message=job.message)  # fmt: skip

    assert line(2) == "Waiting: 2nd in line"
    job.apply("loading")
    assert line() == "Loading SmolLM2-135M-Instruct (once per server)…"
    job.apply("running", 30)
    assert line() == "Running layer 1 of 30"
    job.apply("layers", 30)
    assert line() == "Running layer 30 of 30"  # never "31 of 30"


@pytest.mark.parametrize("seed", range(4))
def test_the_journeys_top_units_are_a_stable_sorts_first_five(seed):
    from attnlab.models.journey import top_units

    rng = np.random.default_rng(seed)
    act = rng.normal(size=(40, 300))
    # ties at and around the boundary, signed zeros and a row of equal magnitudes
    act[0, [3, 7, 11, 200, 299, 5]] = [9.0, -9.0, 9.0, 9.0, -9.0, 8.0]
    act[1] = np.where(rng.random(300) < 0.5, 1.5, -1.5)
    act[2, :] = 0.0
    act[2, 10] = -0.0
    act[3] = np.round(act[3], 1)  # many ties in a row
    want = np.argsort(-np.abs(act), axis=-1, kind="stable")[:, :5]
    assert np.array_equal(top_units(act, 5), want)
    assert np.array_equal(top_units(act[:, :4], 5), np.argsort(-np.abs(act[:, :4]), axis=-1, kind="stable"))
