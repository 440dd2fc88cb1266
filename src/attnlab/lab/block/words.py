"""The block walk's words: step titles and captions, what each head is, the summary, the fixed labels.

Every sentence is generated from the walk's numbers (a row's shares through
``lab.numbers.percents``, adding up to 100), so the words and the page always agree. Rows are
tokens A, B, C; with the causal mask row A can only attend to itself, so a
head's kind is read from rows B and C, by the real models' definitions
(``lab.realmodel.kinds``: one definition of previous-token, self, first-token,
broad and focused). ``section_words`` is every fixed heading, label and hint
the section, the widget and the terminal show: the browser writes none.

A shown sentence is ``lab.said.said(text, **claims)``: ``{"text": ..., "claims": {...}}``,
the facts it asserts beside it (``{"unchanged": "output", "max_change": 0.0}``), with
tensors named by their JSON names; ``tests/lab/block/test_claims.py`` checks every
claim against the walk's numbers. Labels and headings are plain strings. The scale
is a multiplier everywhere: scores are q·k × 1/√2.
"""

from __future__ import annotations

import math

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.block.data import D_HEAD, D_MODEL, LABELS, N_HEAD, N_TOKENS
from attnlab.lab.block.walk import causal_row
from attnlab.lab.realmodel import kinds
from attnlab.lab.said import said

CHANGED = 1e-12  # a number "changes" when it moves by more than this

STEP_TITLES = {
    "embed": "Embed",
    "project": "Project",
    "attend-1": "Attend: head 1",
    "attend-2": "Attend: head 2",
    "combine": "Combine",
    "add-norm-1": "Add & Norm",
    "mlp": "MLP",
    "add-norm-2": "Add & Norm",
}
STEP_IDS = tuple(STEP_TITLES)

# The block's two switches, as the page labels their choices: (value, label).
CHOICES = {
    "norm": [
        ["pre", "Pre-norm: H' = H + MHA(LN₁(H)) (GPT-2, Llama)"],
        ["post", "Post-norm: H' = LN₁(H + MHA(H)) (the original Transformer, BERT)"],
    ],
    "positions": [
        ["none", "None"],
        ["sinusoidal", "Sinusoidal (added to X)"],
        ["rope", "RoPE (rotates q and k)"],
    ],
}


SCALE_TEXT = "1/√2"  # the block's scale: q·k is multiplied by 1/√d_k, d_k = 2
SCALE = 1.0 / math.sqrt(D_HEAD)


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def _coords(cols: list[int]) -> str:
    if not cols:
        return "no coordinate"
    word = "coordinate" if len(cols) == 1 else "coordinates"
    return f"{word} {_join([str(c + 1) for c in cols])}"


def writes_into(w_o: list[list[float]]) -> list[list[int]]:
    """For each head, the output coordinates its rows of W_O reach (a nonzero entry)."""
    out = []
    for h in range(N_HEAD):
        rows = w_o[h * D_HEAD : (h + 1) * D_HEAD]
        out.append([j for j in range(D_MODEL) if any(r[j] != 0.0 for r in rows)])
    return out


def caption(step: str, *, norm: str, positions: str, heads_on=(True, True), w_o=None) -> dict:
    """Return the caption of ``step`` for this block, with its claims (see :func:`said`)."""
    pre = norm == "pre"
    if step == "embed":
        if positions == "sinusoidal":
            return said(
                "Each token's row of X gets the sinusoidal table added: H = X + PE. Row p holds "
                "sin and cos of p at two frequencies (1 and 1/100), so the same token differs by position.",
                sum=[["h", "x", "pe"]],
                sinusoidal={"tensor": "pe", "frequencies": [1.0, 0.01]},
            )
        if positions == "rope":
            return said(
                "H = X: with RoPE nothing is added here; positions enter later, by rotating "
                "each head's q and k by the token's position.",
                equal=[["h", "x"]],
            )
        return said(
            "H = X: three tokens, four numbers each, given, not learned. No position information.",
            equal=[["h", "x"]],
        )
    if step == "project":
        src = "LN₁(H), the normalised rows," if pre else "H itself (post-norm normalises later)"
        text = f"Each head multiplies {src} by its own W_Q, W_K and W_V: three 2-D points per token."
        claims: dict = {"projects": "norm_1.output" if pre else "h", "shape": [N_TOKENS, D_HEAD]}
        if pre:
            text = (
                "LayerNorm first: subtract each row's mean, divide by √(variance + eps), scale by γ "
                "and shift by β. " + text
            )
            claims["layer_norm"] = [["norm_1", "h"]]
        if positions == "rope":
            text += " RoPE then turns q and k of token p by p radians."
            claims["rotated_by_position"] = True
        return said(text, **claims)
    if step.startswith("attend-"):
        h = step[-1]
        return said(
            f"Head {h} runs the single-head calculation on its own q, k, v: Match (q·k × {SCALE_TEXT}), "
            "Share (softmax over the tokens the causal mask allows), Mix (the weighted values).",
            head=int(h) - 1,
            scale=SCALE,
            causal=True,
        )
    if step == "combine":
        reach = writes_into(w_o) if w_o is not None else [list(range(D_MODEL))] * N_HEAD
        parts = [f"head {h + 1} writes into {_coords(cols)}" for h, cols in enumerate(reach)]
        text = (
            "The heads' outputs are put side by side (Concat) and multiplied by W_O: "
            f"{'; '.join(parts)} (where its rows of W_O are not zero)."
        )
        off = [h for h, on in enumerate(heads_on) if not on]
        if off:
            names = _join([f"Head {h + 1}" for h in off])
            verb, its = ("is", "its") if len(off) == 1 else ("are", "their")
            text += f" {names} {verb} switched off, so {its} columns of Concat are zeros."
        return said(text, writes_into=reach, zeros=off)
    if step == "add-norm-1":
        if pre:
            return said(
                "Add: the residual H' = H + MHA(LN₁(H)) keeps the input and adds what attention "
                "found. Norm: LN₂(H') is what the MLP reads; H' itself goes on unnormalised.",
                sum=[["residual_1", "h", "attn"]],
                layer_norm=[["norm_2", "residual_1"]],
                mlp_reads="norm_2.output",
            )
        return said(
            "Add & Norm: H' = LN₁(H + MHA(H)). Post-norm normalises the sum itself.",
            sum=[["residual_1", "h", "attn"]],
            layer_norm=[["norm_1", "residual_1"]],
            mlp_reads="norm_1.output",
        )
    if step == "mlp":
        return said(
            "Each token alone goes through W₁ (4 → 8), the exact GELU, x·Φ(x), and W₂ (8 → 4). "
            "No token looks at another here.",
            gelu="exact",
            row_wise=True,
        )
    if step == "add-norm-2":
        if pre:
            return said(
                "Add: output = H' + MLP(LN₂(H')). A pre-norm block ends on the residual, "
                "not on a norm (a stack adds a final norm after its last block).",
                sum=[["output", "residual_1", "mlp.output"]],
            )
        return said(
            "Add & Norm: output = LN₂(H' + MLP(H')). A post-norm block ends on a norm: each row of "
            "the sum is centred, divided by √(σ² + eps), scaled by γ₂ and shifted by β₂.",
            sum=[["residual_2", "norm_1.output", "mlp.output"]],
            layer_norm=[["norm_2", "residual_2"]],
            equal=[["output", "norm_2.output"]],
        )
    raise ValueError(f"unknown step {step!r}")


def _argmax(row: list[float]) -> int:
    best = 0
    for i, w in enumerate(row):
        if w > row[best]:
            best = i
    return best


def head_kind(weights: list[list[float]]) -> dict:
    """Return ``{"kind", "scores"}`` for a head's (3 x 3) causal weights, by the real models' definitions.

    The scores and the rule are ``lab.realmodel.kinds``' (previous-token, first-token, self,
    breadth; thresholds stated there); induction and duplicate-token are ``None``: the tokens
    A, B, C repeat none. Rows B and C are the queries scored (A can only see itself).
    """
    allowed = np.array([causal_row(r) for r in range(N_TOKENS)])
    ids = list(range(N_TOKENS))  # A, B and C are three different tokens
    raw = kinds.head_scores(np.array(weights, dtype=np.float64), allowed, ids)
    scores = {k: None if v is None else float(v) for k, v in raw.items()}
    return {"kind": kinds.kind_of(scores), "scores": scores}


def _kind_words(kind: str, score: float, threshold: float) -> str:
    """What makes this block's head ``kind``: its score over rows B and C, as the page words it."""
    p, at = fmt.percent(score), fmt.percent(threshold)
    return {
        "previous-token": f"on average {p} of B's and C's attention goes to the token just before "
        f"(named at {at} or more)",
        "self": f"on average {p} of B's and C's attention stays on the token itself (named at {at} or more)",
        "first-token": f"on average {p} of B's and C's attention goes to the first token, A (named at "
        f"{at} or more when no pattern is)",
        "broad": "no pattern and not the first token reaches its threshold, and B's and C's attention "
        f"is spread almost evenly (breadth {fmt.rounded(score, 2)}, named at "
        f"{fmt.rounded(threshold, 2)} or more)",
        "focused": "no pattern and not the first token reaches its threshold, and B's and C's attention "
        f"sits on a few tokens (breadth {fmt.rounded(score, 2)}, under {fmt.rounded(threshold, 2)})",
    }[kind]


def head_sentence(name: str, weights: list[list[float]], on: bool) -> dict:
    """Say what head ``name`` is, from its (3 x 3) causal weights: its kind, then each row's largest share.

    The kind is :func:`head_kind`'s (``lab.realmodel.kinds``' definitions); ties in a row's
    largest share go to the first token.
    """
    named = head_kind(weights)
    kind, scores = named["kind"], named["scores"]
    score = scores[kinds.SCORE_OF[kind]]
    threshold = kinds.THRESHOLDS.get(kind, kinds.THRESHOLDS["broad"])
    parts, tops = [], []
    for r in range(1, len(weights)):
        t = _argmax(weights[r][: r + 1])
        shown = fmt.percents(weights[r])[t]  # as the row's shares show it: the row adds up to 100
        parts.append(f"{LABELS[r]} gives {LABELS[t]} {shown}")
        tops.append({"row": r, "top": t, "share": weights[r][t], "shown": shown})
    text = (
        f"{name} is {kinds.kind_phrase(kind)}: {_kind_words(kind, score, threshold)}. "
        f"Its largest shares: {_join(parts)} (A can only see itself)."
    )
    if not on:
        text += " It is switched off, so it writes zeros before W_O."
    return said(
        text, kind=kind, score=score, threshold=threshold, scores=scores, tops=tops, on=on
    )


def _amount(x: float) -> str:
    """A change as the page rounds it, at full precision when it would round to 0."""
    text = fmt.rounded(x)
    return fmt.precise(x) if text == "0" else text


def ablation_sentence(name: str, max_change: float, *, on_now: bool, baseline: list[bool]) -> dict:
    """Say what the output loses when head ``name`` is switched off, against the block with it on.

    ``baseline`` is the walk the change is measured from: this head on, the other heads as
    the learner set them. ``on_now`` says whether the learner's block has the head on.
    """
    unchanged = max_change <= CHANGED
    if on_now:
        lead = f"Switching {name} off"
    else:
        lead = (
            f"{name} is off now; measured against the block with {name} on "
            "(the other heads as you set them), switching it off"
        )
    if unchanged:
        text = f"{lead} changes no output number: the block does not use it."
    else:
        text = (
            f"{lead} changes the output by up to {_amount(max_change)} "
            "(the largest change of any output number)."
        )
    return said(
        text,
        unchanged="output" if unchanged else None,
        max_change=max_change,
        baseline_heads_on=list(baseline),
    )


def summary(norm: str, positions: str, heads: list[dict], output_rows: list[str]) -> dict:
    """One sentence for the whole walk: placement, positions, each head's kind (or off), the output."""
    placement = "Pre-norm" if norm == "pre" else "Post-norm"
    pos = {"none": "no positions", "sinusoidal": "sinusoidal positions", "rope": "RoPE"}[positions]
    named = "; ".join(f"{h['name']}: {kinds.SHORT[h['kind']] if h['on'] else 'off'}" for h in heads)
    return said(
        f"{placement} block, {pos} ({named}); output rows {_join(list(output_rows))}.",
        norm=norm,
        positions=positions,
        kinds=[h["kind"] for h in heads],
        heads_on=[h["on"] for h in heads],
        output_rows=list(output_rows),
    )


def step_heading(n: int, total: int, title: str) -> str:
    """The stepper's heading: "Step 2 of 8 · Project"."""
    return f"Step {n + 1} of {total} · {title}"


def step_link(n: int, title: str) -> str:
    """A step in the list of steps: "2 · Project"."""
    return f"{n + 1} · {title}"


PLAYBACK_STEP_S = 4.0  # seconds per step of the captioned playback


def playback(steps: list[dict]) -> dict:
    """Return the captioned playback: one timed caption per step, revealing its tensors in turn.

    Each caption covers ``[start_s, end_s)``; within it the page reveals ``tensors`` one after
    another (``reveal_s`` apart). With reduced motion the page shows each caption as a still
    step, every tensor at once: nothing here depends on animation.
    """
    captions = []
    for n, step in enumerate(steps):
        names = [t["name"] for t in step["tensors"]]
        captions.append(
            {
                "step": step["id"],
                "title": step["title"],
                "caption": step["caption"],
                "shown": f"{n + 1} of {len(steps)} · {step['title']}: {step['caption']['text']}",
                "start_s": n * PLAYBACK_STEP_S,
                "end_s": (n + 1) * PLAYBACK_STEP_S,
                "tensors": names,
                "reveal_s": PLAYBACK_STEP_S / max(len(names), 1),
            }
        )
    return {"duration_s": len(steps) * PLAYBACK_STEP_S, "captions": captions}


# --- the section's fixed words: what the page, the widget and the terminal label --------

OFFLINE = "The lab server cannot be reached; the block keeps its last numbers."
WIDGET = {  # the Jupyter widget's heading, its snapshot page's title and its two menus
    "title": "One transformer block, step by step",
    "page_title": "attnlab · one transformer block",
    "norm": "Norm placement",
    "positions": "Positions",
}
EXPORTS = (  # (kind, button, file): the walk as a download
    ("ipynb", "Export the block as a Jupyter notebook", "attnlab-block.ipynb"),
    ("markdown", "Export the block as Markdown", "attnlab-block.md"),
)


def reset_sentence(example: dict) -> dict:
    """What "Reset" restores, from the given example (``lab.block.data.example``)."""
    heads = "both heads on" if all(example["heads_on"]) else "the given heads on"
    placement = {"pre": "pre-norm", "post": "post-norm"}[example["norm"]]
    positions = {"none": "no positions", "sinusoidal": "sinusoidal positions", "rope": "RoPE"}[
        example["positions"]
    ]
    return said(
        f"Reset restores the given X and weights, {placement}, {positions} and {heads}.",
        norm=example["norm"],
        positions=example["positions"],
        heads_on=list(example["heads_on"]),
        given=["x", "weights"],
    )


def section_words(example: dict, practice_title: str) -> dict:
    """Every fixed label, heading and hint of the block section (and the widget), by the part that shows it.

    Two depend on numbers and carry claims: the playback's pace (``play.moving``: seconds per
    step, :data:`PLAYBACK_STEP_S`) and the comparison's tolerance (``norm_compare.hint``:
    :data:`CHANGED`); ``edit.reset`` states the given example's options.
    """
    step_s = fmt.rounded(PLAYBACK_STEP_S)
    return {
        "offline": OFFLINE,
        "parts": {
            "heads": {
                "title": "Two heads, side by side",
                "intro": [
                    "Each head is one single-head attention on its own q, k and v. "
                    "Switch a head off to see what the output loses."
                ],
            },
            "walk": {
                "title": "The walk, every number shown",
                "intro": [
                    "Focus or hover a number of a product to see its ordered sum. "
                    "Arrow keys move between the numbers of a table."
                ],
            },
            "norm": {"title": "Pre-norm or post-norm, side by side", "intro": []},
            "rope": {"title": "Positions: RoPE is a rotation in the plane", "intro": []},
            "edit": {"title": "Edit the weights", "intro": []},
            "play": {"title": "Watch the block", "intro": []},
            "practice": {"title": practice_title, "intro": []},
            "python": {"title": "The same block in Python, and export", "intro": []},
        },
        "switches": {"norm": "Where the norms sit", "positions": "Positions"},
        "walk": {
            "steps_label": "Steps of the block",
            "previous": "Previous step",
            "next": "Next step",
            "keys": "Or use the Left and Right arrow keys here.",
        },
        "heads": {"open": "Open a row in the explorer:"},
        "norm_compare": {
            "hint": said(
                "Cells with a solid amber border change when the norms move; the rest are equal "
                f"within {fmt.precise(CHANGED)}. The step follows the stepper above.",
                tolerance=CHANGED,
            ),
            "changed_cell": "(changes with the other norm placement)",
            "no_step": "No such step here.",
        },
        "rope": {
            "head": "Head",
            "token": "Token",
            "vectors": {"q": "q", "q_rotated": "q rotated", "k": "k", "k_rotated": "k rotated"},
        },
        "edit": {
            "pick": "Matrix to edit",
            "reset": "Reset the block",
            "reset_hint": reset_sentence(example),
        },
        "play": {
            "diagram": "The block as boxes, one per step; the current step is outlined",
            "play": "Play",
            "pause": "Pause",
            "previous": "Previous step",
            "next": "Next step",
            "moving": said(
                f"Play moves through the steps every {step_s} seconds; Previous and Next step by hand.",
                step_s=PLAYBACK_STEP_S,
            ),
            "reduced": "Reduced motion is on, so the playback is shown as steps, each a still picture.",
        },
        "python": {
            "summary": "Read the whole block in Python",
            "note": "NumPy-free Python with ordered sums: it prints the numbers of this walk bit for bit.",
            "code_label": "Generated Python program for the block",
            "exports": [
                {"kind": kind, "label": label, "file": file, "done": f"Downloaded {file}."}
                for kind, label, file in EXPORTS
            ],
            "unreachable": "The lab server cannot be reached; nothing was exported.",
        },
        "widget": dict(WIDGET),
    }
