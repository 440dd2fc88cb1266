"""The block walk's words: step titles and captions, what each head does, the summary.

Every sentence is generated from the walk's numbers (shares through
``lab.numbers.percent``), so the words and the page always agree. Rows are
tokens A, B, C; with the causal mask row A can only attend to itself, so a
head's pattern is read from rows B and C.
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.block_data import LABELS

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


def caption(step: str, *, norm: str, positions: str) -> str:
    """Return the caption of ``step`` for this norm placement and position scheme."""
    pre = norm == "pre"
    if step == "embed":
        if positions == "sinusoidal":
            return (
                "Each token's row of X gets the sinusoidal table added: H = X + PE. Row p holds "
                "sin and cos of p at two frequencies, so the same token differs by position."
            )
        if positions == "rope":
            return (
                "H = X: with RoPE nothing is added here; positions enter later, by rotating "
                "each head's q and k by the token's position."
            )
        return "H = X: three tokens, four numbers each, given, not learned. No position information."
    if step == "project":
        src = "LN₁(H), the normalised rows," if pre else "H itself (post-norm normalises later)"
        text = f"Each head multiplies {src} by its own W_Q, W_K and W_V: three 2-D points per token."
        if pre:
            text = (
                "LayerNorm first: subtract each row's mean, divide by √(variance + eps), scale by γ "
                "and shift by β. " + text
            )
        if positions == "rope":
            text += " RoPE then turns q and k of token p by p radians."
        return text
    if step.startswith("attend-"):
        h = step[-1]
        return (
            f"Head {h} runs the single-head calculation on its own q, k, v: Match (q·k/√2), "
            "Share (softmax over the tokens the causal mask allows), Mix (the weighted values)."
        )
    if step == "combine":
        return (
            "The heads' outputs are put side by side (Concat) and multiplied by W_O: "
            "every head writes into all four coordinates. A switched-off head writes zeros."
        )
    if step == "add-norm-1":
        if pre:
            return (
                "Add: the residual H' = H + MHA(LN₁(H)) keeps the input and adds what attention "
                "found. Norm: LN₂(H') is what the MLP reads; H' itself goes on unnormalised."
            )
        return "Add & Norm: H' = LN₁(H + MHA(H)). Post-norm normalises the sum itself."
    if step == "mlp":
        return (
            "Each token alone goes through W_1 (4 → 8), the exact GELU, x·Φ(x), and W_2 (8 → 4). "
            "No token looks at another here."
        )
    if step == "add-norm-2":
        if pre:
            return (
                "Add: output = H' + MLP(LN₂(H')). A pre-norm block ends on the residual, "
                "not on a norm (a stack adds a final norm after its last block)."
            )
        return (
            "Add & Norm: output = LN₂(H' + MLP(H')). Every output row has mean ≈ 0 and "
            "variance ≈ 1 (times γ, plus β)."
        )
    raise ValueError(f"unknown step {step!r}")


def _argmax(row: list[float]) -> int:
    best = 0
    for i, w in enumerate(row):
        if w > row[best]:
            best = i
    return best


def head_pattern(weights: list[list[float]]) -> str:
    """Return "previous", "self", "first" or "mixed" from rows B and C's largest shares."""
    tops = [_argmax(weights[r][: r + 1]) for r in range(1, len(weights))]
    rows = range(1, len(weights))
    if all(t == r - 1 for t, r in zip(tops, rows)):
        return "previous"
    if all(t == r for t, r in zip(tops, rows)):
        return "self"
    if all(t == 0 for t in tops):
        return "first"
    return "mixed"


def head_sentence(name: str, weights: list[list[float]], on: bool) -> str:
    """Say what head ``name`` does, from its (3 x 3) causal weights."""
    pattern = head_pattern(weights)
    parts = []
    for r in range(1, len(weights)):
        t = _argmax(weights[r][: r + 1])
        parts.append(f"{LABELS[r]} gives {LABELS[t]} {fmt.percent(weights[r][t])}")
    detail = ", ".join(parts)
    lead = {
        "previous": f"{name} looks back to the previous token",
        "self": f"{name} looks at each token itself",
        "first": f"{name} looks at the first token",
        "mixed": f"{name} follows no single pattern",
    }[pattern]
    text = f"{lead}: {detail} (A can only see itself)."
    if not on:
        text += " It is switched off, so it writes zeros before W_O."
    return text


def ablation_sentence(name: str, max_change: float) -> str:
    """Say what the output loses when head ``name`` is switched off."""
    if max_change <= 1e-12:
        return f"Switching {name} off changes no output number: the block does not use it."
    return (
        f"Switching {name} off changes the output by up to {fmt.rounded(max_change)} "
        "(the largest change of any output number)."
    )


def summary(norm: str, positions: str, heads: list[dict], output_rows: list[str]) -> str:
    """One sentence for the whole walk."""
    placement = "Pre-norm" if norm == "pre" else "Post-norm"
    pos = {"none": "no positions", "sinusoidal": "sinusoidal positions", "rope": "RoPE"}[positions]
    kinds = "; ".join(f"{h['name']}: {h['pattern'] if h['on'] else 'off'}" for h in heads)
    return f"{placement} block, {pos} ({kinds}); output rows {', '.join(output_rows)}."


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
                "start_s": n * PLAYBACK_STEP_S,
                "end_s": (n + 1) * PLAYBACK_STEP_S,
                "tensors": names,
                "reveal_s": PLAYBACK_STEP_S / max(len(names), 1),
            }
        )
    return {"duration_s": len(steps) * PLAYBACK_STEP_S, "captions": captions}
