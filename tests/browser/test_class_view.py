"""A class can see it (issue 22): Present on a projector, the phone strip, the "fit" heatmap, scroll cues.

- Present at 1280x720 and 150% (853x480 CSS px): Match, Share and Mix on one screen, in that order;
- on a 390 px phone, a strip with the shares and the output stays on screen while q is dragged
  (touch), off q's plot, with the Share table's numbers;
- the real-model heatmap at "fit" zoom draws inside its box at 390, 853 and 1280 px;
- a wide grid on a phone says that it scrolls (a fade at the edge with more beyond it) and can be
  scrolled from the keyboard (a focusable, named region).
"""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from labkit import open_lab
from playwright.sync_api import expect
from realkit import real_model_view, trace

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
PANELS = ["#step-match", "#step-share", "#step-mix"]

BOXES_JS = """(selectors) => selectors.map((sel) => {
  const r = document.querySelector(sel).getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width};
})"""
VIEWPORT_JS = "() => [innerWidth, innerHeight, document.documentElement.scrollWidth]"


def axe_clean(page, artifacts, name: str) -> None:
    results = Axe().run(page)
    (artifacts / f"axe-{name}.txt").write_text(results.generate_report(), encoding="utf-8")
    violations = results.response["violations"]
    found = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in violations]
    assert found == [], found


def inside(box: dict, width: float, height: float) -> bool:
    return box["width"] > 0 and box["left"] >= -0.5 and box["top"] >= -0.5 and (
        box["right"] <= width + 0.5 and box["bottom"] <= height + 0.5
    )


def in_reading_order(boxes: list[dict]) -> bool:
    """Each box lies wholly right of, or wholly below, the one before it."""
    pairs = zip(boxes, boxes[1:])
    return all(b["left"] >= a["right"] - 0.5 or b["top"] >= a["bottom"] - 0.5 for a, b in pairs)


@pytest.mark.parametrize(
    ("name", "viewport", "scale"),
    [
        ("1280x720-at-150", {"width": 853, "height": 480}, 1.5),
        ("1280x720", {"width": 1280, "height": 720}, 1),
        ("1024x768", {"width": 1024, "height": 768}, 1),
        ("1920x1080", {"width": 1920, "height": 1080}, 1),
    ],
)
def test_present_shows_match_share_and_mix_together_in_order(
    browser, live_server, artifacts, name, viewport, scale
):
    lab = open_lab(browser, live_server.url, viewport=viewport, device_scale_factor=scale)
    page = lab.page
    try:
        page.locator("#present").click()
        expect(page.locator("#explorer")).to_have_class("explorer presenting")
        lab.wait_settled()
        width, height, scroll_width = page.evaluate(VIEWPORT_JS)
        boxes = page.evaluate(BOXES_JS, PANELS)
        # no scrolling: all three panels are on the screen Present shows, side by side, in order
        assert [inside(b, width, height) for b in boxes] == [True, True, True], (boxes, width, height)
        assert in_reading_order(boxes), boxes
        assert scroll_width <= width
        # the pictures inside them too: the plane, the pie and its table, the value plane
        parts = page.evaluate(BOXES_JS, ["#match-plot", "#pie", "#score-table", "#mix-plot"])
        assert all(inside(b, width, height) for b in parts), parts
        page.screenshot(path=artifacts / f"present-{name}.png")
        axe_clean(page, artifacts, f"present-{name}")
        page.keyboard.press("Escape")
        expect(page.locator("#present")).to_have_attribute("aria-pressed", "false")
    finally:
        lab.close()


def strip_and_table(page) -> tuple[list[str], list[str], str, str]:
    """The strip's share items, the Share table's "label percent" per row, the strip's output, the summary."""
    strip = page.locator(".phone-strip .strip-share").all_inner_texts()
    rows = page.locator("#score-table tbody tr").all()
    table = [f"{r.locator('th').inner_text().strip()} {r.locator('td').nth(1).inner_text()}" for r in rows]
    output = page.locator(".phone-strip .strip-output").inner_text()
    return strip, table, output, page.locator("#summary").inner_text()


def test_phone_strip_shows_the_shares_and_the_output_while_q_is_dragged(browser, live_server, artifacts):
    lab = open_lab(browser, live_server.url, viewport=PHONE, has_touch=True, device_scale_factor=3)
    page = lab.page
    try:
        strip = page.locator(".phone-strip")
        plot = page.locator("#match-plot")
        plot.evaluate("(el) => el.scrollIntoView({block: 'start'})")
        # at rest it is on screen already, under the plot, with the table's numbers
        expect(strip).to_be_in_viewport(ratio=1)
        shares, table, output, summary = strip_and_table(page)
        assert shares == table == ["A 14%", "B 58%", "C 28%"]
        assert output == "o = [-0.004, 0.868]" and f"Output {output}." in summary
        axe_clean(page, artifacts, "phone-strip")

        # drag q with a finger (touch pointer events)
        cdp = page.context.new_cdp_session(page)

        def touch(kind: str, x: float | None = None, y: float | None = None) -> None:
            points = [] if kind == "touchEnd" else [{"x": x, "y": y}]
            cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

        q = page.locator("#match-plot .handle").bounding_box()
        start = (q["x"] + q["width"] / 2, q["y"] + q["height"] / 2)
        end = lab.plane_point(-1.0, 2.5)
        touch("touchStart", *start)
        for i in range(1, 7):
            touch("touchMove", start[0] + (end[0] - start[0]) * i / 6, start[1] + (end[1] - start[1]) * i / 6)
            lab.wait_settled()
            # during the drag: wholly on screen, off the plot being dragged, the table's numbers
            expect(strip).to_be_in_viewport(ratio=1)
            s, p = strip.bounding_box(), plot.bounding_box()
            assert s["y"] >= p["y"] + p["height"] - 0.5 or s["y"] + s["height"] <= p["y"] + 0.5, (s, p)
            shares, table, output, summary = strip_and_table(page)
            assert shares == table, (shares, table)
            assert f"Output {output}." in summary, (output, summary)
        assert shares != ["A 14%", "B 58%", "C 28%"]  # q moved, and the strip followed
        expect(page.locator(".phone-strip .mini-view")).to_be_visible()
        page.screenshot(path=artifacts / "phone-strip-dragging.png")
        touch("touchEnd")
        expect(page.locator(".phone-strip .mini-view")).to_be_hidden()
        expect(strip).to_be_in_viewport(ratio=1)
        assert page.evaluate(VIEWPORT_JS)[2] <= PHONE["width"]
    finally:
        lab.close()


# About 200 MiniLM tokens: at "fit" the old heatmap took 6 px a cell, about 1,350 px wide.
LONG = " ".join(["the cat sat on the mat and looked at the dog"] * 18)

BOX_IN_BOX_JS = """() => {
  const svg = document.querySelector("#rm-heatmap").getBoundingClientRect();
  const fig = document.querySelector("#rm-heatmap").closest(".rm-figure");
  const box = fig.getBoundingClientRect();
  return [[svg.left, svg.top, svg.right, svg.bottom], [box.left, box.top, box.right, box.bottom],
          fig.scrollWidth <= fig.clientWidth, innerWidth];
}"""


@pytest.mark.models
def test_the_fit_heatmap_draws_inside_its_box_at_each_width(browser, live_server, artifacts):
    with real_model_view(browser, live_server, 390, 844) as (page, _):
        trace(page, LONG)
        cells = page.locator("#rm-heatmap image.rm-cells-image")
        expect(cells).to_have_attribute("data-n", "200", timeout=60_000)
        for width in (390, 853, 1280):
            page.set_viewport_size({"width": width, "height": 844})
            # draw again at the new width: another zoom, then "fit"
            page.locator("#rm-zoom").select_option("12")
            page.locator("#rm-zoom").select_option("0")
            svg, box, no_scroll, inner = page.evaluate(BOX_IN_BOX_JS)
            assert box[0] - 0.5 <= svg[0] and svg[2] <= box[2] + 0.5, (width, svg, box)
            assert box[1] - 0.5 <= svg[1] and svg[3] <= box[3] + 0.5, (width, svg, box)
            assert no_scroll, width  # it fits: nothing to scroll sideways inside the figure
            assert box[2] <= inner + 0.5, (width, box)
            page.locator("#rm-heatmap").screenshot(path=artifacts / f"fit-heatmap-{width}.png")


CUE_JS = """(sel) => {
  const el = document.querySelector(sel);
  const cs = getComputedStyle(el);
  return {left: parseFloat(cs.getPropertyValue("--cue-l")), right: parseFloat(cs.getPropertyValue("--cue-r")),
          mask: cs.maskImage || cs.webkitMaskImage, scrollLeft: el.scrollLeft,
          overflow: el.scrollWidth - el.clientWidth};
}"""


def cue_when(page, ready, tries: int = 50) -> dict:
    """The grid's cue once ``ready(cue)`` holds (a scroll lands on a later frame), or as it is."""
    for _ in range(tries):
        cue = page.evaluate(CUE_JS, "#rm-model-grid")
        if ready(cue):
            break
        page.wait_for_timeout(20)
    return cue


@pytest.mark.models
def test_a_wide_grid_on_a_phone_shows_that_it_scrolls(browser, live_server, artifacts):
    with real_model_view(browser, live_server, PHONE["width"], PHONE["height"]) as (page, _):
        trace(page, "The cat sat on the mat.")
        grid = page.locator("#rm-model-grid")
        expect(grid.locator(".rm-thumb").first).to_be_visible()
        grid.scroll_into_view_if_needed()
        # reachable and named, so a keyboard user can scroll it
        expect(grid).to_have_attribute("tabindex", "0")
        expect(grid).to_have_attribute("role", "group")
        expect(grid).to_have_accessible_name("The whole model: every layer × head")
        cue = page.evaluate(CUE_JS, "#rm-model-grid")
        assert cue["overflow"] > 100, cue  # six layers of twelve heads: wider than a phone
        # the cue: a fade at the right edge (more beyond it), none at the left before scrolling
        assert "linear-gradient" in cue["mask"], cue
        assert cue["left"] == 0 and cue["right"] > 0, cue
        page.screenshot(path=artifacts / "wide-grid-phone-start.png")
        grid.focus()
        page.keyboard.press("ArrowRight")
        middle = cue_when(page, lambda c: c["scrollLeft"] > 0 and c["left"] > 0)
        assert middle["left"] > 0 and middle["right"] > 0, middle
        # scrolled to the end: the fade moves to the left edge only
        grid.evaluate("(el) => { el.scrollLeft = el.scrollWidth; }")
        end = cue_when(page, lambda c: c["right"] == 0)  # the scroll timeline updates on a frame
        assert end["left"] > 0 and end["right"] == 0, end
        axe_clean(page, artifacts, "wide-grid-phone")
