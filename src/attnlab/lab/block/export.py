"""The block walk exported: a Jupyter notebook that recomputes it, and a Markdown report.

The notebook's cells are the generated program (``lab.block_python``) in three
parts (helpers, inputs, the walk), so running it prints exactly the page's
numbers; ``lab.export.new_notebook`` writes it, as it writes the notebook
part's. The Markdown lists every step's tensors as tables of the page's
rounded numbers, the heads' sentences and the output.
"""

from __future__ import annotations

from attnlab.lab.block import view as block_view
from attnlab.lab.block.page import heads
from attnlab.lab.block.program import program_parts
from attnlab.lab.block.walk import Walk, walk
from attnlab.lab.notebook.export import new_notebook, notebook_json


def _settings(w: Walk) -> str:
    on = ", ".join(f"head {h + 1} {'on' if o else 'off'}" for h, o in enumerate(w.heads_on))
    return f"{w.norm}-norm, positions: {w.positions}, {on}"


def to_notebook(**state):
    """Return a notebook (nbformat v4) whose cells recompute the block walk for ``state``."""
    w = walk(**state)
    helpers, inputs, body = program_parts(w)
    return new_notebook(
        [
            (
                "markdown",
                "# From one head to a transformer block\n\n"
                f"Tokens A, B, C; d_model = 4; 2 heads with d_k = d_v = 2; d_ff = 8; {_settings(w)}. "
                "Every number is recomputed below in plain Python (ordered sums from 0.0, `math.exp`, "
                "`math.sqrt`, `math.erf`): the printed values equal the lab's bit for bit.",
            ),
            ("markdown", "## The arithmetic"),
            ("code", helpers),
            ("markdown", "## The inputs and weights (pre-transposed: y = x @ W)"),
            ("code", inputs),
            ("markdown", "## The walk: Embed → Project → Attend → Combine → Add & Norm → MLP → Add & Norm"),
            ("code", body),
        ]
    )


def notebook_text(**state) -> str:
    """Return the notebook as ``.ipynb`` JSON text (validated by nbformat)."""
    return notebook_json(to_notebook(**state))


def _table(t: dict) -> str:
    head = "| | " + " | ".join(t["cols"]) + " |"
    rule = "|---|" + "---|" * len(t["cols"])
    rows = [f"| {label} | " + " | ".join(r) + " |" for label, r in zip(t["rows"], t["display"])]
    return "\n".join([head, rule, *rows])


def to_markdown(**state) -> str:
    """Return the walk as Markdown: settings, each step's caption and tables, the heads, the output."""
    w = walk(**state)
    lines = ["# From one head to a transformer block", "", f"Settings: {_settings(w)}.", ""]
    for step in block_view.steps(w):
        lines += [f"## {step['title']}", "", step["caption"]["text"], ""]
        for t in step["tensors"]:
            lines += [f"**{t['label']}** ({t['formula']})", "", _table(t), ""]
    lines += ["## What each head does", ""]
    lines += [f"- {h['sentence']['text']}" for h in heads(w)]
    lines += ["", "## Output (full precision)", ""]
    lines += [f"- {label}: `{row!r}`" for label, row in zip(("A", "B", "C"), w.output)]
    return "\n".join(lines) + "\n"
