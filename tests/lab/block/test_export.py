"""The block walk exported: the notebook runs (nbclient) and prints the page's numbers; Markdown."""

from __future__ import annotations

import ast

import nbformat
from nbclient import NotebookClient

from attnlab.lab import numbers as fmt
from attnlab.lab.block import export as block_export
from attnlab.lab.block.walk import walk


def test_notebook_runs_and_prints_the_walks_numbers_bit_for_bit():
    w = given = walk(norm="post", positions="rope", heads_on=(False, True))
    nb = nbformat.reads(block_export.notebook_text(norm="post", positions="rope", heads_on=(False, True)), 4)
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert all(o["output_type"] == "stream" for o in outputs), outputs
    printed = {}
    for line in "".join(o["text"] for o in outputs).splitlines():
        name, sep, value = line.partition(" = ")
        if sep:
            printed[name] = ast.literal_eval(value)
    assert printed == given.tensors
    assert printed["output"] == w.output


def test_markdown_lists_every_step_and_tensor():
    w = walk(positions="sinusoidal")
    text = block_export.to_markdown(positions="sinusoidal")
    assert text.count("\n## ") == 8 + 2  # 8 steps, the heads, the output
    assert "**PE**" in text
    row = w.tensors["output"][1]
    assert "| B | " + " | ".join(fmt.rounded(v) for v in row) + " |" in text
    assert f"- B: `{row!r}`" in text
