"""The RoPE plane never overprints its labels: every head, every token's offset (headless Chromium)."""

from __future__ import annotations

import pytest
from blockkit import switch_to
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

# The labels of the RoPE plane whose text boxes overlap (by more than a hair): [[text, text], ...].
OVERLAPS = """() => {
  const texts = [...document.querySelectorAll('#block-rope-plane text')];
  const boxes = texts.map(t => t.getBBox());
  const out = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, b] = [boxes[i], boxes[j]];
    const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
    const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
    if (w > 0.5 && h > 0.5) out.push([texts[i].textContent, texts[j].textContent]);
  }
  return out;
}"""


def test_no_two_labels_of_the_rope_plane_overlap_at_any_offset(lab, live_server, artifacts):
    page = lab.page
    rope = switch_to(page, live_server.url, "#block-positions-rope", {"positions": "rope"})
    page.locator("#block-rope-part").scroll_into_view_if_needed()
    plane = page.locator("#block-rope-plane")
    for head, rotations in enumerate(rope["rope"]["rotations"]):
        page.locator("#block-rope-head").select_option(str(head))
        for token, rot in enumerate(rotations):
            page.locator("#block-rope-token").select_option(str(token))
            expect(page.locator("#block-rope-note")).to_contain_text(
                f"{rot['token']} at position {rot['position']}: q = {rot['display']['q']}"
            )
            expect(plane.locator("text.label")).to_have_count(4)
            # position 0 rotates by 0: q and "q rotated" share a tip, and so do the keys
            page.wait_for_function(f"() => ({OVERLAPS})().length === 0", timeout=10_000)
            labels = sorted(plane.locator("text.label").all_text_contents())
            assert labels == ["k", "k rotated", "q", "q rotated"]
            boxes = plane.locator("text.label").evaluate_all(
                "ts => ts.map(t => t.getBBox()).map(b => [b.x, b.y, b.x + b.width, b.y + b.height])"
            )
            assert all(0 <= x0 and 0 <= y0 and x1 <= 300 and y1 <= 300 for x0, y0, x1, y1 in boxes)  # inside
    plane.screenshot(path=artifacts / "block-rope-labels.png")
