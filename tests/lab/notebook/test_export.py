"""Export: JSON (importable), Markdown report, and a notebook that reproduces the numbers."""

from __future__ import annotations

import json

import nbformat
import pytest
from nbclient import NotebookClient

from attnlab.engine.errors import FieldError
from attnlab.lab.explorer import sequence as seq
from attnlab.lab.explorer.sequence import STARTING
from attnlab.lab.explorer.view import sequence_view
from attnlab.lab.notebook import export
from attnlab.lab.notebook import history as hist


@pytest.fixture
def edited():
    held = seq.apply_edit(STARTING, {"kind": "query", "q": [0.5, -1.25]})
    held = seq.apply_edit(held, {"kind": "value", "source": 2, "coord": 1, "x": 1.5})
    held = seq.apply_edit(held, {"kind": "mask", "row": 2, "source": 0, "allowed": False})
    return seq.apply_edit(held, {"kind": "select", "row": 2})


@pytest.fixture
def study():
    s = hist.new_study()
    for a in (
        {"kind": "help", "help": "playback"},
        {"kind": "submit", "challenge": "zero-q", "response": [33, 33, 34]},
        {"kind": "help", "help": "hint", "detail": 1, "challenge": "near-vb"},
    ):
        s = hist.apply(s, a, STARTING)
    return s


def test_json_round_trip_restores_the_example(edited, study):
    doc = export.to_json(edited, study)
    assert doc["format"] == "attnlab-notebook" and doc["version"] == 1
    text = json.dumps(doc)
    assert export.from_json(text) == edited
    assert doc["results"]["rows"][2]["output"] == list(edited.row_trace(2).output)
    assert doc["results"]["explorer"]["label"] == "Row 2 (C) · masked row"
    assert [g["heading"] for g in doc["history"]] == [
        "Before any attempt",  # then challenges in the page's order
        "Bring the output close to v_B · attempt 1",
        "Predict the shares at q = [0, 0] · attempt 1",
    ]


@pytest.mark.parametrize(
    ("text", "loc", "message"),
    [
        ("not json", ("text",), "^text is not JSON"),
        ("[1, 2]", (), "^input is not an attnlab export"),
        ('{"format": "attnlab-notebook", "version": 9}', ("version",), "version is 9; this attnlab reads 1"),
        ('{"format": "attnlab-notebook", "version": 1}', ("example",), "example must be an object"),
        ("x" * 70_000, ("text",), "^text is 70000 bytes long"),
        ("[" * 5000, ("text",), "^text nests 5000 levels deep; an export nests at most 32"),
        ('{"a": ' * 1500 + "1" + "}" * 1500, ("text",), "^text nests 1500 levels deep"),
        (b"[" * 5000, ("text",), "^text nests 5000 levels deep"),
    ],
)
def test_bad_files_get_a_clear_message(text, loc, message):
    with pytest.raises(FieldError, match=message) as refused:
        export.from_json(text)
    assert refused.value.loc == loc


def test_nesting_is_counted_outside_strings_only():
    assert export.json_depth('{"label": "[[[[{{{{", "rows": [[1], [2]]}') == 3
    assert export.json_depth('"an unclosed string [[[') == 0
    # an escaped quote does not end the string: every "[" here is inside it
    assert export.json_depth(r'["\"[[[[", 1]') == 1
    doc = json.dumps(export.to_json(STARTING, hist.new_study()))
    assert export.json_depth(doc) <= export.MAX_DEPTH


def test_bad_example_inside_a_good_file_names_the_field(edited, study):
    doc = export.to_json(edited, study)
    doc["example"]["mask"][1] = [False, False, False]
    with pytest.raises(FieldError, match=r"example.mask\[1\] allows no source in row 1 \(B\)") as refused:
        export.from_document(doc)
    assert refused.value.loc == ("example", "mask", 1)
    doc = export.to_json(edited, study)
    doc["example"]["values"][0][0] = "NaN"
    with pytest.raises(FieldError, match=r"example.values\[0\]\[0\] must be a number") as refused:
        export.from_document(doc)
    assert refused.value.loc == ("example", "values", 0, 0)
    doc = export.to_json(edited, study)
    doc["example"]["labels"][2] = "A"
    with pytest.raises(FieldError, match=r"example.labels\[2\] repeats example.labels\[0\]") as refused:
        export.from_document(doc)
    assert refused.value.loc == ("example", "labels", 2)


def test_markdown_report(edited, study):
    md = export.to_markdown(edited, study)
    assert md.startswith("# Guided attention notebook · study report\n")
    assert "| C | [-1, 1] | [0, 1] | [-1, 1.5] |" in md
    assert "| 2 (C) | ✗ | ✓ | ✓ |" in md
    assert "## Explorer: row 2 (C) · masked row" in md
    assert "### Before any attempt\n\n- Watched the guided playback" in md
    assert (
        "### Predict the shares at q = \\[0, 0\\] · attempt 1\n\n- Check 1 · \\[33, 33, 34\\] % · right\n"
        "- No help used"
    ) in md
    assert "- Opened hint 1 of 3" in md
    # help, not scores: no feedback words of the attempts
    assert "Right:" not in md and "Goal met" not in md and "33.3%" not in md


def test_markdown_escapes_labels():
    held = seq.held_from_dict({**STARTING.to_dict(), "labels": ["*a*", "b|c", "C"]})
    md = export.to_markdown(held, hist.new_study())
    assert "| \\*a\\* |" in md and "b\\|c" in md


def test_notebook_markdown_escapes_labels_and_the_id():
    # Before: the .ipynb wrote the label raw into its heading: "## The explorer: Row 0 (<img src=x ...>)".
    label = "<img src=x onerror=alert(1)>"
    held = seq.held_from_dict({**STARTING.to_dict(), "labels": [label, "B", "C"], "id": "a`b``c"})
    nb = nbformat.reads(export.notebook_text(held), as_version=4)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert label not in markdown and "\\<img src=x onerror=alert\\(1\\)\\>" in markdown
    assert "```a`b``c```" in markdown  # a code span that the id's own backticks cannot close
    md = export.to_markdown(held, hist.new_study())
    assert label not in md and "```a`b``c```" in md


def test_an_integer_too_long_to_read_is_refused_at_text():
    # Before: a 5,000-digit number inside the file raised ValueError from json (a 500 from the API).
    text = json.dumps({"format": "attnlab-notebook", "version": 1}).replace("1}", "1" * 5000 + "}")
    with pytest.raises(FieldError) as caught:
        export.read(text)
    assert caught.value.loc == ("text",) and "number too long to read" in str(caught.value)


def test_notebook_runs_and_reproduces_the_numbers(edited):
    text = export.notebook_text(edited)
    nb = nbformat.reads(text, as_version=4)
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert all(o["output_type"] == "stream" for o in outputs), outputs
    got = json.loads(nb.cells[-1].outputs[0]["text"])
    view = sequence_view(edited)
    assert [r["output"] for r in got["rows"]] == view["outputs"]
    assert [r["weights"] for r in got["rows"]] == view["weights"]
    assert got["explorer"]["output"] == view["explorer"]["trace"]["output"]
    assert got["explorer"]["weights"] == view["explorer"]["trace"]["weights"]
    # the page's Python panel program, run in the notebook, prints the same full precision
    program = nb.cells[2].outputs[0]["text"]
    out = view["explorer"]["trace"]["output"]
    assert f"output=[{out[0]!r}, {out[1]!r}]" in program


def test_an_import_answers_with_its_view_and_the_pages_sentence(edited, study):
    doc = json.dumps(export.to_json(edited, study))
    answer = export.import_answer(doc, "mine.json")
    assert answer["example"] == edited.to_dict() and answer["study"] == study
    assert answer["message"]["text"] == (
        "Imported mine.json: the held example now shows its numbers and the study history is restored."
    )
    older = json.loads(doc)
    del older["study"]  # an export made before studies travelled
    assert export.import_answer(json.dumps(older))["message"] == {
        "text": "Imported the file: the held example now shows its numbers.",
        "claims": {"name": None, "study_restored": False},
    }
    with pytest.raises(export.ImportRefused) as refused:
        export.import_answer("{")
    assert refused.value.loc == ("text",)
    assert refused.value.problem.startswith("was not imported: it is not JSON")
