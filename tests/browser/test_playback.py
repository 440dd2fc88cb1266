"""The guided playback moves, and its words and pictures come from the same frame.

Every expected string is the server's own frame (GET /api/notebook/playback),
read by the test through the live server, and compared with what is drawn.
"""

from __future__ import annotations

import pytest
from labkit import open_lab
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

# times in the first 19 s, each with a different q
TIMES = ["1", "3", "5.5", "6.5", "10", "11.5", "15", "16.5", "17.5"]


def script(page, base_url):
    return page.request.get(f"{base_url}api/notebook/playback").json()


def picture(page):
    """What the three pictures show now: the q label, the pie's slices and labels, the value plane."""
    return page.evaluate(
        """() => ({
            q: [...document.querySelectorAll('#playback-keys text')].map(t => t.textContent)
                 .find(t => t.startsWith('q [')),
            slices: [...document.querySelectorAll('#playback-pie path, #playback-pie circle')]
                 .map(p => p.getAttribute('d') || 'full').join(' '),
            pieLabels: [...document.querySelectorAll('#playback-pie text')].map(t => t.textContent),
            values: document.getElementById('playback-values').innerHTML,
            caption: document.getElementById('playback-caption').textContent,
            frame: Number(document.getElementById('playback').dataset.frame),
        })"""
    )


def seek(page, t):
    page.locator("#playback-scrub").fill(t)
    expect(page.locator("#playback-time")).to_have_text(f"{float(t):.1f} s of 31 s")


def assert_same_frame(shown, frame):
    d = frame["display"]
    assert shown["caption"] == frame["text"]
    assert shown["q"] == f"q {d['q']}"
    big = [f"{s['label']} {s['percent']}" for s in d["sources"]]
    assert sorted(shown["pieLabels"]) == sorted(big)


def test_the_pictures_move_in_every_step_and_match_the_words(lab, artifacts):
    page = lab.page
    lab.open("playback")
    expect(page.locator("#playback-caption")).not_to_be_empty()
    frames = script(page, lab.base_url)["frames"]
    seen = []
    for t in TIMES:
        seek(page, t)
        shown = picture(page)
        assert shown["frame"] == round(float(t) * 10)
        assert_same_frame(shown, frames[shown["frame"]])
        seen.append(shown)
    # the pictures change, not only a highlight: q, the pie and the arrows all differ
    for part in ("q", "slices", "values"):
        assert len({s[part] for s in seen}) == len(TIMES), part
    seek(page, "11.5")
    page.locator("#playback").screenshot(path=artifacts / "playback-share-thirds.png")
    # 19 to 22 s: the caption's q is the picture's q (it once said [3, -0.5] over [2.25, 0.625])
    seek(page, "20.5")
    shown = picture(page)
    assert shown["q"] == "q [2.375, 0.438]" and "at q = [2.375, 0.438]" in shown["caption"]


def test_playing_animates_the_pie_and_the_arrows(lab):
    page = lab.page
    lab.open("playback")
    expect(page.locator("#playback-caption")).not_to_be_empty()
    play = page.locator("#playback-play")
    play.click()
    expect(play).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#playback-caption")).to_have_attribute("aria-live", "off")
    page.wait_for_timeout(600)
    first = picture(page)
    page.wait_for_timeout(900)
    second = picture(page)
    play.click()
    expect(page.locator("#playback-caption")).to_have_attribute("aria-live", "polite")
    assert 0 < first["frame"] < second["frame"] < 190
    assert first["slices"] != second["slices"] and first["values"] != second["values"]
    assert first["q"] != second["q"]


def test_reduced_motion_gives_still_steps(browser, live_server, artifacts):
    lab = open_lab(browser, live_server.url, reduced_motion="reduce")
    try:
        page = lab.page
        lab.open("playback")
        expect(page.locator("#playback-animated")).to_be_hidden()
        expect(page.locator("#playback-step-title")).to_have_text("Step 1 of 7")
        data = script(page, lab.base_url)
        shown = []
        for n, caption in enumerate(data["captions"]):
            if n:
                page.locator("#playback-step-next").click()
            expect(page.locator("#playback-step-title")).to_have_text(f"Step {n + 1} of 7")
            now = picture(page)
            assert now["frame"] == caption["anchor_frame"] and now["caption"] == caption["text"]
            frame = data["frames"][caption["anchor_frame"]]
            assert now["q"] == f"q {frame['display']['q']}"
            page.wait_for_timeout(300)
            assert picture(page) == now  # a still: nothing moves between steps
            shown.append(now["slices"])
        assert len(set(shown)) >= 6  # each step is its own picture (step 7 returns to the start)
        expect(page.locator("#playback-step-next")).to_be_disabled()
    finally:
        lab.close()


def test_on_a_phone_the_controls_and_caption_sit_by_the_pictures(browser, live_server, artifacts):
    lab = open_lab(browser, live_server.url, viewport={"width": 390, "height": 844},
                   has_touch=True, is_mobile=True)
    try:
        page = lab.page
        lab.open("playback")
        expect(page.locator("#playback-caption")).not_to_be_empty()
        boxes = {
            name: page.locator(sel).bounding_box()
            for name, sel in [("keys", "#playback-keys"), ("pie", "#playback-pie"),
                              ("values", "#playback-values"), ("caption", "#playback-caption"),
                              ("play", "#playback-play"), ("scrub", "#playback-scrub")]
        }
        top = min(b["y"] for b in boxes.values())
        bottom = max(b["y"] + b["height"] for b in boxes.values())
        assert bottom - top <= 600, boxes  # pictures, caption and controls fit one phone screen
        pictures_bottom = max(boxes[k]["y"] + boxes[k]["height"] for k in ("keys", "pie", "values"))
        assert boxes["caption"]["y"] - pictures_bottom < 80
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        page.locator("#playback").scroll_into_view_if_needed()
        page.locator("#playback").screenshot(path=artifacts / "playback-phone-390.png")
    finally:
        lab.close()
