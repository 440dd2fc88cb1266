"""examples/attention-in-jupyter.ipynb runs top to bottom in a real kernel, printing the engine's numbers."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

from attnlab.engine.single import trace_query
from attnlab.lab.examples import WORKED

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "attention-in-jupyter.ipynb"


def test_example_notebook_runs_and_shows_the_engines_numbers(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    where = {"metadata": {"path": str(tmp_path)}}
    NotebookClient(nb, timeout=120, kernel_name="python3", resources=where).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o["output_type"] == "error"]
    assert not errors, errors
    # every widget cell displayed a widget view (anywidget's mime type), not a repr
    mime = "application/vnd.jupyter.widget-view+json"
    widgets = [c for c in code if any(mime in o.get("data", {}) for o in c.outputs)]
    assert len(widgets) == 3
    # the worked example's q and output, as the engine computes them
    printed = code[1].outputs[0]["text"]
    worked = trace_query(**WORKED.to_dict())
    assert printed.strip() == f"[2.0, 1.0] {worked.output}"
    moved = trace_query(q=[0, 1], keys=WORKED.keys, values=WORKED.values, labels=WORKED.labels)
    assert code[2].outputs[0]["text"].strip() == str(moved.weights)
    assert code[-1].outputs[0]["text"].strip() == "explorer.html True"
