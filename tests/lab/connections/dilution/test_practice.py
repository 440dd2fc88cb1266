"""The dilution lab's challenges."""

from __future__ import annotations

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.dilution import CONTROLS, LAB
from attnlab.lab.connections.dilution.walk import walk


def check(cid: str, response=None, **given) -> dict:
    return LAB.check(cid, read(CONTROLS, given, "inputs"), response)


def test_below_10_is_the_fewest_keys():
    w = walk(keys=2, d_k=64, scaling="on", seed=0)
    fewest = next(n for n in range(3, 4097) if w.largest(n) < 0.1 <= w.largest(n - 1))
    assert check("below-10", keys=fewest)["met"]
    assert "add keys" in check("below-10", keys=2)["words"]["text"]


def test_scaling_off_is_sharper_here():
    met = check("scaling", "sharper", d_k=64, keys=64)
    assert met["met"] and met["words"]["claims"]["largest_off"] > met["words"]["claims"]["largest_on"]
    assert not check("scaling", "same", d_k=64)["met"]
    assert not check("scaling", "sharper", d_k=1)["met"]


def test_the_needle_is_read_from_the_traces():
    from synthetic import needle_measured

    values = read(CONTROLS, {"needle": "on"}, "inputs")
    kept = LAB.check("needle", values, "keeps", needle_measured(2, boost=8.0))
    assert kept["met"] and kept["words"]["claims"]["right"] == "keeps"
    diluted = LAB.check("needle", values, "keeps", needle_measured(2, boost=0.0))
    assert not diluted["met"] and diluted["words"]["claims"]["right"] == "dilutes"
    assert not LAB.check("needle", values, "keeps", {})["met"]


def test_add_keys_only_where_more_keys_get_under_10():
    """Scaling off at d_k = 64 (seed 0): no n up to 4,096 gets the largest share under 10%, so the
    feedback does not send the learner to add keys; with the scaling on it does."""
    off = walk(keys=64, d_k=64, scaling="off", seed=0)
    assert min(off.largest(n) for n in range(64, 4097, 7)) >= 0.1
    stuck = check("below-10", keys=64, d_k=64, scaling="off")["words"]
    assert not stuck["claims"]["reachable"] and "add keys" not in stuck["text"]
    assert stuck["text"].endswith("no number of keys up to 4,096 brings it under 10% with these inputs: "
                                  "turn the √d_k scaling on.")
    on = check("below-10", keys=2, d_k=64, scaling="on")["words"]
    assert on["claims"]["reachable"] and on["text"].endswith("add keys.")


def test_every_n_at_once_is_the_lab_s_largest_share():
    w = walk(keys=2, d_k=16, scaling="off", seed=3)
    every = w.largest_by_n()
    assert every.shape == (4096,) and every[0] == 1.0
    for n in (2, 3, 50, 777, 4096):
        assert abs(every[n - 1] - w.largest(n)) <= 1e-13 * w.largest(n)
