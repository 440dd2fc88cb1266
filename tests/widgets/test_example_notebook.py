"""examples/attention-in-jupyter.ipynb runs top to bottom in a real kernel, printing the engine's numbers."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from attnlab.engine.single import trace_query
from attnlab.lab.explorer.examples import WORKED
from attnlab.models import files, registry

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "attention-in-jupyter.ipynb"

pytestmark = pytest.mark.models  # its ModelView cell runs MiniLM in the kernel


@pytest.fixture(autouse=True)
def minilm_installed():
    try:
        files.locate(files.MINILM)
    except files.ModelNotInstalled as error:
        pytest.skip(str(error))


def test_example_notebook_runs_and_shows_the_engines_numbers(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the kernel's temporary folders (the snapshot) go here
    nb = nbformat.read(NOTEBOOK, as_version=4)
    where = {"metadata": {"path": str(tmp_path)}}
    NotebookClient(nb, timeout=120, kernel_name="python3", resources=where).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o["output_type"] == "error"]
    assert not errors, errors
    # every widget cell displayed a widget view (anywidget's mime type), not a repr
    mime = "application/vnd.jupyter.widget-view+json"
    widgets = [c for c in code if any(mime in o.get("data", {}) for o in c.outputs)]
    assert len(widgets) == 5  # Explorer, AttentionView, Block, ModelView, CensusView
    # the worked example's q and output, as the engine computes them
    printed = code[1].outputs[0]["text"]
    worked = trace_query(**WORKED.to_dict())
    assert printed.strip() == f"[2.0, 1.0] {worked.output}"
    moved = trace_query(q=[0, 1], keys=WORKED.keys, values=WORKED.values, labels=WORKED.labels)
    assert code[2].outputs[0]["text"].strip() == str(moved.weights)
    # the ModelView cell: MiniLM's tokens and every layer's and head's weights, from the engine
    model_cell = next(i for i, c in enumerate(code) if "ModelView(" in c.source)
    minilm = registry.get_model("minilm").trace("The cat sat on the mat.")
    shape = tuple(minilm.weights.shape)
    assert code[model_cell + 1].outputs[0]["text"].strip() == f"{minilm.tokens} {shape}"
    assert code[-1].outputs[0]["text"].strip() == "explorer.html True"
    assert [p.name for p in tmp_path.glob("*/explorer.html")] == ["explorer.html"]
