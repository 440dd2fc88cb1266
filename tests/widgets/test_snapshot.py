"""widget.to_html: one standalone file, numbers frozen, no network, drawn by the page's own modules."""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import expect

from attnlab.widgets import AttentionView, Block, Explorer
from attnlab.widgets.assets import module_graph

SVG_NS = "http://www.w3.org/2000/svg"  # a name in dom.js, never fetched


def urls(text: str) -> set[str]:
    return set(re.findall(r"https?://[\w./-]*\w", text))


def test_the_snapshot_holds_the_numbers_and_no_url_but_the_svg_namespace(tmp_path):
    w = Explorer()
    w.q = [0, 1]
    path = w.to_html(tmp_path / "explorer.html")
    text = path.read_text(encoding="utf-8")
    assert w.widget._result["display"]["output"] in text and repr(w.trace.output[0]) in text
    assert urls(text) <= {SVG_NS}
    # the page modules are shipped as they are in web/static/js, never copied into another file
    for name, _source in module_graph(["widgets/explorer.js"]):
        assert name in text
    assert "connect-src 'none'" in text and "default-src 'none'" in text
    assert "</script" not in text.split('id="attnlab-state">', 1)[1].split("</script>", 1)[0]


def test_labels_cannot_break_out_of_the_snapshot(tmp_path):
    evil = "</script><img src=x onerror=alert(1)>"
    weights = np.full((2, 2), 0.5)
    text = AttentionView(weights, [evil, "b"]).to_html(tmp_path / "a.html").read_text(encoding="utf-8")
    assert evil not in text and "<img" not in text


def center(locator) -> tuple[float, float]:
    box = locator.bounding_box()
    return box["x"] + box["width"] / 4, box["y"] + box["height"] / 4


def open_snapshot(browser, path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    url = path.as_uri()
    local = (url, "blob:", "data:")
    page.on("request", lambda r: None if r.url.startswith(local) else problems.append(r.url))
    page.goto(url)
    expect(page.locator("html")).to_have_attribute("data-attnlab-ready", "1")
    return page, problems


@pytest.mark.browser
def test_the_explorer_snapshot_draws_offline_with_the_frozen_numbers(browser, tmp_path):
    from axe_playwright_python.sync_playwright import Axe

    w = Explorer()
    page, problems = open_snapshot(browser, w.to_html(tmp_path / "x.html"))
    expect(page.locator(".attnlab-widget .summary").first).to_contain_text("Output o = [-0.004, 0.868]")
    expect(page.locator(".score-table")).to_contain_text("1.414")
    # a snapshot says it is one: no "Drag anywhere in the plane", no handle to drag or focus
    words = w.widget._words
    help_ = page.locator("[id$='match-help']")
    expect(help_).to_have_text(words["snapshot_help"])
    assert "Drag" not in page.locator("main.attnlab-widget").inner_text()
    expect(page.locator("circle.handle")).to_have_count(0)
    plane = page.locator("svg.plane").first
    expect(plane).to_have_attribute("role", "img")
    expect(plane).to_have_attribute("aria-label", words["snapshot_plane"])
    assert "draggable" not in (plane.get_attribute("class") or "")
    assert plane.locator("text").count() > 0  # the keys and q are drawn, still
    page.mouse.click(*center(plane))  # a click where a drag would start changes nothing: frozen
    expect(page.locator(".caption")).to_have_text("q = [2, 1] · Compare the query with each key.")
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    assert problems == []
    page.close()


@pytest.mark.browser
def test_attention_and_block_snapshots_draw_the_given_numbers(browser, tmp_path):
    from axe_playwright_python.sync_playwright import Axe

    weights = np.random.default_rng(3).dirichlet(np.ones(4), size=(2, 4))  # (H, L, S), rows sum to 1
    v = AttentionView(weights, ["a", "b", "c", "d"])
    v.head, v.focus = 1, 2
    page, problems = open_snapshot(browser, v.to_html(tmp_path / "v.html"))
    cell = page.locator(".rm-heatmap .rm-cell[data-q='3'][data-k='1']")
    expect(cell).to_have_attribute("data-weight", repr(float(weights[1, 3, 1])))
    expect(page.locator("td[data-field='precise']").nth(3)).to_have_text(repr(float(weights[1, 2, 3])))
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    assert problems == []
    page.close()

    b = Block()
    b.step = 4
    page, problems = open_snapshot(browser, b.to_html(tmp_path / "b.html"))
    expect(page.locator(".block-step-title")).to_have_text(f"Step 5 of 8 · {b._page['steps'][4]['title']}")
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    assert problems == []
    page.close()
