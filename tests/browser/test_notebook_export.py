"""Export and import in a real browser; the exported notebook reproduces the page."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import nbformat
import pytest
from nbclient import NotebookClient
from playwright.sync_api import expect

from attnlab.lab import numbers as fmt

pytestmark = pytest.mark.browser


def download(page, selector, folder):
    with page.expect_download() as info:
        page.locator(selector).click()
    d = info.value
    path = folder / d.suggested_filename
    d.save_as(path)
    return path


def test_export_import_and_the_notebook_reproduces_the_page(lab, artifacts, tmp_path):
    page = lab.page
    lab.recorder.allow(r"status of 422")  # the bad import below is refused
    # build an experiment: block A for row 2, move q, show row 2
    page.locator("#mask-2-0").click()  # not uncheck(): a redraw may replace the box mid-action
    expect(page.locator("#mask-2-0")).not_to_be_checked()
    expect(page.locator('[data-cell="2-0"]')).to_have_class("seq-cell blocked")
    handle = page.locator("#match-plot .handle")
    handle.focus()
    page.keyboard.press("ArrowLeft")
    lab.wait_for_query("[1.9, 1]")
    expect(page.locator(".seq-query").first).to_have_text("q = [1.9, 1]")
    shown_rows = [page.locator(f'[data-field="output-{r}"]').inner_text() for r in range(3)]
    lab.open("precise")
    precise_output = page.locator('[data-field="precise-output"]').inner_text()

    lab.open("current")
    v = page.locator("#field-values-1-0")
    v.fill("-0")
    v.press("Enter")
    expect(page.locator("#field-values-1-0")).to_have_value("-0")
    exported_text = download(page, '[data-export="json"]', tmp_path).read_text()
    exported = json.loads(exported_text)
    assert exported["example"]["values"][1] == [0.0, 2.0]
    assert str(exported["example"]["values"][1][0]) == "-0.0"  # -0 kept, as typed
    assert exported["format"] == "attnlab-notebook"
    assert exported["example"]["queries"][0] == [1.9, 1.0]
    assert exported["example"]["mask"][2] == [False, True, True]
    # the page and the export agree on every row
    assert [fmt.vector(r["output"]) for r in exported["results"]["rows"]] == shown_rows
    # opening the two panels was help before any attempt
    assert exported["history"][0]["help"] == [
        "Opened “Inspect precise numbers”", "Opened “Read the current numbers”"
    ]

    # the notebook, run with a real kernel, prints the page's numbers
    nb_path = download(page, '[data-export="ipynb"]', tmp_path)
    nb = nbformat.read(nb_path, as_version=4)
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    got = json.loads(nb.cells[-1].outputs[0]["text"])
    assert [fmt.vector(r["output"]) for r in got["rows"]] == shown_rows
    assert "output=[" + ", ".join(fmt.precise(x) for x in got["explorer"]["output"]) + "]" == (
        precise_output
    )
    assert got["rows"] == [
        {k: r[k] for k in ("scores", "weights", "output")} for r in exported["results"]["rows"]
    ]

    # the Markdown report and the plots
    md = download(page, '[data-export="markdown"]', tmp_path).read_text()
    assert "| 2 (C) | ✗ | ✓ | ✓ |" in md
    svg = ET.parse(download(page, '[data-export="value-svg"]', tmp_path)).getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    png = download(page, '[data-export="key-png"]', tmp_path).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000

    # change things, then import the exported file: the held example comes back
    page.locator("#reset").click()
    page.locator("#mask-2-0").click()  # not check(): a redraw may replace the box mid-action
    expect(page.locator("#mask-2-0")).to_be_checked()
    expect(page.locator(".seq-query").first).to_have_text("q = [2, 1]")
    json_path = tmp_path / "attnlab-study.json"
    page.locator("#import-file").set_input_files(json_path)
    expect(page.locator("#import-status")).to_contain_text("Imported attnlab-study.json")
    expect(page.locator(".seq-query").first).to_have_text("q = [1.9, 1]")
    expect(page.locator("#mask-2-0")).not_to_be_checked()
    for r in range(3):
        expect(page.locator(f'[data-field="output-{r}"]')).to_have_text(shown_rows[r])
    lab.wait_for_query("[1.9, 1]")

    # a bad file: a clear message, nothing changed
    bad = tmp_path / "bad.json"
    doc = json.loads(json_path.read_text())
    doc["example"]["mask"][0] = [False, False, False]
    bad.write_text(json.dumps(doc))
    page.locator("#import-file").set_input_files(bad)
    status = page.locator("#import-status")
    expect(status).to_contain_text(  # the lab's words (issue 22), no field path
        "The file was not imported: its example › mask › 1 allows no source in row 0 (A)"
    )
    expect(status).to_contain_text("Nothing changed.")
    expect(page.locator(".seq-query").first).to_have_text("q = [1.9, 1]")
    page.locator("#export").screenshot(path=artifacts / "notebook-export.png")


def test_imported_labels_are_escaped_everywhere(lab, tmp_path):
    page = lab.page
    hostile = '<img src=x onerror="__owned=1">'
    doc = {"format": "attnlab-notebook", "version": 1, "example": {
        "labels": [hostile, "B&amp;", "C"], "queries": [[2, 1], [1, 2], [-1, 1]],
        "keys": [[-1, 2], [1, 0], [0, 1]], "values": [[2, 0], [0, 2], [-1, -1]],
        "mask": [[True, False, False], [True, True, False], [True, True, True]]}}
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(doc))
    page.locator("#import-file").set_input_files(path)
    expect(page.locator("#import-status")).to_contain_text("Imported hostile.json")
    expect(page.locator("#seq-table thead th").nth(1)).to_have_text(f"Source {hostile}")
    expect(page.locator("#seq-table thead th").nth(2)).to_have_text("Source B&amp;")
    expect(page.locator("#row-label")).to_have_text(f"Row 0 ({hostile}) · unmasked projection.")
    expect(page.locator("#score-table tbody th").first).to_have_text(hostile)
    assert page.locator("main img").count() == 0
    assert page.evaluate("() => window.__owned") is None
