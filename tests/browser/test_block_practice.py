"""The block section: editable weights, practice recorded in the study history,
"open in the explorer", the playback, and the section at desktop and phone sizes."""

from __future__ import annotations

import json
import urllib.error

import pytest
from axe_playwright_python.sync_playwright import Axe
from blockkit import api, go_to_step, shown_tensor, wait_block
from labkit import open_lab
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


def edit(page, matrix: str, field: str, value: str) -> None:
    page.locator("#block-edit-pick").select_option(matrix)
    box = page.locator(f'#block-edit-part input[data-field="{field}"]')
    box.fill(value)
    box.press("Enter")


def refused(base_url: str, body: dict) -> dict:
    try:
        api(base_url, "", body)
    except urllib.error.HTTPError as err:
        assert err.code == 422
        return json.loads(err.read())
    raise AssertionError("the API accepted it")


def test_weights_are_editable_errors_stay_next_to_their_field_and_reset_restores(lab, live_server):
    page = lab.page
    lab.recorder.allow("status of 422")  # the refused request below, answered 422 on purpose
    example = api(live_server.url, "/example")
    wait_block(page)
    # not a number: refused in the browser, next to the field; the walk keeps its numbers
    edit(page, "wo", "weights.w_o[0][0]", "abc")
    error = page.locator('[data-error-for="weights.w_o[0][0]"]')
    expect(error).to_contain_text("is not a number")
    # too large: the server's message lands next to the same field
    weights = json.loads(json.dumps(example["weights"]))
    weights["w_o"][0][0] = 5000
    detail = refused(live_server.url, {"weights": weights})["detail"][0]
    edit(page, "wo", "weights.w_o[0][0]", "5000")
    expect(error).to_have_text(detail["msg"].removeprefix(f"{detail['field']}: "))
    expect(page.locator('input[data-field="weights.w_o[0][0]"]')).to_have_attribute("aria-invalid", "true")
    # a good number: the walk is the API's walk for those weights
    weights["w_o"][0][0] = 2
    answer = api(live_server.url, "", {"weights": weights})
    edit(page, "wo", "weights.w_o[0][0]", "2")
    wait_block(page, answer["summary"])
    expect(error).to_be_empty()
    go_to_step(page, "combine")
    display, _ = shown_tensor(page, "#block-step-tensors", "attn")
    assert display == next(t for t in answer["steps"][4]["tensors"] if t["name"] == "attn")["display"]
    page.locator("#block-reset").click()
    wait_block(page, api(live_server.url, "", {})["summary"])
    expect(page.locator('input[data-field="weights.w_o[0][0]"]')).to_have_value("0.5")


def test_challenges_are_checked_hinted_answered_and_recorded_in_the_history(lab, live_server, artifacts):
    page = lab.page
    practice = api(live_server.url, "/practice")
    assert len(practice["challenges"]) >= 5
    wait_block(page)
    expect(page.locator(".block-challenge")).to_have_count(len(practice["challenges"]))

    # silent head: first a wrong state (the feedback gives a direction, not the answer) ...
    page.locator("#block-challenge-silent-head > summary").click()
    body = page.locator("#block-challenge-silent-head")
    body.locator("#bresp-silent-head-head-2").check()
    body.locator('[data-action="check"]').click()
    feedback = page.locator('[data-feedback="silent-head"]')
    expect(feedback).to_contain_text("Not yet.")
    expect(feedback).not_to_contain_text("W_O's")
    body.locator('[data-action="hint"]').click()
    expect(body.locator(".hint-list li")).to_have_count(1)
    expect(body.locator(".hint-list li")).to_have_text(practice["challenges"][1]["hints"][0])
    # ... then make head 2 write nothing: zero the rows of W_O that read its columns
    edit(page, "wo", "weights.w_o[2][2]", "0")
    edit(page, "wo", "weights.w_o[3][3]", "0")
    wait_block(page)
    expect(page.locator('input[data-field="weights.w_o[3][3]"]')).to_have_value("0")
    body.locator('[data-action="retry"]').click()
    expect(body.locator(".attempt-label")).to_have_text("Attempt 2 of 2")
    body.locator("#bresp-silent-head-head-2").check()
    body.locator('[data-action="check"]').click()
    expect(feedback).to_contain_text("✓ Goal met.")

    # LayerNorm's statistics, predicted from the API's own numbers for token A
    row = next(
        t for t in api(live_server.url, "", {})["steps"][1]["tensors"] if t["name"] == "norm_1.output"
    )["values"][0]
    mean = sum(row) / 4
    var = sum((v - mean) ** 2 for v in row) / 4
    page.locator("#block-challenge-ln-stats > summary").click()
    ln = page.locator("#block-challenge-ln-stats")
    ln.locator("#bresp-ln-stats-0").fill(f"{mean:.2f}")
    ln.locator("#bresp-ln-stats-1").fill(f"{var:.2f}")
    ln.locator('[data-action="check"]').click()
    expect(page.locator('[data-feedback="ln-stats"]')).to_contain_text("✓ Goal met.")

    # show the answer: recorded as help, its words come from the server
    page.locator("#block-challenge-scale-x10 > summary").click()
    sx = page.locator("#block-challenge-scale-x10")
    sx.locator('[data-action="answer"]').click()
    expect(sx.locator('[data-answer="scale-x10"]')).to_contain_text("Answer (recorded as help)")

    history = page.locator("#block-history")
    expect(history.locator('[data-block-challenge="silent-head"]')).to_have_count(2)
    expect(history).to_contain_text("Find a head whose removal changes nothing · attempt 1")
    expect(history.locator('[data-block-challenge="scale-x10"]')).to_contain_text("Showed the answer")
    solved = history.locator('[data-block-challenge="silent-head"][data-attempt="2"] [data-checked]')
    expect(solved).to_have_attribute("data-checked", "met")
    expect(
        history.locator('[data-block-challenge="silent-head"][data-attempt="1"] [data-checked]')
    ).to_have_attribute("data-checked", "not-met")
    expect(history.locator('[data-block-challenge="silent-head"][data-attempt="1"]')).to_contain_text(
        "hint 1 of 3"
    )
    expect(history.locator('[data-block-challenge="ln-stats"] [data-checked]')).to_have_attribute(
        "data-checked", "met"
    )
    assert page.locator("#history #block-history").count() == 1  # inside the page's study history
    page.locator("#block-practice-part").screenshot(path=artifacts / "block-practice.png")
    page.locator("#history").screenshot(path=artifacts / "block-history.png")


def _wait_held(page, held: list) -> None:
    """Let the page run until the route handler has held a request (handlers run while Playwright waits)."""
    for _ in range(500):
        if held:
            return
        page.wait_for_timeout(20)
    raise AssertionError("the request was never made")


def _hold_first(page, matches) -> list:
    """Hold the first request ``matches`` (a URL predicate) until the test continues it; pass the rest."""
    held, seen = [], []

    def handle(route) -> None:
        if seen:
            route.continue_()
        else:
            seen.append(True)
            held.append(route)

    page.route(matches, handle)
    return held


def _ln_stats_numbers(base_url: str) -> tuple[float, float]:
    tensors = api(base_url, "", {})["steps"][1]["tensors"]
    row = next(t for t in tensors if t["name"] == "norm_1.output")["values"][0]
    mean = sum(row) / 4
    return mean, sum((v - mean) ** 2 for v in row) / 4


def test_a_check_pressed_while_a_study_answer_arrives_still_counts(lab, live_server):
    # Under load the "open" of a disclosure is answered while the learner presses Check: the
    # answer's redraw must not replace the button under the pointer (the click would be lost).
    page = lab.page
    wait_block(page)
    held = _hold_first(page, lambda url: url.endswith("/api/block/study"))
    page.locator("#block-challenge-ln-stats > summary").click()
    _wait_held(page, held)
    ln = page.locator("#block-challenge-ln-stats")
    mean, var = _ln_stats_numbers(live_server.url)
    ln.locator("#bresp-ln-stats-0").fill(f"{mean:.2f}")
    ln.locator("#bresp-ln-stats-1").fill(f"{var:.2f}")
    box = ln.locator('[data-action="check"]').bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    held.pop().continue_()  # the open's answer arrives between the press and the release
    expect(page.locator('#block-history [data-block-challenge="ln-stats"]')).to_have_count(1)
    page.mouse.up()
    expect(page.locator('[data-feedback="ln-stats"]')).to_contain_text("✓ Goal met.")
    assert float(ln.locator("#bresp-ln-stats-0").input_value()) == float(f"{mean:.2f}")  # the saved response


def test_a_check_judges_the_block_after_the_edit_in_flight(lab, live_server):
    # Edit, then Check before the walk of the edit has answered: the check waits for it.
    page = lab.page
    wait_block(page)
    edit(page, "wo", "weights.w_o[2][2]", "0")
    wait_block(page)
    page.locator("#block-challenge-silent-head > summary").click()
    body = page.locator("#block-challenge-silent-head")
    expect(page.locator('#block-history [data-block-challenge="silent-head"]')).to_have_count(1)
    held = _hold_first(page, lambda url: url.endswith("/api/block"))
    edit(page, "wo", "weights.w_o[3][3]", "0")
    _wait_held(page, held)
    body.locator("#bresp-silent-head-head-2").check()
    body.locator('[data-action="check"]').click()
    held.pop().continue_()
    expect(page.locator('[data-feedback="silent-head"]')).to_contain_text("✓ Goal met.")
    wait_block(page)


def test_open_in_explorer_shows_that_heads_q(lab, live_server, artifacts):
    page = lab.page
    answer = api(live_server.url, "", {})
    wait_block(page)
    head = answer["heads"][1]
    page.locator('[data-open="1-2"]').click()
    shown = "[" + ", ".join(head["display"]["q"][2]) + "]"
    lab.wait_for_query(shown)
    lab.wait_settled()
    expect(page.locator("#explorer-title")).to_be_focused()
    assert lab.precise_q() == head["explorer"][2]["q"]
    expect(page.locator("#block-history")).to_contain_text("explorer")
    page.locator("#explorer").screenshot(path=artifacts / "block-open-in-explorer.png")


def test_playback_animates_and_steps_without_motion_when_reduced(browser, live_server, artifacts):
    answer = api(live_server.url, "", {})
    lab = open_lab(browser, live_server.url, reduced_motion="reduce")
    try:
        page = lab.page
        wait_block(page)
        expect(page.locator("#block-play")).to_be_hidden()
        expect(page.locator("#block-play-mode")).to_contain_text("Reduced motion is on")
        page.locator("#block-play-next").click()
        step = answer["steps"][1]
        expect(page.locator("#block-play-caption")).to_have_text(
            f"2 of 8 · {step['title']}: {step['caption']['text']}"
        )
        expect(page.locator("#block-play-diagram .diagram-box.current")).to_have_attribute(
            "data-step", step["id"]
        )
        expect(page.locator("#block-play-stage")).to_have_attribute("data-step", step["id"])
        for t in step["tensors"][-2:]:  # the step's still pictures, the API's numbers
            display, _ = shown_tensor(page, "#block-play-stage", t["name"])
            assert display == t["display"]
    finally:
        lab.close()
    lab = open_lab(browser, live_server.url, reduced_motion="no-preference")
    try:
        page = lab.page
        wait_block(page)
        marker = page.locator("#block-play-diagram .diagram-marker")
        start = marker.get_attribute("cx")
        page.locator("#block-play").click()
        expect(page.locator("#block-play")).to_have_attribute("aria-pressed", "true")
        expect(page.locator("#block-play-caption")).to_contain_text("2 of 8", timeout=10000)
        assert marker.get_attribute("cx") != start
        page.locator("#block-play-part").screenshot(path=artifacts / "block-playback.png")
    finally:
        lab.close()


def _open_block_parts(page) -> None:
    for item in page.locator("#block details").all():
        if not item.evaluate("d => d.open"):
            item.locator("summary").first.click()


def _serious(results) -> list:
    return [
        (v["id"], [n["target"] for n in v["nodes"]])
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def test_axe_is_clean_on_the_block_at_desktop(lab, artifacts):
    page = lab.page
    wait_block(page)
    _open_block_parts(page)
    page.locator('#block-step-tensors td[data-row="0"][data-col="0"]').first.focus()
    results = Axe().run(page, context="#block")
    (artifacts / "axe-block-desktop.txt").write_text(results.generate_report(), encoding="utf-8")
    page.locator("#block").screenshot(path=artifacts / "block-desktop.png")
    assert _serious(results) == []


def test_the_block_fits_a_phone_and_axe_is_clean(browser, live_server, artifacts):
    lab = open_lab(browser, live_server.url, viewport=PHONE, has_touch=True, is_mobile=True)
    try:
        page = lab.page
        wait_block(page)
        _open_block_parts(page)
        for step in ("project", "mlp"):
            go_to_step(page, step)
            widths = page.evaluate(
                "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth,"
                " Math.ceil(document.getElementById('block').getBoundingClientRect().right)]"
            )
            assert widths[0] <= widths[1], widths  # no sideways scroll
            assert widths[2] <= PHONE["width"], widths
        page.locator("#block-edit-pick").select_option("w1")  # the widest matrix scrolls in its own box
        grid = page.locator("#block-edit-w1")
        assert grid.evaluate("g => g.getBoundingClientRect().right") <= PHONE["width"]
        results = Axe().run(page, context="#block")
        (artifacts / "axe-block-phone.txt").write_text(results.generate_report(), encoding="utf-8")
        page.locator("#block").screenshot(path=artifacts / "block-phone.png")
        assert _serious(results) == []
    finally:
        lab.close()
