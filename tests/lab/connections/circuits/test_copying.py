"""The circuits lab's numbers: which heads are chosen, and the induction score of recorded rows."""

from __future__ import annotations

import math

import numpy as np
from copykit import induction, run_data

from attnlab.lab.connections.circuits.copying import Copying, choose, induction_score, weights


def test_the_induction_head_and_the_previous_token_heads_below_it():
    ind = np.zeros((4, 3))
    ind[2, 1] = ind[3, 0] = 0.9  # a tie: the lower layer wins
    prev = np.array([[0.5, 0.7, 0.7], [0.2, 0.9, 0.1], [0.95, 0, 0], [0.99, 0, 0]])
    assert choose(ind, prev, 3) == ((2, 1), [(1, 1), (0, 1), (0, 2)])  # ties: the lower head
    assert choose(ind, prev, 10) == ((2, 1), [(1, 1), (0, 1), (0, 2), (0, 0), (1, 0), (1, 2)])
    first = np.zeros((4, 3))
    first[0, 2] = 1.0
    assert choose(first, prev, 3) == ((0, 2), [])  # in layer 0: nothing below


def test_weights_and_the_induction_score_on_a_worked_case():
    rows = [[0.0], [0.0, 0.0], [1.0, 0.0, 1.0], [0.0, 2.0, 0.0, 0.0]]
    w = weights(rows)
    assert w[1].tolist() == [0.5, 0.5, 0.0, 0.0] and np.allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    assert math.isclose(w[2, 0], math.e / (2 * math.e + 1), rel_tol=1e-15)
    # tokens a b a b: query 2 (a) targets key 1 (after the earlier a); query 3 (b) targets key 2
    ids = [7, 8, 7, 8]
    expected = (w[2, 1] + w[3, 2]) / 2
    assert math.isclose(induction_score(rows, ids), expected, rel_tol=1e-15)
    assert math.isclose(induction_score(rows, ids), induction(rows, ids), rel_tol=1e-14)


def test_drops_and_the_feeder():
    data = run_data(3)
    c = Copying(data)
    assert math.isclose(c.clean, induction(data["rows"]["clean"], data["ids"]), rel_tol=1e-13)
    for k, r in zip(c.keys, data["rows"]["keys"], strict=True):
        assert math.isclose(k, induction(r, data["ids"]), rel_tol=1e-13)
    assert c.drops == [c.clean - k for k in c.keys]
    assert c.feeder == int(np.argmax(c.drops))
