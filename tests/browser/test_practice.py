"""Practice that teaches, in a real browser.

Wrong answers get the direction of the error, never the right numbers; the
answer comes only from "Show answer", which the history records. Each
challenge opens beside the part of the page it uses; the history lists every
check, right or not yet, and survives a JSON export and import.
"""

from __future__ import annotations

import json

import pytest
from labkit import open_lab
from playwright.sync_api import expect

from attnlab.lab.explorer.challenge import GOAL
from attnlab.lab.explorer.sequence import STARTING
from attnlab.lab.notebook import practice

pytestmark = pytest.mark.browser

PANEL = "#active-challenge"


def open_challenge(page, cid):
    page.locator(f"#challenge-{cid} button.challenge-open").click()
    expect(page.locator(PANEL)).to_have_attribute("data-challenge", cid)
    expect(page.locator(f'.history-group[data-challenge="{cid}"]')).not_to_have_count(0)


def fill_response(page, cid, values):
    for j, x in enumerate(values):
        page.locator(f"#resp-{cid}-{j}").fill(str(x))


def check(page):
    with page.expect_response("**/api/notebook/study"):
        page.locator(f'{PANEL} [data-action="check"]').click()


def test_wrong_answers_point_the_way_and_only_show_answer_tells(lab, artifacts):
    page = lab.page
    right = practice.answer("zero-q", STARTING)["text"]  # "... A 33.4%, B 33.3%, C 33.3% (rounded ...)."
    open_challenge(page, "zero-q")
    # the challenge opens beside the explorer it uses, not far below it
    panel = page.locator(PANEL)
    assert panel.evaluate("el => el.closest('section.explorer') !== null")
    gap = panel.bounding_box()["y"] - page.locator("#summary").bounding_box()["y"]
    assert 0 < gap < 400, gap

    fill_response(page, "zero-q", [10, 10, 80])
    check(page)
    feedback = page.locator('[data-feedback="zero-q"]')
    expect(feedback).to_contain_text("Not yet.")
    words = feedback.inner_text()
    assert "Not yet. Not yet" not in words and words.count("Not yet") == 1
    assert "too low" in words and "too high" in words
    for number in ("33.3", "33%", "33 %"):  # the right shares are nowhere before "Show answer"
        assert number not in words
        assert number not in panel.inner_text()
    expect(page.locator('[data-answer="zero-q"]')).to_be_hidden()

    page.locator(f'{PANEL} [data-action="answer"]').click()
    answer = page.locator('[data-answer="zero-q"]')
    expect(answer).to_be_visible()
    expect(answer).to_have_text(f"Answer: {right}")
    assert "A 33.4%, B 33.3%, C 33.3% (rounded to add up to 100)" in answer.inner_text()
    expect(page.locator(f'{PANEL} [data-action="answer"]')).to_be_hidden()

    fill_response(page, "zero-q", [33.3, 33.3, 33.4])
    check(page)
    expect(feedback).to_contain_text("✓ Goal met.")

    group = page.locator('.history-group[data-challenge="zero-q"]')
    expect(group.locator(".history-checks li")).to_have_text([
        "Check 1 · [10, 10, 80] % · not yet",
        "Check 2 · [33.3, 33.3, 33.4] % · right",
    ])
    expect(group.locator(".history-checks li.check-met")).to_have_count(1)
    expect(group.locator(".history-help li")).to_have_text(["Showed the answer"])
    expect(page.locator("#challenge-zero-q .item-status")).to_have_text(" · ✓ met")
    panel.screenshot(path=artifacts / "practice-panel-beside-explorer.png")
    page.locator("#history").screenshot(path=artifacts / "practice-history-checks.png")


def test_held_challenges_open_beside_the_held_sequence(lab):
    page = lab.page
    open_challenge(page, "row0-masked")
    assert page.locator(PANEL).evaluate("el => el.closest('#held') !== null")
    fill_response(page, "row0-masked", [1, 0])
    check(page)
    feedback = page.locator('[data-feedback="row0-masked"]')
    expect(feedback).to_contain_text("Your x is much too low; your y is right.")  # once the server answered
    assert "[2, 0]" not in feedback.inner_text()
    page.locator(f'{PANEL} [data-action="close"]').click()
    expect(page.locator(PANEL)).to_be_hidden()
    expect(page.locator("#challenge-row0-masked button.challenge-open")).to_be_focused()


def test_a_new_input_error_never_sits_beside_an_old_goal_met(lab):
    page = lab.page
    open_challenge(page, "zero-q")
    fill_response(page, "zero-q", [33.3, 33.3, 33.4])
    check(page)
    feedback = page.locator('[data-feedback="zero-q"]')
    expect(feedback).to_contain_text("✓ Goal met.")
    page.locator("#resp-zero-q-1").fill("")
    page.locator(f'{PANEL} [data-action="check"]').click()
    expect(page.locator(f"{PANEL} .form-error")).to_have_text(
        "“Predicted shares of A, B and C in %: B %” needs a number."
    )
    expect(feedback).to_be_hidden()
    # typing again clears the error; the next check gives a fresh verdict
    page.locator("#resp-zero-q-1").fill("33.3")
    expect(page.locator(f"{PANEL} .form-error")).to_be_hidden()
    check(page)
    expect(feedback).to_be_visible()
    expect(feedback).to_contain_text("✓ Goal met.")


def test_disabled_buttons_look_disabled(lab, artifacts):
    page = lab.page
    open_challenge(page, "zero-q")
    with page.expect_response("**/api/notebook/study"):
        page.locator(f'{PANEL} [data-action="retry"]').click()
    expect(page.locator(f"{PANEL} .attempt-label")).to_have_text("Attempt 2 of 2")
    prev = page.locator(f'{PANEL} [data-action="prev-attempt"]')
    nxt = page.locator(f'{PANEL} [data-action="next-attempt"]')
    expect(prev).to_be_enabled()
    expect(nxt).to_be_disabled()
    look = (
        "el => { const s = getComputedStyle(el); "
        "return [s.backgroundColor, s.color, s.borderStyle, s.cursor]; }"
    )
    on, off = prev.evaluate(look), nxt.evaluate(look)
    assert on[0] != off[0] and on[1] != off[1], (on, off)  # background and text colour differ
    assert off[2] == "dashed" and off[3] == "not-allowed"
    page.locator(f"{PANEL} .attempt-nav").screenshot(path=artifacts / "practice-disabled-next.png")
    # the stepper's Previous on its first step looks the same way
    lab.open("stepper")
    expect(page.locator("#stepper-prev")).to_be_disabled()
    assert page.locator("#stepper-prev").evaluate(look)[2:] == ["dashed", "not-allowed"]
    assert page.locator("#stepper-next").evaluate(look)[2] != "dashed"


def test_the_new_challenge_is_solvable_in_the_page(lab):
    page = lab.page
    open_challenge(page, "same-shares")
    lab.open("every-number")
    for j, x in enumerate(["3", "2"]):
        field = page.locator(f"#field-q-{j}")
        field.fill(x)
        field.press("Enter")
    lab.wait_for_query("[3, 2]")
    lab.wait_settled()
    page.locator("#resp-same-shares-shift").check()
    check(page)
    feedback = page.locator('[data-feedback="same-shares"]')
    expect(feedback).to_contain_text("✓ Goal met. At q = [3, 2] the shares are A 14%, B 58%, C 28%")


def exported_doc(labels):
    """An export's bytes whose example names its sources ``labels``."""
    doc = {"format": "attnlab-notebook", "version": 1, "example": {**STARTING.to_dict(), "labels": labels}}
    return json.dumps(doc).encode()


def test_an_example_with_sources_x_y_z_does_not_break_the_challenges(lab, artifacts):
    page = lab.page
    lab.recorder.allow(r"status of 422")
    page.locator("#import-file").set_input_files(
        files=[{"name": "xyz.json", "mimeType": "application/json", "buffer": exported_doc(["X", "Y", "Z"])}]
    )
    expect(page.locator("#import-status")).to_contain_text("Imported xyz.json")
    # the explorer's own challenge names its source by role: the second source, Y
    expect(page.locator("#challenge-goal")).to_have_text(GOAL + ".")
    expect(page.locator("#challenge-status")).to_contain_text("Y takes")
    expect(page.locator("#challenge-status")).not_to_contain_text("There is no source labelled")
    # a practice challenge offers to load the A/B/C example it needs
    open_challenge(page, "equal-ac")
    offer = page.locator(f"{PANEL} .load-offer")
    expect(offer).to_be_visible()
    expect(offer).to_contain_text("yours are X, Y, Z")
    with page.expect_response(lambda r: r.url.endswith("/api/notebook/study")) as answered:
        check(page)
    assert answered.value.json()["study"]  # the server answered the check (with the offer's words)
    # the offer to load the A/B/C example is said once, by its button; the feedback line does not repeat it
    expect(page.locator('[data-feedback="equal-ac"]')).to_be_empty()
    panel_text = page.locator(PANEL).inner_text()
    offers = panel_text.count("Load the worked example") + panel_text.count("Load the A/B/C example to try")
    assert offers == 1, panel_text
    page.locator(PANEL).screenshot(path=artifacts / "practice-xyz-offer.png")
    page.locator(f'{PANEL} [data-action="load-worked"]').click()
    expect(offer).to_be_hidden()
    expect(page.locator("#challenge-goal")).to_have_text(GOAL + ".")
    expect(page.locator("#challenge-status")).to_contain_text("B takes")
    check(page)
    expect(page.locator('[data-feedback="equal-ac"]')).to_contain_text("Not yet. A takes 14% and C 28.4%")
    # the refused check was no check; the one on the worked example is
    expect(page.locator('.history-group[data-challenge="equal-ac"] .history-checks li')).to_have_text(
        ["Check 1 · the example as it was · not yet"]
    )


def test_export_then_import_restores_the_history(browser, live_server, artifacts, tmp_path):
    lab = open_lab(browser, live_server.url, accept_downloads=True)
    try:
        page = lab.page
        open_challenge(page, "zero-q")
        page.locator(f'{PANEL} [data-action="hint"]').click()
        expect(page.locator(f"{PANEL} .hint-list li")).to_have_count(1)
        fill_response(page, "zero-q", [10, 10, 80])
        check(page)
        with page.expect_download() as download:
            page.locator('[data-export="json"]').click()
        path = tmp_path / "study.json"
        download.value.save_as(path)
        before = page.locator("#history-list").inner_text()
        assert "Check 1 · [10, 10, 80] % · not yet" in before

        page.reload()
        lab.wait_drawn()
        expect(page.locator("#history-empty")).to_be_visible()
        page.locator("#import-file").set_input_files(str(path))
        expect(page.locator("#import-status")).to_contain_text("the study history is restored")
        group = page.locator('.history-group[data-challenge="zero-q"]')
        expect(group).to_have_count(1)
        assert page.locator("#history-list").inner_text() == before
        expect(group.locator(".history-help li")).to_have_text(["Opened hint 1 of 3"])
        # the restored attempt carries on: its feedback and response are back
        open_challenge(page, "zero-q")
        expect(page.locator('[data-feedback="zero-q"]')).to_contain_text("Not yet.")
        expect(page.locator("#resp-zero-q-2")).to_have_value("80")
        expect(page.locator(f"{PANEL} .hint-list li")).to_have_count(1)
    finally:
        lab.close()


def test_axe_on_the_open_challenge_and_history(lab, artifacts):
    from axe_playwright_python.sync_playwright import Axe

    page = lab.page
    open_challenge(page, "zero-q")
    fill_response(page, "zero-q", [10, 10, 80])
    check(page)
    page.locator(f'{PANEL} [data-action="answer"]').click()
    expect(page.locator('[data-answer="zero-q"]')).to_be_visible()
    results = Axe().run(page)
    bad = [v for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    (artifacts / "axe-practice-report.txt").write_text(results.generate_report())
    assert bad == [], json.dumps([{"id": v["id"], "nodes": [n["target"] for n in v["nodes"]]} for v in bad])


def test_the_first_challenge_shows_one_goal_and_one_not_yet(lab):
    """The explorer's box and the practice panel it opens used to stand one above the other, each with
    its goal (in two wordings) and its "Not yet". Now the panel takes the box's place while it is open:
    the explorer shows the goal once, in the practice list's words, and one "Not yet"."""
    page = lab.page
    explorer = page.locator("#explorer")
    expect(page.locator("#challenge-goal")).to_have_text(GOAL + ".")
    expect(page.locator("#challenge-status")).to_contain_text("Not yet: B takes 58%")
    page.locator("#challenge-open").click()
    expect(page.locator(PANEL)).to_have_attribute("data-challenge", "second-over-90")
    expect(page.locator("#active-challenge-title")).to_have_text(GOAL)
    expect(page.locator("#challenge-second-over-90 button.challenge-open")).to_have_text(GOAL)
    expect(page.locator("#challenge")).to_be_hidden()
    check(page)
    expect(page.locator('[data-feedback="second-over-90"]')).to_contain_text("Not yet.")
    shown = explorer.inner_text()
    assert shown.count("Not yet") == 1, shown
    assert shown.count(GOAL) == 1, shown
    assert "Give source B" not in shown
    page.locator(f'{PANEL} [data-action="close"]').click()
    expect(page.locator("#challenge")).to_be_visible()  # the live box is back, with its goal and status
    expect(page.locator("#challenge-open")).to_be_focused()  # and the focus, on the button that opened it
    expect(page.locator(PANEL)).to_be_hidden()
    shown = explorer.inner_text()
    assert shown.count("Not yet") == 1 and shown.count(GOAL) == 1, shown


def test_the_first_challenge_has_tiered_hints_and_history(lab):
    page = lab.page
    cid = "second-over-90"
    # the explorer's own challenge box opens it, beside the explorer
    page.locator("#challenge-open").click()
    expect(page.locator(PANEL)).to_have_attribute("data-challenge", cid)
    assert page.locator(PANEL).evaluate("el => el.closest('section.explorer') !== null")
    hints = practice.challenge(cid)["hints"]
    page.locator(f'{PANEL} [data-action="hint"]').click()
    expect(page.locator(f"{PANEL} .hint-list li")).to_have_text([hints[0]])
    expect(page.locator(f'{PANEL} [data-action="hint"]')).to_have_text("Show hint 2 of 3")
    check(page)
    feedback = page.locator(f'[data-feedback="{cid}"]')
    expect(feedback).to_contain_text("Not yet. B takes 58%; it needs more than 90%.")
    group = page.locator(f'.history-group[data-challenge="{cid}"]')
    expect(group.locator(".history-checks li")).to_have_count(1)
    expect(group).to_contain_text("Opened hint 1 of 3")
    # meet it in the explorer, then Check: the history keeps both checks
    lab.open("every-number")
    for j, x in enumerate(["4", "0"]):
        field = page.locator(f"#field-q-{j}")
        field.fill(x)
        field.press("Enter")
    lab.wait_for_query("[4, 0]")
    lab.wait_settled()
    done = "Done: B takes 94.1% of the attention, more than 90%."
    expect(page.locator("#challenge-status")).to_have_text(done)
    check(page)
    expect(feedback).to_contain_text("✓ Goal met. B takes 94.1% of the attention")
    expect(group.locator(".history-checks li")).to_have_count(2)
    expect(page.locator(f"#challenge-{cid} .item-status")).to_have_text(" · ✓ met")
