"""Ablation, the pre/post comparison, RoPE's offset invariance and the heads' words."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlab.lab.block import compare as block_compare
from attnlab.lab.block.data import given_weights
from attnlab.lab.block.walk import walk
from attnlab.lab.block.words import head_kind, head_sentence
from attnlab.lab.realmodel.kinds import kind_phrase


def random_weights(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    w = given_weights()
    for h in w["heads"]:
        for n in ("w_q", "w_k"):
            h[n] = rng.normal(size=(4, 2)).tolist()
    return w


@pytest.mark.parametrize("seed", range(5))
def test_rope_scores_depend_only_on_the_offset(seed):
    demo = block_compare.rope(walk(weights=random_weights(seed), positions="rope"))["demo"]
    same = [p["score"] for p in demo["pairs"] if p["offset"] == 1]
    assert demo["same_offset_max_difference"] == max(same) - min(same) <= 1e-12
    q, k = demo["q"], demo["k"]
    # the rotated dot product is |q||k|cos(angle between them + offset): computed independently here
    angle = math.atan2(k[1], k[0]) - math.atan2(q[1], q[0]) - 1.0
    want = math.hypot(*q) * math.hypot(*k) * math.cos(angle) / math.sqrt(2)
    assert abs(same[0] - want) <= 1e-12


def test_rope_rotations_turn_each_token_by_its_position():
    rope = block_compare.rope(walk(positions="rope"))
    for head in rope["rotations"]:
        for p, row in enumerate(head):
            assert row["angle"] == float(p)
            assert math.isclose(math.hypot(*row["q_rotated"]), math.hypot(*row["q"]), abs_tol=1e-12)


def test_the_rope_picture_opens_on_a_vector_that_turns():
    """The default block's head 1 has q = [0, 0] at A (position 0, angle 0): the picture must not open
    there, "rotating" nothing by angle 0. It opens on the first head and token whose q and k are
    both non-zero and turn by a non-zero angle: head 1's B, by 1 radian."""
    rope = block_compare.rope(walk(positions="rope"))
    first = rope["rotations"][0][0]
    assert first["q"] == [0.0, 0.0] and first["angle"] == 0.0
    assert first["note"]["claims"]["moves"] is False and first["note"]["claims"]["zero_q"] is True
    assert "position 0 turns by nothing, so neither moves" in first["note"]["text"]
    assert rope["shown"] == {"head": 0, "token": 1}
    shown = rope["rotations"][0][1]
    assert shown["angle"] == 1.0 and any(shown["q"]) and any(shown["k"]) and shown["q_rotated"] != shown["q"]
    assert shown["note"]["claims"]["moves"] is True
    assert shown["note"]["text"].startswith("B at position 1: q = [1, -1] turns to [1.382, 0.301]")
    assert "by angle 1 radian (dashed: before, solid: after)." in shown["note"]["text"]


@pytest.mark.parametrize("seed", range(5))
def test_the_rope_pictures_first_view_always_turns_when_anything_can(seed):
    rope = block_compare.rope(walk(weights=random_weights(seed), positions="rope"))
    h, t = rope["shown"]["head"], rope["shown"]["token"]
    row = rope["rotations"][h][t]
    candidates = [r for rows in rope["rotations"] for r in rows if r["angle"] and any(r["q"]) and any(r["k"])]
    assert (row["angle"] != 0 and any(row["q"]) and any(row["k"])) == bool(candidates)
    for rows in rope["rotations"]:
        for r in rows:
            c = r["note"]["claims"]
            assert c["zero_q"] == (not any(r["q"])) and c["zero_k"] == (not any(r["k"]))
            assert c["moves"] == (r["angle"] != 0 and not (c["zero_q"] and c["zero_k"]))


def test_ablation_is_the_walk_with_that_head_off():
    w = walk()
    for h, entry in enumerate(block_compare.ablation(w)):
        on = [True, True]
        on[h] = False
        assert entry["output"] == walk(heads_on=tuple(on)).output
        assert entry["max_change"] == max(abs(v) for row in entry["change"] for v in row) > 0.5


def test_norm_compare_marks_exactly_the_numbers_that_differ():
    w = walk(norm="post")
    cmp = block_compare.norm_compare(w, [])
    assert cmp["other"] == "pre" and cmp["walk"].norm == "pre"
    assert cmp["changed"]["h"] == [[False] * 4] * 3
    assert all(all(row) for row in cmp["changed"]["output"])
    said = cmp["summary"]
    assert "output" in said["claims"]["changed"] and said["claims"]["unchanged"] == ["x", "h"]
    assert said["text"].startswith("Switching to pre-norm changes every number from ")
    assert "; X and H stay the same. Pre-norm normalises H before the heads" in said["text"]
    assert said["text"].endswith("so its heads read LN₁(H), not H itself.")  # what changed, and why


@pytest.mark.parametrize(
    "weights,kind",
    [
        ([[1, 0, 0], [0.9, 0.1, 0], [0.1, 0.8, 0.1]], "previous-token"),  # previous (0.9 + 0.8) / 2
        ([[1, 0, 0], [0.2, 0.8, 0], [0.1, 0.1, 0.8]], "self"),
        ([[1, 0, 0], [0.9, 0.1, 0], [0.7, 0.2, 0.1]], "previous-token"),  # 0.55: a pattern before the sink
        ([[1, 0, 0], [0.6, 0.4, 0], [0.7, 0.2, 0.1]], "first-token"),  # first (0.6 + 0.7) / 2
        ([[1, 0, 0], [0.55, 0.45, 0], [0.3, 0.35, 0.35]], "broad"),
        ([[1, 0, 0], [0.9, 0.1, 0], [0.09, 0.02, 0.89]], "focused"),
    ],
)
def test_head_kind_and_sentence(weights, kind):
    """The real models' definitions (lab.realmodel.kinds), read on rows B and C."""
    assert head_kind(weights)["kind"] == kind
    text = head_sentence("Head 2", weights, on=False)["text"]
    assert text.startswith(f"Head 2 is {kind_phrase(kind)}: ") and text.endswith("writes zeros before W_O.")


@pytest.mark.parametrize("heads_on", [(False, True), (True, False), (False, False)])
def test_ablation_compares_with_the_head_on_whatever_the_toggles(heads_on):
    """Head h's ablation: the walk with h on (others as set) against the same walk with h off."""
    for h, entry in enumerate(block_compare.ablation(walk(heads_on=heads_on))):
        with_h, without_h = list(heads_on), list(heads_on)
        with_h[h], without_h[h] = True, False
        on, off = walk(heads_on=tuple(with_h)).output, walk(heads_on=tuple(without_h)).output
        assert entry["output"] == off
        assert entry["change"] == [[b - a for a, b in zip(ra, rb)] for ra, rb in zip(on, off)]
        assert entry["max_change"] > 0.5  # both given heads matter, on or off now
        assert entry["baseline_heads_on"] == with_h
        assert "changes no output number" not in entry["sentence"]["text"]
        assert entry["sentence"]["claims"]["unchanged"] is None
