"""The stepper "Step N of 4": Vectors -> Match -> Share -> Mix.

The words of each step (question, explanation, notation) are data in
``lab/data/stepper.json``; the tables of its optional inspection control are
built here from the explorer's trace, so they always show the current numbers.
Steps are numbered 1 to 4 as on the page.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt


@cache
def _data() -> dict:
    text = resources.files("attnlab.lab").joinpath("data/stepper.json").read_text("utf-8")
    return json.loads(text)


def step_count() -> int:
    return len(_data()["steps"])


def _share(t: QueryTrace, i: int) -> str:
    return fmt.rounded(t.weights[i]) if t.allowed[i] else "blocked"


def _table(step_id: str, t: QueryTrace) -> dict:
    """Return the step's table: a caption, column names and rows of display strings."""
    if step_id == "vectors":
        return {
            "caption": "Keys in key space",
            "columns": ["Source", "Key k", "q"],
            "rows": [[label, fmt.vector(k), fmt.vector(t.q)] for label, k in zip(t.labels, t.keys)],
        }
    if step_id == "match":
        root = f"√{t.d_k}" if t.scale is None else f"× {fmt.rounded(t.scale)}"
        return {
            "caption": f"Dot products and scaled scores (divide by {root})",
            "columns": ["Source", "q·k", "Scaled s", "Allowed"],
            "rows": [
                [label, fmt.rounded(d), fmt.rounded(s), "yes" if ok else "blocked"]
                for label, d, s, ok in zip(t.labels, t.dots, t.scores, t.allowed)
            ],
        }
    if step_id == "share":
        return {
            "caption": f"Shared normalization: m = {fmt.rounded(t.m)}; Z = {fmt.rounded(t.z)}",
            "columns": ["Source", "exp(s − m)", "Share w"],
            "rows": [
                [label, fmt.rounded(e) if ok else "blocked", _share(t, i)]
                for i, (label, e, ok) in enumerate(zip(t.labels, t.exps, t.allowed))
            ],
        }
    return {
        "caption": f"Carries add up to the output o = {fmt.vector(t.output)}",
        "columns": ["Source", "Share w", "Value v", "Carry w·v"],
        "rows": [
            [label, _share(t, i), fmt.vector(v), fmt.vector(c)]
            for i, (label, v, c) in enumerate(zip(t.labels, t.values, t.carries))
        ],
    }


def steps(trace: QueryTrace) -> list[dict]:
    """Return the 4 steps for ``trace``: words from data, tables from the numbers."""
    data = _data()
    shapes = (
        f"Shapes: q and each k have d_k = {trace.d_k} coordinates. Each v and the output "
        f"have d_v = {trace.d_v} coordinates."
        + (" Equal widths here do not make the spaces identical." if trace.d_k == trace.d_v else "")
    )
    symbols = "q = [" + ", ".join(f"q{chr(0x2081 + j)}" for j in range(trace.d_k)) + "]"
    keys = "; ".join(
        f"k_{label} = {fmt.vector(k).replace('-', fmt.MINUS)}"
        for label, k in zip(trace.labels, trace.keys)
    )
    out = []
    n = len(data["steps"])
    for number, step in enumerate(data["steps"], start=1):
        out.append(
            {
                "number": number,
                "id": step["id"],
                "title": f"Step {number} of {n} · {step['name']}",
                "name": step["name"],
                "question": step["question"],
                "explanation": step["explanation"],
                "inspect": step["inspect"],
                "notation": step["notation"],
                "shapes": shapes,
                "symbols": f"{symbols}; {keys}" if step["id"] == "vectors" else "",
                "table": _table(step["id"], trace),
            }
        )
    return out


def stepper(trace: QueryTrace) -> dict:
    """Return the stepper's title, note and steps for ``trace``."""
    data = _data()
    return {"title": data["title"], "note": data["inspection_note"], "steps": steps(trace)}
