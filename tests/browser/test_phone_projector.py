"""Phone (390 px), projector (1024x768) and desktop: fit, the phone strip, Present, axe."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from labkit import DESKTOP, open_lab
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
PROJECTOR = {"width": 1024, "height": 768}

SIDEWAYS_JS = "() => [document.documentElement.scrollWidth, window.innerWidth]"

# Rendered font size (px on screen) of every visible text in the svg with this id.
FONT_PX_JS = """(id) => {
  const svg = document.getElementById(id);
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return [...svg.querySelectorAll("text")].filter((t) => t.getBoundingClientRect().width > 0)
    .map((t) => [t.textContent, parseFloat(getComputedStyle(t).fontSize) * scale]);
}"""

IN_VIEW_JS = """(selectors) => selectors.map((sel) => {
  const r = document.querySelector(sel).getBoundingClientRect();
  return [sel, r.width > 0 && r.top >= -0.5 && r.bottom <= window.innerHeight + 0.5
    && r.left >= -0.5 && r.right <= window.innerWidth + 0.5];
})"""


def assert_no_sideways_scroll(page, after: str) -> None:
    width, inner = page.evaluate(SIDEWAYS_JS)
    assert width <= inner, f"sideways scroll after {after}: {width} > {inner}"


def axe_clean(page, artifacts, name: str) -> None:
    results = Axe().run(page)
    (artifacts / f"axe-{name}.txt").write_text(results.generate_report(), encoding="utf-8")
    violations = results.response["violations"]
    found = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in violations]
    assert found == [], found


def test_phone_never_scrolls_sideways_and_keeps_match_share_mix_together_while_dragging(
    browser, live_server, artifacts
):
    lab = open_lab(browser, live_server.url, viewport=PHONE, has_touch=True)
    page = lab.page
    try:
        assert_no_sideways_scroll(page, "loading")
        # drag: while the pointer is down, a compact strip shows Share and Mix next to Match
        plot = page.locator("#match-plot")
        plot.evaluate("(el) => el.scrollIntoView({block: 'start'})")
        mini = page.locator(".mini-view")
        expect(mini).to_be_hidden()
        handle = page.locator("#match-plot .handle").bounding_box()
        page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
        page.mouse.down()
        page.mouse.move(*lab.plane_point(-1.0, 2.5), steps=6)
        expect(mini).to_be_visible()
        lab.wait_settled()
        together = ["#match-plot", ".mini-view .mini-pie", ".mini-view .mini-mix"]
        seen = dict(page.evaluate(IN_VIEW_JS, together))
        assert all(seen.values()), seen
        # the strip does not cover the plot being dragged
        m, p = mini.bounding_box(), plot.bounding_box()
        assert m["y"] >= p["y"] + p["height"] - 0.5 or m["y"] + m["height"] <= p["y"] + 0.5
        # and it shows the same answer: the pie's labels are the table's percentages
        first_slice = page.locator("#pie text").first.text_content()
        expect(page.locator(".mini-view .mini-pie text").first).to_have_text(first_slice)
        page.screenshot(path=artifacts / "phone-dragging.png")
        page.mouse.up()
        expect(mini).to_be_hidden()
        assert_no_sideways_scroll(page, "a drag")

        # Present on a phone keeps one column
        page.locator("#present").click()
        assert_no_sideways_scroll(page, "Present")
        assert plot.bounding_box()["width"] >= 0.8 * PHONE["width"]
        page.locator("#present").click()

        # keyboard
        page.locator("#match-plot .handle").focus()
        for key in ["ArrowRight"] * 5 + ["Shift+ArrowUp"] * 3:
            page.keyboard.press(key)
        lab.wait_settled()
        assert_no_sideways_scroll(page, "arrow keys")

        # every disclosure open
        lab.open_all()
        expect(page.locator("#python-code")).to_contain_text("from math import exp, sqrt")
        assert_no_sideways_scroll(page, "opening every disclosure")

        # stepper
        for _ in range(3):
            page.locator("#stepper-next").click()
        assert_no_sideways_scroll(page, "the stepper")

        # practice: open each challenge (it opens beside the explorer or the held sequence)
        openers = page.locator(".challenge-item .challenge-open")
        assert openers.count() >= 3
        for i in range(openers.count()):
            openers.nth(i).click()
            assert_no_sideways_scroll(page, f"opening challenge {i}")

        # playback
        page.locator("#playback-scrub").fill("12")
        page.locator("#playback-play").click()
        page.wait_for_timeout(300)
        assert_no_sideways_scroll(page, "the playback")
        page.screenshot(path=artifacts / "phone-everything-open.png", full_page=True)
    finally:
        lab.close()


def test_projector_plots_scale_and_present_shows_the_three_steps_together(browser, live_server, artifacts):
    lab = open_lab(browser, live_server.url, viewport=PROJECTOR)
    page = lab.page
    try:
        for plot in ("match-plot", "mix-plot"):
            width = page.locator(f"#{plot}").bounding_box()["width"]
            assert width >= 0.4 * PROJECTOR["width"], (plot, width)
        for plot in ("match-plot", "mix-plot", "pie"):
            small = [(t, round(px, 1)) for t, px in page.evaluate(FONT_PX_JS, plot) if px < 14]
            assert small == [], (plot, small)
        page.locator("#explorer").screenshot(path=artifacts / "projector-explorer.png")

        # Present: a real button, reached with Tab, pressed with the keyboard
        button = page.locator("#present")
        expect(button).to_have_attribute("aria-pressed", "false")
        page.locator("#explorer-title").evaluate("(h) => h.scrollIntoView()")
        for _ in range(40):  # Tab from the top of the page until Present has the focus
            if page.evaluate("() => document.activeElement && document.activeElement.id") == "present":
                break
            page.keyboard.press("Tab")
        expect(button).to_be_focused()
        page.keyboard.press("Enter")
        expect(button).to_have_attribute("aria-pressed", "true")
        expect(page.locator("#explorer")).to_have_class("explorer presenting")
        expect(page.locator(".page-header")).to_be_hidden()
        # Present shows Match, Share and Mix side by side on one screen (issue 22): the planes
        # give Share some width, and their texts grow so every label still reads at 14 px or more
        seen = dict(page.evaluate(IN_VIEW_JS, ["#step-match", "#step-share", "#step-mix"]))
        assert all(seen.values()), seen
        label_px = min(px for _, px in page.evaluate(FONT_PX_JS, "match-plot"))
        assert label_px >= 14
        assert_no_sideways_scroll(page, "Present")
        page.screenshot(path=artifacts / "projector-present.png")
        page.keyboard.press("Space")
        expect(button).to_have_attribute("aria-pressed", "false")
        expect(page.locator(".page-header")).to_be_visible()
        page.keyboard.press("Enter")
        expect(button).to_have_attribute("aria-pressed", "true")
        page.keyboard.press("Escape")  # Escape leaves Present too
        expect(button).to_have_attribute("aria-pressed", "false")
    finally:
        lab.close()


def test_present_enlarges_the_plots_on_a_desktop(lab):
    page = lab.page
    before = page.locator("#match-plot").bounding_box()["width"]
    page.locator("#present").click()
    after = page.locator("#match-plot").bounding_box()["width"]
    assert after >= 1.3 * before, (before, after)
    page.locator("#present").click()
    assert page.locator("#match-plot").bounding_box()["width"] == pytest.approx(before, abs=1)


@pytest.mark.parametrize(
    ("name", "viewport"),
    [("desktop", DESKTOP), ("phone", PHONE), ("projector", PROJECTOR)],
)
def test_axe_clean_and_a_screenshot_at_each_size(browser, live_server, artifacts, name, viewport):
    lab = open_lab(browser, live_server.url, viewport=viewport, has_touch=name == "phone")
    page = lab.page
    try:
        page.screenshot(path=artifacts / f"size-{name}.png")
        lab.open_all()
        expect(page.locator("#python-code")).to_contain_text("from math import exp, sqrt")
        axe_clean(page, artifacts, name)
    finally:
        lab.close()
