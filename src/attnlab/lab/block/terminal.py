"""The block walk as ``attnlab block`` prints it: the page's own strings, line by line.

``lines(page)`` turns a ``block_page`` answer into the terminal's lines: the
summary, each step's heading, caption and tables (display strings), each head's
sentence and ablation, the pre/post-norm and RoPE sentences, then the output at
full precision. Every sentence is the page's (with its claims there); the only
words added here are :data:`OUTPUT_HEADING`. ``to_json(walk)`` is ``--json``:
the inputs and weights by their paper names and every intermediate.
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.block.data import EPS, LABELS
from attnlab.lab.block.walk import Walk

OUTPUT_HEADING = "Output at full precision:"

# `attnlab block --help`: the command's line and each option's, by its flag
HELP = {
    "command": "walk one transformer block on the lab's tokens, every number",
    "--post-norm": "post-norm (BERT) instead of pre-norm (GPT-2)",
    "--positions": "position scheme (default none)",
    "--head-off": "switch head N (1 or 2) off: it contributes zeros before W_O (repeatable)",
    "--json": "every intermediate, the inputs and weights, as JSON",
    "--python": "the generated NumPy-free Python program",
}


def _table(t: dict) -> list[str]:
    head = f"   {t['label']}{t['formula_shown']}"
    return [head] + [f"     {label}  [{', '.join(row)}]" for label, row in zip(t["rows"], t["display"])]


def lines(page: dict) -> list[str]:
    """The walk's printout, from the page's answer (``lab.block.page.block_page``)."""
    out = [page["summary"]["text"], ""]
    for step in page["steps"]:
        out += [step["heading"], f"   {step['caption']['text']}"]
        for t in step["tensors"]:
            out += _table(t)
        out.append("")
    for h, a in zip(page["heads"], page["ablation"]):
        out += [h["title"], f"   {h['sentence']['text']}", f"   {a['sentence']['text']}"]
    out += [
        "",
        page["norm_compare"]["summary"]["text"],
        page["rope"]["status"]["text"],
        page["rope"]["demo"]["sentence"]["text"],
        "",
        OUTPUT_HEADING,
    ]
    labels = page["inputs"]["labels"]
    out += [f"  {label}  {fmt.precise_vector(row)}" for label, row in zip(labels, page["output"])]
    return out


def to_json(w: Walk) -> dict:
    """Return the walk by paper names: inputs, weights, every intermediate, the output."""
    ws = w.weights
    return {
        "norm": w.norm,
        "positions": w.positions,
        "heads_on": list(w.heads_on),
        "labels": list(LABELS),
        "x": w.x,
        "w_q": [h["w_q"] for h in ws["heads"]],
        "w_k": [h["w_k"] for h in ws["heads"]],
        "w_v": [h["w_v"] for h in ws["heads"]],
        "w_o": ws["w_o"],
        "norm_1": {**ws["norm_1"], "eps": EPS},
        "norm_2": {**ws["norm_2"], "eps": EPS},
        "w_1": ws["w_1"],
        "b_1": ws["b_1"],
        "w_2": ws["w_2"],
        "b_2": ws["b_2"],
        "intermediates": dict(w.tensors),
        "output": w.output,
    }
