"""What changes: head ablation, pre- vs post-norm, and RoPE's offset invariance.

- ``ablation(walk)``: per head, the block with that head on (the other heads as
  the learner set them) against the same block with it off; the change of every
  output number (off − on) and its largest magnitude.
- ``norm_compare(walk)``: the same inputs with the other norm placement; for
  each tensor name the two walks share (same shape), which numbers differ by
  more than ``CHANGED`` (1e-12), and a sentence in the page's words saying so.
- ``rope(walk)``: each head's q and k before and after RoPE's rotation, and a
  demonstration that a rotated q·k depends only on the offset between the
  query's and the key's positions (head 1, q of C and k of B, moved together).
"""

from __future__ import annotations

import math

from attnlab.engine.single import ordered_sum
from attnlab.lab import numbers as fmt
from attnlab.lab.block import floats as bm
from attnlab.lab.block import view as block_view
from attnlab.lab.block import words
from attnlab.lab.block.data import BASE, LABELS, N_HEAD
from attnlab.lab.block.walk import Walk, walk
from attnlab.lab.said import said

CHANGED = words.CHANGED
DEMO_SHIFTS = (0, 1, 2, 5, 10)  # the same offset at these shifts; plus one other offset


def _rerun(w: Walk, **change) -> Walk:
    args = dict(x=w.x, weights=w.weights, norm=w.norm, positions=w.positions, heads_on=w.heads_on)
    args.update(change)
    return walk(args.pop("x"), args.pop("weights"), **args)


def _rounded(m: list[list[float]]) -> list[list[str]]:
    return [[fmt.rounded(v) for v in row] for row in m]


def ablation(w: Walk) -> list[dict]:
    """Return, per head, what the output loses when that head is switched off.

    The baseline is the walk with that head switched on, the other heads as the learner set
    them (``baseline_heads_on``); it is compared with the same walk with that head off. So a
    head the learner has already switched off is still measured against the block with it on,
    and "changes no output number" means max |off − on| <= ``CHANGED`` against the head on.
    ``change`` is off − on, per output number.
    """
    out = []
    for h in range(N_HEAD):
        with_h, without_h = list(w.heads_on), list(w.heads_on)
        with_h[h], without_h[h] = True, False
        base = w if w.heads_on[h] else _rerun(w, heads_on=tuple(with_h))
        other = _rerun(w, heads_on=tuple(without_h)).output
        change = [[b - a for a, b in zip(ra, rb)] for ra, rb in zip(base.output, other)]
        biggest = max(abs(v) for row in change for v in row)
        name = f"Head {h + 1}"
        out.append(
            {
                "head": h,
                "name": name,
                "on_now": w.heads_on[h],
                "baseline_heads_on": with_h,
                "baseline_output": base.output,
                "output": other,
                "output_display": _rounded(other),
                "change": change,
                "change_display": _rounded(change),
                "max_change": biggest,
                "max_change_display": fmt.rounded(biggest),
                "table_label": f"Output change without {name} (off − on)",
                "sentence": words.ablation_sentence(name, biggest, on_now=w.heads_on[h], baseline=with_h),
            }
        )
    return out


# Why the numbers move, by the placement switched to: what its first LayerNorm normalises and
# what its heads read (``norm_sentence``'s claims ``normalises`` and ``heads_read`` state both).
WHY = {
    "post": "Post-norm normalises the sum H + MHA(H) instead of H, so its heads read H itself, not LN₁(H).",
    "pre": "Pre-norm normalises H before the heads instead of the sum H + MHA(H), so its heads read LN₁(H), "
    "not H itself.",
}


def norm_sentence(w: Walk, other_norm: str, changed: dict[str, list[list[bool]]]) -> dict:
    """Say, in the page's words, which shared numbers move with the norms and why."""
    names = list(changed)  # computation order of this walk
    moved = [n for n in names if any(v for row in changed[n] for v in row)]
    same = [n for n in names if n not in moved]
    label = block_view.labels(w)
    first = moved[0] if moved else None
    from_first_on = bool(moved) and all(n in moved for n in names[names.index(first) :])
    shared = f"the {len(names)} tables both placements show"
    if not moved:
        what = f"no number of {shared}"
    elif from_first_on:
        what = f"every number from {label[first]} on ({len(moved)} of {shared})"
    else:
        what = f"{len(moved)} of {shared}, the first being {label[first]}"
    text = f"Switching to {other_norm}-norm changes {what}"
    if same and moved:
        text += f"; {_join([label[n] for n in same])} {'stays' if len(same) == 1 else 'stay'} the same"
    text += f". {WHY[other_norm]}"
    return said(
        text,
        other=other_norm,
        changed=moved,
        unchanged=same,
        first_changed=first,
        from_first_on=from_first_on,
        normalises={"pre": ["norm_1", "h"], "post": ["norm_1", "residual_1"]},
        heads_read={"pre": "norm_1.output", "post": "h"},
    )


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


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
    return {
        "norm": w.norm,
        "other": other_norm,
        "walk": o,
        "steps": other_steps,
        "output": o.output,
        "output_display": _rounded(o.output),
        "changed": changed,
        "summary": norm_sentence(w, other_norm, changed),
    }


def _dot(a, b) -> float:
    return ordered_sum(x * y for x, y in zip(a, b))


def _rotation_note(label, p, q, qr, k, kr, angle) -> dict:
    """What the picture shows for one token: q and k before and after the turn, and whether anything
    can be seen to move (claims ``position``, ``angle``, ``zero_q``, ``zero_k``, ``moves``)."""
    zero_q, zero_k = not any(q), not any(k)
    moves = angle != 0.0 and not (zero_q and zero_k)
    text = (
        f"{label} at position {p}: q = {fmt.vector(q)} turns to {fmt.vector(qr)}, k = {fmt.vector(k)} "
        f"turns to {fmt.vector(kr)}; both by angle {fmt.rounded(angle)} "
        f"{'radian' if fmt.rounded(angle) == '1' else 'radians'}"
    )
    if angle == 0.0:
        text += ": position 0 turns by nothing, so neither moves (dashed and solid coincide)."
    else:
        zero = [name for name, z in (("q", zero_q), ("k", zero_k)) if z]
        if zero:
            text += (
                f"; {' and '.join(zero)} {'is' if len(zero) == 1 else 'are'} zero, with no direction to "
                "turn"
            )
        text += " (dashed: before, solid: after)."
    return said(text, position=p, angle=angle, zero_q=zero_q, zero_k=zero_k, moves=moves)


def _first_moving(rotations: list[list[dict]]) -> dict:
    """The picture's first view: the first head and token whose q and k both turn by a non-zero angle
    (a later position, neither vector zero), so the default picture shows a rotation."""
    for h, rows in enumerate(rotations):
        for r in rows:
            if r["angle"] != 0.0 and any(r["q"]) and any(r["k"]):
                return {"head": h, "token": r["position"]}
    return {"head": 0, "token": len(rotations[0]) - 1}


def rope(w: Walk, shifts: tuple[int, ...] = DEMO_SHIFTS) -> dict:
    """Return RoPE's angles, the rotations per head and token, and the offset demonstration.

    The demonstration puts head 1's q of C and k of B at positions (2 + s, 1 + s) for each
    shift s in ``shifts`` (offset 1 every time), then at (2, 0) (offset 2).
    """
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
                    "option": f"{label} (position {p})",
                    "note": _rotation_note(label, p, q, qr, k, kr, bm.rope_angle(p, 0, len(q), BASE)),
                }
            )
        rotations.append(rows)
    q, k = t["head1.q"][2], t["head1.k"][1]  # C's query, B's key: offset 1 at positions (2, 1)
    pairs = []
    for p, r in [(2 + s, 1 + s) for s in shifts] + [(2, 0)]:
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
    shown = sorted({fmt.rounded(v) for v in same}, key=float)
    if spread == 0.0:
        score = f"score {shown[0]} every time (exactly equal)"
    elif len(shown) == 1:
        score = f"score {shown[0]} every time (within {fmt.precise(spread)}, float rounding)"
    else:
        score = (
            f"score {shown[0]} to {shown[-1]} (within {fmt.precise(spread)} of each other, float rounding)"
        )
    sentence = said(
        f"Head 1's q of C and k of B, rotated as if they sat at positions {where}: offset 1 every "
        f"time, {score}. At offset {other['offset']}, positions "
        f"({other['query_position']}, {other['key_position']}), the score is {other['display']}: "
        "RoPE's score depends only on the offset.",
        offset=1,
        positions=[[pp["query_position"], pp["key_position"]] for pp in pairs if pp["offset"] == 1],
        score=same[0],
        shown=shown,
        spread=spread,
        exact=spread == 0.0,
        other={
            "offset": other["offset"],
            "positions": [other["query_position"], other["key_position"]],
            "score": other["score"],
        },
    )
    if active:
        status = said(
            "RoPE is on: each head's q and k are rotated by their token's position before the scores.",
            active=True,
        )
    else:
        status = said(
            "RoPE is off in the walk above; the picture shows what it would do to these q and k.",
            active=False,
        )
    angles = [bm.rope_angle(p, 0, 2, BASE) for p in range(len(LABELS))]
    return {
        "active": active,
        "positions": list(range(len(LABELS))),
        "angles": angles,
        "angles_display": [fmt.rounded(a) for a in angles],
        "rotations": rotations,
        "shown": _first_moving(rotations),  # the head and token the picture opens on
        "status": status,
        "heads": [f"Head {h + 1}" for h in range(N_HEAD)],
        "demo": {
            "caption": "C's q and B's k of head 1, placed at other positions",
            "columns": ["Query position", "Key position", "Offset", "Score"],
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
