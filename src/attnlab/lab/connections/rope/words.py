"""The RoPE lab's sentences, each built beside its numbers with the claims it makes."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.rope.walk import SHIFT, RopeWalk
from attnlab.lab.said import said

SAME = 1e-9  # two scores this close are the same score: angles of thousands of radians round at ~1e-12


def offset_only(w: RopeWalk) -> dict:
    a, b = w.score(w.offset, 0), w.score(SHIFT + w.offset, SHIFT)
    gap = abs(a - b)
    same = "the same score up to rounding" if gap <= SAME else "different scores"
    return said(
        f"RoPE turns pair i of q and k by position × {w.base:,}^(−2i/{w.head_dim}). q at {w.offset:,} "
        "against k at "
        f"0 scores {fmt.rounded(a)}; q at {SHIFT + w.offset:,} against k at {SHIFT} scores {fmt.rounded(b)}: "
        f"{same} (they differ by {fmt.scientific(gap)}), because only the offset {w.offset:,} enters.",
        offset=w.offset,
        score=a,
        shifted=b,
        difference=gap,
        same=gap <= SAME,
    )


def past_training(w: RopeWalk) -> dict:
    trained, now = w.turns(w.train - 1)[-1], w.turns(w.offset)[-1]
    inside = w.offset <= w.train - 1
    where = "inside the range it turned in training" if inside else "further than it ever turned in training"
    return said(
        f"Over the training length of {w.train:,} positions the slowest pair turns {fmt.rounded(trained)} "
        f"turns; at offset {w.offset:,} it has turned {fmt.rounded(now)}, {where}.",
        train=w.train,
        trained_turns=trained,
        turns=now,
        inside=inside,
    )


def interpolation(w: RopeWalk) -> dict:
    s = w.factor
    scaled = w.offset / s
    plain, interp = w.score(w.offset, 0), w.score(w.offset, 0, s)
    inside = scaled <= w.train - 1
    return said(
        f"Position interpolation with s = {s} rotates offset {w.offset:,} as offset {fmt.rounded(scaled)} "
        "was, "
        f"{'inside' if inside else 'still past'} the training length (it covers offsets up to "
        f"{s * (w.train - 1):,}); the score is {fmt.rounded(interp)} instead of {fmt.rounded(plain)}.",
        factor=s,
        scaled_offset=scaled,
        inside=inside,
        score=interp,
        plain=plain,
        covers=s * (w.train - 1),
    )


def sentences(w: RopeWalk) -> list[dict]:
    return [offset_only(w), past_training(w), interpolation(w)]
