"""The page as a whole: accessibility, layouts, touch, motion, requests, offline."""

from __future__ import annotations

import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from labkit import DESKTOP, LiveServer, open_lab
from playwright.sync_api import expect

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.examples import WORKED

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


def test_axe_finds_no_serious_or_critical_violation_with_every_disclosure_open(lab, artifacts):
    lab.open_all()
    expect(lab.page.locator("#python-code")).to_contain_text("from math import exp, sqrt")
    results = Axe().run(lab.page)
    violations = results.response["violations"]
    (artifacts / "axe-report.txt").write_text(results.generate_report(), encoding="utf-8")
    serious = [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]])
        for v in violations
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == []


def test_desktop_screenshot_at_1280x800(lab, artifacts):
    page = lab.page
    box = page.locator("#explorer .steps").bounding_box()
    assert box["width"] <= DESKTOP["width"]
    # The three steps sit side by side on a desktop.
    tops = {round(s.bounding_box()["y"]) for s in page.locator(".step").all()}
    assert len(tops) == 1
    page.screenshot(path=artifacts / "lab-desktop-1280x800-top.png")
    page.locator("#explorer").scroll_into_view_if_needed()
    page.evaluate("() => document.getElementById('explorer').scrollIntoView()")
    page.screenshot(path=artifacts / "lab-desktop-1280x800.png")
    lab.open_all()
    page.screenshot(path=artifacts / "lab-desktop-full.png", full_page=True)


def test_why_and_questions_come_first_and_q_still_starts_on_screen(lab):
    """The reference page's order (why, questions, then the demos) without hiding q at 1280x800."""
    page = lab.page
    assert page.evaluate("() => scrollY") == 0
    why = page.locator("#why").bounding_box()
    questions = page.locator("#questions").bounding_box()
    explorer = page.locator("#explorer").bounding_box()
    assert why["y"] + why["height"] <= explorer["y"]
    assert questions["y"] + questions["height"] <= explorer["y"]
    expect(page.locator("#why h2")).to_have_text("Why It Matters for Modern Models")
    expect(page.locator("#questions h2")).to_have_text("Questions to Think About")
    handle = page.locator("#match-plot .handle").bounding_box()
    assert handle["y"] + handle["height"] <= DESKTOP["height"]  # q can be grabbed without scrolling


def test_phone_layout_and_touch_drag(browser, live_server, artifacts):
    lab = open_lab(browser, live_server.url, viewport=PHONE, has_touch=True, is_mobile=True)
    try:
        page = lab.page
        # Nothing wider than the screen: no sideways scrolling.
        assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
        tops = [s.bounding_box()["y"] for s in page.locator(".step").all()]
        assert tops == sorted(tops) and len(set(tops)) == 3  # stacked
        page.screenshot(path=artifacts / "lab-phone-390-top.png")
        page.evaluate("() => document.getElementById('explorer').scrollIntoView()")
        page.screenshot(path=artifacts / "lab-phone-390.png")
        plot = page.locator("#match-plot")
        plot.scroll_into_view_if_needed()
        handle = page.locator("#match-plot .handle").bounding_box()
        start = (handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
        end = lab.plane_point(-2.0, -2.0)
        cdp = page.context.new_cdp_session(page)
        cdp.send(
            "Input.dispatchTouchEvent",
            {"type": "touchStart", "touchPoints": [{"x": start[0], "y": start[1]}]},
        )
        for i in range(1, 9):
            x = start[0] + (end[0] - start[0]) * i / 8
            y = start[1] + (end[1] - start[1]) * i / 8
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]})
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        q = lab.precise_q()
        assert abs(q[0] + 2.0) < 0.2 and abs(q[1] + 2.0) < 0.2
        trace = trace_query(q, WORKED.keys, WORKED.values)
        lab.wait_for_query(fmt.vector(trace.q))
        expect(page.locator('#score-table [data-field="percent-0"]')).to_have_text(
            fmt.percents(trace.weights)[0]  # the shares as one set, adding up to 100
        )
        page.screenshot(path=artifacts / "lab-phone-390-after-touch-drag.png", full_page=True)
    finally:
        lab.close()


def test_reduced_motion_turns_transitions_off(browser, live_server):
    lab = open_lab(browser, live_server.url, reduced_motion="reduce")
    try:
        duration = lab.page.locator("#challenge").evaluate("e => getComputedStyle(e).transitionDuration")
        assert duration == "0s"
    finally:
        lab.close()
    lab = open_lab(browser, live_server.url, reduced_motion="no-preference")
    try:
        duration = lab.page.locator("#challenge").evaluate("e => getComputedStyle(e).transitionDuration")
        assert duration != "0s"
    finally:
        lab.close()


def test_every_control_is_reachable_by_keyboard(lab):
    lab.open_all()
    page = lab.page
    # tab from the top of the page (open_all leaves focus on the last summary it clicked)
    page.locator("a[href='#explorer']").first.focus()
    reached = set()
    for _ in range(60):
        page.keyboard.press("Tab")
        reached.add(
            page.evaluate(
                "() => { const e = document.activeElement;"
                " return e.dataset.field || e.id || e.getAttribute('class') || e.tagName; }"
            )
        )
    for control in (
        "handle",
        "reset",
        "copy-python",
        "download-python",
        "q[0]",
        "q[1]",
        "values[0][0]",
        "values[2][1]",
    ):
        assert control in reached, control
    for details in ("every-number", "precise", "python", "geometry", "current"):
        assert f"#{details}" in reached or page.locator(f"#{details} > summary").count() == 1


def test_only_the_lab_server_is_ever_asked(lab):
    lab.drag_to(1.0, -1.0)
    lab.open_all()
    hosts = {re.match(r"^(\w+):(//)?([^/]*)", u).group(3) for u in lab.recorder.requests}
    port = lab.base_url.split(":")[2].strip("/")
    assert hosts <= {f"127.0.0.1:{port}", ""}  # "" for data: URLs
    assert any(u.endswith("/api/state/ws") for u in lab.recorder.requests)


def test_download_gives_the_program(lab):
    lab.open("python")
    with lab.page.expect_download() as info:
        lab.page.locator("#download-python").click()
    download = info.value
    assert download.suggested_filename == "attention_one_query.py"
    with open(download.path(), encoding="utf-8") as f:
        text = f.read()
    assert text == lab.page.locator("#python-code").inner_text()


def test_when_the_server_stops_the_page_says_so_and_keeps_the_state(browser):
    with LiveServer() as server:
        lab = open_lab(browser, server.url)
        lab.recorder.allow(r"ERR_CONNECTION_REFUSED|Failed to fetch|WebSocket connection")
        page = lab.page
        handle = page.locator("#match-plot .handle")
        handle.focus()
        handle.press("Shift+ArrowRight")
        lab.wait_for_query("[3, 1]")
        server.stop()
        handle.press("ArrowUp")
        offline = page.locator("#offline")
        expect(offline).to_be_visible()
        expect(offline).to_contain_text("not answering")
        lab.wait_for_query("[3, 1]")  # the last good numbers stay on the page
        saved = page.evaluate("() => JSON.parse(sessionStorage.getItem('attnlab.held.v1')).queries[0]")
        assert saved == [3, 1]
        # The server comes back on the same port: the page retries the newest state.
        server.start()
        lab.wait_for_query("[3, 1.1]")
        expect(offline).to_be_hidden()
        lab.close()


def test_the_first_load_asks_for_the_block_only_when_it_is_about_to_be_seen(lab):
    """The block's data (the page's largest answers) loads when its section nears the viewport."""
    page = lab.page
    lab.wait_settled()
    page.wait_for_timeout(300)
    block_requests = lambda: [u for u in lab.recorder.requests if "/api/block" in u]  # noqa: E731
    assert block_requests() == []
    expect(page.locator("#block-root")).to_be_empty()
    page.locator("#block").scroll_into_view_if_needed()
    expect(page.locator("#block-step-title")).to_contain_text("Step ")
    assert any(u.endswith("/api/block/example") for u in block_requests())
    # one start per visit: scrolling away and back loads nothing again
    page.locator("#explorer").scroll_into_view_if_needed()
    page.locator("#block").scroll_into_view_if_needed()
    expect(page.locator("html")).to_have_attribute("data-block-pending", "0")
    assert sum(u.endswith("/api/block/example") for u in block_requests()) == 1
