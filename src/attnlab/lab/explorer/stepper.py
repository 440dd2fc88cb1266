"""The stepper "Step N of 4": Vectors -> Match -> Share -> Mix.

The words of each step (question, explanation, notation) are data in
``lab/data/stepper.json``; the tables of its optional inspection control are
built here from the explorer's trace, so they always show the current numbers.
The parts of the words that depend on the example (``{names}``,
``{scale_why}``, ``{scale_notation}``, ``{hull}``) are filled here too, and
each step carries the facts they assert as ``claims``. Steps are numbered 1
to 4 as on the page. The page's state answer (``lab.explorer.state``) carries the
steps for the explorer's row, so the notebook's stepper never asks for them.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.display import COUNT_WORDS, hull_sentence, labels, scale_claims, score_expression


@cache
def _data() -> dict:
    text = resources.files("attnlab.lab").joinpath("data/stepper.json").read_text("utf-8")
    return json.loads(text)


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
        return {
            "caption": f"Dot products and scaled scores (s = {score_expression(t)})",
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


def _names(labels: tuple[str, ...]) -> str:
    if len(labels) == 1:
        return f"{labels[0]} names the one source"
    listed = ", ".join(labels[:-1]) + f" and {labels[-1]}"
    n = len(labels)
    return f"{listed} name the same {COUNT_WORDS[n] if n < len(COUNT_WORDS) else n} sources"


def _fills(t: QueryTrace) -> tuple[dict, dict]:
    """The example-dependent parts of the steps' words, and the facts they assert."""
    sc = scale_claims(t)
    if sc["op"] == "divide":
        why = "Dividing by √d_k keeps scores from growing with the key width."
        notation = "sᵢ = (q · kᵢ) / √d_k, with d_k the number of coordinates in q and in each key."
    else:
        why = f"Here the scale {sc['shown']} multiplies each dot product (instead of dividing by √d_k)."
        notation = f"sᵢ = (q · kᵢ) × {sc['shown']}, with {sc['shown']} the scale of this example."
    hull, hull_claims = hull_sentence(t, shaded=False)
    fills = {"names": _names(t.labels), "scale_why": why, "scale_notation": notation, "hull": hull}
    return fills, {"labels": list(t.labels), "scale": sc, **hull_claims, "output": list(t.output)}


def steps(trace: QueryTrace) -> list[dict]:
    """Return the 4 steps for ``trace``: words from data, tables from the numbers."""
    data = _data()
    shown = labels(trace)
    shapes = shown["shapes"]["text"]
    fills, claims = _fills(trace)
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
                "explanation": step["explanation"].format(**fills),
                "inspect": step["inspect"],
                "notation": step["notation"].format(**fills),
                "shapes": shapes,
                "symbols": shown["notation"]["text"] if step["id"] == "vectors" else "",
                "table": _table(step["id"], trace),
                "claims": claims,
            }
        )
    return out


def stepper(trace: QueryTrace) -> dict:
    """Return the stepper's title, note and steps for ``trace``."""
    data = _data()
    return {"title": data["title"], "note": data["inspection_note"], "steps": steps(trace)}
