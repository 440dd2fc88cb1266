"""Label boxes without a layout (static/js/shared/textbox.js): they hold the real boxes; no getBBox per frame.

Label placement used to call getBBox() on every text of every plot on every
frame of a drag: a forced synchronous layout of the whole page per plot.
textbox.js estimates each box from the text's font instead. The estimate must
be conservative (it contains the real box), or labels placed apart could still
touch; and a redraw must not measure the page at all.
"""

from __future__ import annotations

import pytest
from labkit import DESKTOP, open_lab
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

PLOTS = "#match-plot, #mix-plot, #pie, #strip, #score-axis, #detail-strip"

# For every rendered <text> of the plots: [text, how far the real box sticks out
# of the estimate (user units, <= 0 when contained), estimate's width, real width].
COMPARE_JS = """async (plots) => {
  // The page's own instance of the module (its versioned URL), not a second copy.
  const url = document.querySelector('link[rel="modulepreload"][href$="/js/shared/textbox.js"]').href;
  const { textBox } = await import(url);
  const out = [];
  for (const t of document.querySelectorAll(plots.split(", ").map((p) => `${p} text`).join(", "))) {
    const real = t.getBBox();
    const est = textBox(t);
    if (!(real.width > 0) || !est) continue;
    const out_by = Math.max(est.x - real.x, real.x + real.width - (est.x + est.width),
      est.y - real.y, real.y + real.height - (est.y + est.height));
    out.push([t.textContent, out_by, est.width, real.width]);
  }
  return out;
}"""

COUNT_GETBBOX_JS = """() => {
  window.__getBBoxCalls = 0;
  const real = SVGGraphicsElement.prototype.getBBox;
  SVGGraphicsElement.prototype.getBBox = function (...args) {
    window.__getBBoxCalls += 1;
    return real.apply(this, args);
  };
}"""


def press(lab, key: str, times: int) -> None:
    handle = lab.page.locator("#match-plot .handle")
    handle.focus()
    for _ in range(times):
        handle.press(key)
    lab.wait_settled()


@pytest.mark.parametrize(
    ("name", "viewport", "present"),
    [
        ("desktop", DESKTOP, False),
        ("phone", {"width": 390, "height": 844}, False),
        ("projector, Present", {"width": 1024, "height": 768}, True),
    ],
)
def test_estimated_boxes_contain_the_real_ones(browser, live_server, name, viewport, present):
    lab = open_lab(browser, live_server.url, viewport=viewport)
    page = lab.page
    try:
        lab.wait_drawn()
        if present:
            page.locator("#present").click()
            expect(page.locator("#present")).to_have_attribute("aria-pressed", "true")
        lab.open("every-number")
        press(lab, "ArrowDown", 7)  # q = [2, 0.3]: other numbers, other widths
        lab.wait_for_query("[2, 0.3]")
        rows = page.evaluate(COMPARE_JS, PLOTS)
        assert len(rows) >= 20, rows  # the plots do have their labels
        sticking_out = [r for r in rows if r[1] > 0.01]
        assert sticking_out == [], (name, sticking_out)
        # conservative, but not absurdly so: at most a few units wider than the text
        too_wide = [r for r in rows if r[2] > r[3] * 1.1 + 4]
        assert too_wide == [], (name, too_wide)
    finally:
        lab.close()


def test_a_redraw_places_labels_without_measuring_the_page(lab):
    page = lab.page
    lab.wait_drawn()
    press(lab, "ArrowRight", 1)  # the first draws calibrated the fonts
    lab.wait_for_query("[2.1, 1]")
    page.evaluate(COUNT_GETBBOX_JS)
    press(lab, "ArrowUp", 5)
    lab.wait_for_query("[2.1, 1.5]")
    expect(page.locator("#match-plot text.label").first).to_be_visible()
    assert page.evaluate("() => window.__getBBoxCalls") == 0
