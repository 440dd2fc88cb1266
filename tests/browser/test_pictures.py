"""Pictures that never lie: labels never overprint, nothing blank, exports are the page's SVGs."""

from __future__ import annotations

import base64
import json
import math
import struct
import xml.etree.ElementTree as ET

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

SVG = "{http://www.w3.org/2000/svg}"

# The pictures of the explorer and its notebook (issue 13): the three steps,
# the details' score axis and strip, the geometry planes, the playback and the
# phone's drag strip. (The transformer-block section draws its own.)
PARTS = ("#explorer", "#every-number", "#geometry", "#playback", "#mini-view")
SCOPE = ", ".join(f"{part} svg" for part in PARTS)

# Every pair of rendered <text> boxes in one <svg> that intersect by more than
# half a pixel both ways, as [svg id, text, text].
OVERLAPS_JS = """(scope) => {
  const out = [];
  for (const svg of document.querySelectorAll(scope)) {
    const boxes = [...svg.querySelectorAll("text")]
      .map((t) => [t.textContent, t.getBoundingClientRect()])
      .filter(([, r]) => r.width > 0 && r.height > 0);
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, ra] = boxes[i];
        const [b, rb] = boxes[j];
        const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
        const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
        if (w > 0.5 && h > 0.5) out.push([svg.id || svg.getAttribute("class"), a, b]);
      }
    }
  }
  return out;
}"""

# Texts that stick out of their svg's box (clipped on screen).
CLIPPED_JS = """(scope) => {
  const out = [];
  for (const svg of document.querySelectorAll(scope)) {
    const box = svg.getBoundingClientRect();
    if (!box.width) continue;
    for (const t of svg.querySelectorAll("text")) {
      const r = t.getBoundingClientRect();
      if (!r.width) continue;
      const out_x = r.left < box.left - 0.5 || r.right > box.right + 0.5;
      if (out_x || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) {
        out.push([svg.id || svg.getAttribute("class"), t.textContent]);
      }
    }
  }
  return out;
}"""

TEXT_COUNT_JS = """(id) => [...document.querySelectorAll(`#${id} text`)]
  .filter((t) => t.getBoundingClientRect().width > 0).length"""

EIGHT = {
    "q": [2.0, 1.0],
    "keys": [[1, 0], [0.7, 0.7], [0, 1], [-0.7, 0.7], [-1, 0], [-0.7, -0.7], [0, -1], [0.7, -0.7]],
    "values": [[2, 0], [1.4, 1.4], [0, 2], [-1.4, 1.4], [-2, 0], [-1.4, -1.4], [0, -2], [1.4, -1.4]],
    "labels": ["A", "B", "C", "D", "E", "F", "G", "H"],
    "allowed": [True] * 8,
    "scale": None,
}


def show_state(lab, state: dict) -> None:
    """Open the page on ``state`` through the share link (``#own=``: base64url of its JSON)."""
    page = lab.page
    own = base64.urlsafe_b64encode(json.dumps(state).encode()).decode().rstrip("=")
    page.goto(f"{lab.base_url}#own={own}")
    page.reload()  # a new hash alone does not load the page again
    lab.wait_drawn()
    lab.wait_settled()


def open_pictures(lab) -> None:
    """Open the disclosures that hold more plots (score axis, detail strip, geometry, playback)."""
    for details in ("every-number", "geometry", "playback"):
        lab.open(details)


def assert_no_overprint(lab, when: str) -> None:
    page = lab.page
    assert page.evaluate(OVERLAPS_JS, SCOPE) == [], f"overlapping labels {when}"
    assert page.evaluate(CLIPPED_JS, SCOPE) == [], f"clipped labels {when}"
    # the planes do have their labels (a test of nothing would pass too)
    assert page.evaluate(TEXT_COUNT_JS, "match-plot") >= 6
    assert page.evaluate(TEXT_COUNT_JS, "mix-plot") >= 6


def test_labels_never_overprint_at_the_start_near_zero_after_keys_and_with_8_sources(lab, artifacts):
    page = lab.page
    open_pictures(lab)
    assert_no_overprint(lab, "at the start")
    # the start's score axis printed "A 0" over "C 0.707" before
    assert page.evaluate(TEXT_COUNT_JS, "score-axis") == 5

    lab.drag_to(0.05, 0.05)
    assert_no_overprint(lab, "near q = 0")

    handle = page.locator("#match-plot .handle")
    handle.focus()
    for _ in range(20):
        page.keyboard.press("ArrowDown")
    lab.wait_settled()
    expect(page.locator("#query-caption")).to_contain_text("q = [")
    assert_no_overprint(lab, "after 20 arrow presses")

    show_state(lab, EIGHT)
    open_pictures(lab)
    expect(page.locator("#match-plot .dot")).to_have_count(8)
    # eight sources, eight colours (and each also has its label)
    fills = page.evaluate(
        "() => [...document.querySelectorAll('#mix-plot circle.value')].map((c) => getComputedStyle(c).fill)"
    )
    assert len(set(fills)) == 8
    assert_no_overprint(lab, "with 8 sources")
    page.locator("#explorer").screenshot(path=artifacts / "pictures-8-sources.png")

    # zoomed out to about ±14 the 8 keys stay apart: an inset shows them at their own
    # scale (distinct tips, visible shafts), labelled there
    show_state(lab, {**EIGHT, "q": [13.0, -13.0]})
    open_pictures(lab)
    view = json.loads(page.locator("#match-plot").get_attribute("data-view"))
    assert view["xmax"] >= 13
    assert_no_overprint(lab, "zoomed out with 8 sources")
    tips = page.evaluate(
        """() => [...document.querySelectorAll('#match-plot .key-inset .dot')].map((d) => {
          const r = d.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })"""
    )
    assert len(tips) == 8
    gaps = [math.dist(a, b) for i, a in enumerate(tips) for b in tips[i + 1 :]]
    assert min(gaps) >= 5, f"key tips closer than 5 px: {min(gaps):.1f}"
    expect(page.locator("#match-plot .key-inset text")).to_have_text("keys, zoomed in")
    # arrowheads follow their arrows: no head is longer than 40% of its arrow
    heads = page.evaluate(
        """() => [...document.querySelectorAll('#match-plot .arrow-group')].map((g) => {
          const l = g.querySelector('line'); const d = g.querySelector('path').getAttribute('d');
          const [tip] = d.slice(1).split(' L').map((p) => p.split(',').map(Number));
          const shaft = Math.hypot(l.x2.baseVal.value - l.x1.baseVal.value,
                                   l.y2.baseVal.value - l.y1.baseVal.value);
          const head = Math.hypot(tip[0] - l.x2.baseVal.value, tip[1] - l.y2.baseVal.value);
          return [shaft, head];
        })"""
    )
    assert len(heads) == 17  # 8 keys, q, and the 8 keys again in the zoom inset
    for shaft, head in heads:
        assert head <= 0.4 * (shaft + head) + 1e-6 and shaft > 0
    page.locator("#explorer .steps").screenshot(path=artifacts / "pictures-8-sources-zoomed-out.png")


def q_label(page) -> str:
    return page.locator("#match-plot text.amber-text").first.text_content()


def test_pictures_agree_with_the_numbers_at_and_past_the_drawing_limit(lab, artifacts):
    """Past ±1,000,000 the lab refuses (one limit, message at the field); up to it, all is drawn."""
    page = lab.page
    lab.recorder.allow(r"status of 422")  # the refusals below
    lab.open("every-number")
    field = page.locator('input[data-field="q[0]"]')
    field.fill("-1e300")
    field.press("Enter")
    expect(page.locator('[data-error-for="q[0]"]')).to_contain_text("at least -1,000,000")
    lab.wait_for_query("[2, 1]")
    # the Match plot shows the q the numbers show, not a stale or a refused one
    assert q_label(page) == "q [2, 1]"
    expect(page.locator("#summary")).to_contain_text("Output o = [-0.004, 0.868]")

    # at the limit everything is drawn: no blank plane, no off-plot marker
    at_limit = {
        "q": [1e6, -1e6],
        "keys": [[-1, 2], [1, 0], [0, 1]],
        "values": [[1e6, 0], [0, 1e6], [-1e6, -1e6]],
        "labels": ["A", "B", "C"],
        "allowed": [True] * 3,
        "scale": None,
    }
    show_state(lab, at_limit)
    lab.wait_for_query("[1000000, -1000000]")
    assert q_label(page) == "q [1000000, -1000000]"
    mix = page.locator("#mix-plot")
    expect(mix.locator("circle.value")).to_have_count(3)
    expect(mix.locator("rect.output")).to_have_count(1)
    expect(page.locator("#explorer .off-note")).to_have_count(0)
    ticks = mix.locator("text.tick").all_text_contents()
    assert any("e" in t for t in ticks), ticks  # big steps print short: "5e5"
    # the keys, a pixel long at this zoom, get the inset
    expect(page.locator("#match-plot .key-inset .dot")).to_have_count(3)
    view = json.loads(page.locator("#match-plot").get_attribute("data-view"))
    assert view["xmin"] <= -1e6 and view["xmax"] >= 1e6
    assert page.evaluate(OVERLAPS_JS, SCOPE) == []
    page.locator("#explorer .steps").screenshot(path=artifacts / "pictures-at-the-limit.png")


def download(page, selector, folder):
    with page.expect_download() as info:
        page.locator(selector).click()
    d = info.value
    path = folder / d.suggested_filename
    d.save_as(path)
    return path


def test_exports_are_the_pages_pictures(lab, browser, artifacts, tmp_path):
    page = lab.page
    lab.drag_to(1.5, -1.0)
    colours = page.evaluate(
        """() => [0, 1, 2].map((i) => ({
          value: getComputedStyle(document.querySelector(`#mix-plot circle.value.src-${i}`)).fill,
          carry: getComputedStyle(document.querySelector(`#mix-plot line.arrow.src-${i}`)).stroke,
          tip: getComputedStyle(document.querySelector(`#match-plot circle.dot.src-${i}`)).fill,
        }))"""
    )
    assert len({c["value"] for c in colours}) == 3  # three sources, three colours
    files = {}
    for kind in ("key", "value"):
        path = download(page, f'[data-export="{kind}-svg"]', tmp_path)
        files[kind] = path.read_text()
        root = ET.fromstring(files[kind])
        assert root.tag == f"{SVG}svg"

        def find(cls, tag, root=root):
            hits = [e for e in root.iter(f"{SVG}{tag}") if cls <= set(e.get("class", "").split())]
            assert len(hits) == 1, (cls, len(hits))
            return hits[0]

        for i, c in enumerate(colours):
            if kind == "value":
                assert find({"value", f"src-{i}"}, "circle").get("fill") == c["value"]
                assert find({"arrow", f"src-{i}"}, "line").get("stroke") == c["carry"]
            else:
                assert find({"dot", f"src-{i}"}, "circle").get("fill") == c["tip"]
        # axes with ticks and numbers
        ticks = [e.text for e in root.iter(f"{SVG}text") if "tick" in e.get("class", "")]
        assert "0" in ticks and any(t.startswith("−") for t in ticks) and len(ticks) >= 6
        # the file carries its own look: no stylesheet, colours as attributes
        assert "<style" not in files[kind] and 'fill="rgb(' in files[kind]

    # nothing cropped: drawn alone (no lab.css), every text lies inside the picture
    bare = browser.new_page()
    try:
        for kind, text in files.items():
            bare.set_content(text.split("?>", 1)[1])
            out = bare.evaluate(
                """() => {
                  const svg = document.querySelector('svg'); const b = svg.getBoundingClientRect();
                  return [...svg.querySelectorAll('text')].filter((t) => {
                    const r = t.getBoundingClientRect();
                    return r.left < b.left || r.right > b.right || r.top < b.top || r.bottom > b.bottom;
                  }).map((t) => t.textContent);
                }"""
            )
            assert out == [], (kind, out)
            bare.screenshot(path=artifacts / f"export-{kind}-space.png")
    finally:
        bare.close()
    png = download(page, '[data-export="value-png"]', tmp_path).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    root = ET.fromstring(files["value"])
    assert (width, height) == (int(root.get("width")) * 2, int(root.get("height")) * 2)
    # the PNG is the same picture: each value's dot has the page's colour for its source
    x0, y0, vb_w, _ = (float(v) for v in root.get("viewBox").split())
    scale = width / vb_w
    dots = []
    for i in range(3):
        wanted = {"value", f"src-{i}"}
        dot = next(e for e in root.iter(f"{SVG}circle") if wanted <= set(e.get("class").split()))
        dots.append([(float(dot.get("cx")) - x0) * scale, (float(dot.get("cy")) - y0) * scale])
    bare = browser.new_page()
    try:
        bare.set_content(f'<img id="png" src="data:image/png;base64,{base64.b64encode(png).decode()}">')
        pixels = bare.evaluate(
            """(dots) => new Promise((resolve) => {
              const img = document.getElementById("png");
              const go = () => {
                const c = document.createElement("canvas");
                c.width = img.naturalWidth; c.height = img.naturalHeight;
                const ctx = c.getContext("2d"); ctx.drawImage(img, 0, 0);
                resolve(dots.map(([x, y]) => {
                  const [r, g, b] = ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data;
                  return `rgb(${r}, ${g}, ${b})`;
                }));
              };
              if (img.complete) go(); else img.onload = go;
            })""",
            dots,
        )
    finally:
        bare.close()
    assert pixels == [c["value"] for c in colours]
