"""What changes: head ablation, pre- vs post-norm, and RoPE's offset invariance.

- ``ablation(walk)``: the block rerun with each head switched off in turn; the
  change of every output number (off − on) and its largest magnitude.
- ``norm_compare(walk)``: the same inputs with the other norm placement; for
  each tensor name the two walks share (same shape), which numbers differ by
  more than ``CHANGED`` (1e-12).
- ``rope(walk)``: each head's q and k before and after RoPE's rotation, and a
  demonstration that a rotated q·k depends only on the offset between the
  query's and the key's positions (head 1, q of C and k of B, moved together).
"""

from __future__ import annotations

import math

from attnlab.engine.single import ordered_sum
from attnlab.lab import block_math as bm
from attnlab.lab import block_words as words
from attnlab.lab import numbers as fmt
from attnlab.lab.block_data import BASE, LABELS, N_HEAD
from attnlab.lab.block_walk import Walk, walk

CHANGED = 1e-12
DEMO_SHIFTS = (0, 1, 2, 5, 10)  # the same offset at these shifts; plus one other offset


def _rerun(w: Walk, **change) -> Walk:
    args = dict(x=w.x, weights=w.weights, norm=w.norm, positions=w.positions, heads_on=w.heads_on)
    args.update(change)
    return walk(args.pop("x"), args.pop("weights"), **args)


def _rounded(m: list[list[float]]) -> list[list[str]]:
    return [[fmt.rounded(v) for v in row] for row in m]


def ablation(w: Walk) -> list[dict]:
    """Return, per head, the output with that head switched off and what changes."""
    out = []
    for h in range(N_HEAD):
        on = list(w.heads_on)
        on[h] = False
        other = _rerun(w, heads_on=tuple(on)).output
        change = [[b - a for a, b in zip(ra, rb)] for ra, rb in zip(w.output, other)]
        biggest = max(abs(v) for row in change for v in row)
        name = f"Head {h + 1}"
        out.append(
            {
                "head": h,
                "name": name,
                "output": other,
                "output_display": _rounded(other),
                "change": change,
                "change_display": _rounded(change),
                "max_change": biggest,
                "max_change_display": fmt.rounded(biggest),
                "sentence": words.ablation_sentence(name, biggest),
            }
        )
    return out


def norm_compare(w: Walk, other_steps: list[dict]) -> dict:
    """Return the other norm placement's walk and which shared numbers change."""
    other_norm = "post" if w.norm == "pre" else "pre"
    o = _rerun(w, norm=other_norm)
    changed = {}
    for name, a in w.tensors.items():
        b = o.tensors.get(name)
        if b is None or len(a) != len(b) or any(len(ra) != len(rb) for ra, rb in zip(a, b)):
            continue
        changed[name] = [[abs(x - y) > CHANGED for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]
    same = [n for n, m in changed.items() if not any(v for row in m for v in row)]
    moved = [n for n in changed if n not in same]
    summary = (
        f"Switching to {other_norm}-norm changes {', '.join(moved) or 'nothing'}"
        f"{'; unchanged: ' + ', '.join(same) if same else ''}."
    )
    return {
        "norm": w.norm,
        "other": other_norm,
        "walk": o,
        "steps": other_steps,
        "output": o.output,
        "output_display": _rounded(o.output),
        "changed": changed,
        "summary": summary,
    }


def _dot(a, b) -> float:
    return ordered_sum(x * y for x, y in zip(a, b))


def rope(w: Walk) -> dict:
    """Return RoPE's angles, the rotations per head and token, and the offset demonstration."""
    t = w.tensors
    active = w.positions == "rope"
    rotations = []
    for h in range(N_HEAD):
        name = f"head{h + 1}"
        rows = []
        for p, label in enumerate(LABELS):
            q, k = t[f"{name}.q"][p], t[f"{name}.k"][p]
            qr, kr = bm.rope_rotate(q, p, BASE), bm.rope_rotate(k, p, BASE)
            rows.append(
                {
                    "token": label,
                    "position": p,
                    "angle": bm.rope_angle(p, 0, len(q), BASE),
                    "q": q,
                    "q_rotated": qr,
                    "k": k,
                    "k_rotated": kr,
                    "display": {
                        n: fmt.vector(v)
                        for n, v in (("q", q), ("q_rotated", qr), ("k", k), ("k_rotated", kr))
                    },
                }
            )
        rotations.append(rows)
    q, k = t["head1.q"][2], t["head1.k"][1]  # C's query, B's key: offset 1 at positions (2, 1)
    pairs = []
    for p, r in [(2 + s, 1 + s) for s in DEMO_SHIFTS] + [(2, 0)]:
        score = _dot(bm.rope_rotate(q, p, BASE), bm.rope_rotate(k, r, BASE)) / math.sqrt(len(q))
        pairs.append(
            {
                "query_position": p,
                "key_position": r,
                "offset": p - r,
                "score": score,
                "display": fmt.rounded(score),
            }
        )
    same = [pp["score"] for pp in pairs if pp["offset"] == 1]
    spread = max(same) - min(same)
    other = pairs[-1]
    where = ", ".join(f"({pp['query_position']}, {pp['key_position']})" for pp in pairs if pp["offset"] == 1)
    how = "exactly equal" if spread == 0.0 else f"within {fmt.precise(spread)}, float rounding"
    sentence = (
        f"Head 1's q of C and k of B, rotated as if they sat at positions {where}: offset 1 every "
        f"time, score {fmt.rounded(same[0])} every time ({how}). At offset {other['offset']}, positions "
        f"({other['query_position']}, {other['key_position']}), the score is {other['display']}: "
        "RoPE's score depends only on the offset."
    )
    angles = [bm.rope_angle(p, 0, 2, BASE) for p in range(len(LABELS))]
    return {
        "active": active,
        "positions": list(range(len(LABELS))),
        "angles": angles,
        "angles_display": [fmt.rounded(a) for a in angles],
        "rotations": rotations,
        "demo": {
            "head": 0,
            "query": "C",
            "key": "B",
            "q": q,
            "k": k,
            "pairs": pairs,
            "same_offset_max_difference": spread,
            "sentence": sentence,
        },
    }
