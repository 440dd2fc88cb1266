"""The guided notebook in a real browser, walked as a learner would.

Every expected number is computed here with attnlab's engine and lab (the same
rules the server applies) and compared with what the page shows.
"""

from __future__ import annotations

import json

import pytest
from labkit import open_lab
from playwright.sync_api import expect

from attnlab.lab import numbers as fmt
from attnlab.lab.explorer import sequence as seq
from attnlab.lab.explorer.view import sequence_view
from attnlab.lab.explorer.words import explain

pytestmark = pytest.mark.browser

REFUSED = r"status of 422"  # Chromium logs every refused request; these tests expect some


def seq_output(page, r):
    return page.locator(f'[data-field="output-{r}"]')


def test_mask_toggles_and_an_empty_row_is_refused(lab, artifacts):
    page = lab.page
    lab.recorder.allow(REFUSED)
    start = sequence_view(seq.STARTING)
    for r in range(3):
        expect(seq_output(page, r)).to_have_text(start["rows"][r]["output_text"])
    blocked = page.locator('[data-cell="0-1"]')
    expect(blocked).to_have_class("seq-cell blocked")
    expect(blocked).to_contain_text("blocked")
    expect(page.locator('[data-field="share-1-0"]')).to_have_text("80%")

    # block A for row 2: only row 2 changes, to the engine's numbers
    page.locator("#mask-2-0").click()  # not uncheck(): a redraw may replace the box mid-action
    expect(page.locator("#mask-2-0")).not_to_be_checked()
    held = seq.set_mask_cell(seq.STARTING, 2, 0, False)
    want = sequence_view(held)["rows"]
    expect(seq_output(page, 2)).to_have_text(want[2]["output_text"])
    expect(page.locator('[data-cell="2-0"]')).to_have_class("seq-cell blocked")
    expect(page.locator('[data-field="share-2-2"]')).to_have_text(want[2]["weights_text"][2])
    expect(seq_output(page, 1)).to_have_text(start["rows"][1]["output_text"])

    # blocking row 0's only source is refused; the mask stays
    page.locator("#mask-0-0").click()
    message = page.locator("#seq-message")
    expect(message).to_be_visible()
    expect(message).to_contain_text("would leave row 0 (A) with no allowed source")
    expect(message).to_contain_text("The mask is unchanged")
    expect(page.locator("#mask-0-0")).to_be_checked()
    expect(seq_output(page, 0)).to_have_text("[2, 0]")
    page.locator("#held").screenshot(path=artifacts / "notebook-held-sequence.png")


def test_edit_rules_between_the_explorer_and_the_held_rows(lab):
    page = lab.page
    expect(page.locator("#row-label")).to_have_text("Row 0 (A) · unmasked projection.")

    # select row 1: the explorer shows the masked row
    page.locator("#show-row-1").click()
    expect(page.locator("#row-label")).to_have_text("Row 1 (B) · masked row.")
    row1 = seq.select_row(seq.STARTING, 1)
    expect(page.locator("#summary")).to_have_text(explain(row1.explorer_trace()).summary)

    # a query edit in the explorer goes to row 0 and returns to its unmasked projection
    lab.open("every-number")
    field = page.locator("#field-q-0")
    field.fill("0.5")
    field.press("Enter")
    expect(page.locator("#row-label")).to_have_text("Row 0 (A) · unmasked projection.")
    held = seq.edit_query(seq.STARTING, [0.5, 2.0])  # row 1's q was showing: [1, 2]
    expect(page.locator("#summary")).to_have_text(explain(held.explorer_trace()).summary)
    queries = page.locator(".seq-query")
    expect(queries).to_have_text(["q = [0.5, 2]", "q = [1, 2]", "q = [-1, 1]"])
    expect(page.locator("#mask-1-2")).not_to_be_checked()  # the mask stays causal

    # a value edit is shared by every row
    lab.open("current")
    value = page.locator("#field-values-2-1")
    value.fill("3")
    value.press("Enter")
    held = seq.edit_value(held, 2, 1, 3.0)
    rows = sequence_view(held)["rows"]
    expect(seq_output(page, 2)).to_have_text(rows[2]["output_text"])
    expect(page.locator("#summary")).to_have_text(explain(held.explorer_trace()).summary)

    # a value past the lab's one limit is refused next to its field, for the explorer
    # and the held rows alike (issue 13: one limit, one message), and both keep theirs
    lab.recorder.allow(REFUSED)
    big = page.locator("#field-values-1-1")
    big.fill("2000000")
    big.press("Enter")
    expect(page.locator('[data-error-for="values[1][1]"]')).to_have_text(
        "Source B · value y must be at most 1,000,000"
    )
    expect(seq_output(page, 2)).to_have_text(rows[2]["output_text"])
    expect(page.locator("#summary")).to_have_text(explain(held.explorer_trace()).summary)
    big.fill("2")
    big.press("Enter")
    expect(page.locator('[data-error-for="values[1][1]"]')).to_be_empty()

    # Reset restores only the query and the first value's x coordinate
    value0 = page.locator("#field-values-0-0")
    value0.fill("5")
    value0.press("Enter")
    expect(page.locator("#field-values-0-0")).to_have_value("5")
    page.locator("#show-row-2").click()
    expect(page.locator("#row-label")).to_have_text("Row 2 (C) · masked row.")
    page.locator("#reset").click()
    held = seq.reset(seq.edit_value(held, 0, 0, 5.0))
    expect(page.locator("#row-label")).to_have_text("Row 0 (A) · unmasked projection.")
    expect(page.locator("#summary")).to_have_text(explain(held.explorer_trace()).summary)
    expect(queries).to_have_text(["q = [2, 1]", "q = [1, 2]", "q = [-1, 1]"])
    expect(page.locator("#field-values-2-1")).to_have_value("3")  # kept
    expect(seq_output(page, 2)).to_have_text(sequence_view(held)["rows"][2]["output_text"])


def test_show_in_the_explorer_takes_the_learner_to_the_explorer_it_changed(lab):
    """The held table sits far below the explorer: its "Show in the explorer" button scrolls the
    explorer into view and moves the keyboard focus to its row label, which names the row shown."""
    page = lab.page
    button = page.locator("#show-row-2")
    button.scroll_into_view_if_needed()
    expect(page.locator("#explorer-title")).not_to_be_in_viewport()
    button.focus()
    page.keyboard.press("Enter")  # the keyboard's way
    label = page.locator("#row-label")
    expect(label).to_have_text("Row 2 (C) · masked row.")
    expect(label).to_be_focused()
    expect(page.locator("#explorer-title")).to_be_in_viewport()
    expect(page.locator("#match-plot")).to_be_in_viewport()
    # the row the explorer shows is the one asked for, and its numbers are the held row's
    row2 = seq.select_row(seq.STARTING, 2)
    expect(page.locator("#summary")).to_have_text(explain(row2.explorer_trace()).summary)
    # again from the mouse, for row 1
    page.locator("#show-row-1").scroll_into_view_if_needed()
    page.locator("#show-row-1").click()
    expect(label).to_have_text("Row 1 (B) · masked row.")
    expect(label).to_be_focused()
    expect(page.locator("#explorer-title")).to_be_in_viewport()


def test_stepper_steps_by_keyboard_and_stays_connected(lab, artifacts):
    page = lab.page
    lab.open("stepper")
    expect(page.locator("#stepper-title")).to_have_text("Step 1 of 4 · Vectors")
    expect(page.locator("#stepper-question")).to_have_text(
        "What does this query have in common with each key?"
    )
    page.locator("#stepper-next").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#stepper-title")).to_have_text("Step 3 of 4 · Share")
    page.locator("#stepper-inspect-title").click()
    caption = page.locator("#stepper-table caption")
    expect(caption).to_have_text("Shared normalization: m = 1.414; Z = 1.736")
    # move q from the keyboard in the explorer: the stepper follows
    handle = page.locator("#match-plot .handle")
    handle.focus()
    page.keyboard.press("Shift+ArrowUp")
    lab.wait_for_query("[2, 2]")
    t = seq.edit_query(seq.STARTING, [2.0, 2.0]).explorer_trace()
    expect(caption).to_have_text(
        f"Shared normalization: m = {fmt.rounded(t.m)}; Z = {fmt.rounded(t.z)}"
    )
    page.locator("#stepper-prev").click()
    expect(page.locator("#stepper-title")).to_have_text("Step 2 of 4 · Match")
    page.locator("#stepper").screenshot(path=artifacts / "notebook-stepper.png")


def test_practice_help_and_history_as_a_learner(lab, artifacts):
    page = lab.page
    # 1) challenge "Predict row 0's masked output": open a hint, answer, check
    page.locator("#challenge-row0-masked button.challenge-open").click()
    row0 = page.locator("#active-challenge")
    expect(row0).to_have_attribute("data-challenge", "row0-masked")
    row0.locator('[data-action="hint"]').click()
    expect(row0.locator(".hint-list li")).to_have_count(1)
    row0.locator("#resp-row0-masked-0").fill("2")
    row0.locator("#resp-row0-masked-1").fill("0")
    row0.locator('[data-action="check"]').click()
    expect(row0.locator('[data-feedback="row0-masked"]')).to_contain_text("Goal met")

    # 2) a detour: watch part of the playback (counts for the attempt we leave)
    lab.open("playback")
    expect(page.locator("#playback-caption")).to_contain_text("One query, three sources")
    play = page.locator("#playback-play")
    play.click()
    expect(play).to_have_attribute("aria-pressed", "true")
    page.wait_for_timeout(1500)
    play.click()
    expect(play).to_have_attribute("aria-pressed", "false")
    frame = int(page.locator("#playback").get_attribute("data-frame"))
    assert frame > 0
    page.locator("#playback").screenshot(path=artifacts / "notebook-playback.png")

    # 3) challenge "Predict the shares at q = [0, 0]": a wrong try, a new attempt, a right one
    page.locator("#challenge-zero-q button.challenge-open").click()
    zero = page.locator("#active-challenge")
    expect(zero).to_have_attribute("data-challenge", "zero-q")
    for j, x in enumerate(["10", "10", "80"]):
        zero.locator(f"#resp-zero-q-{j}").fill(x)
    zero.locator('[data-action="check"]').click()
    expect(zero.locator('[data-feedback="zero-q"]')).to_contain_text("Not yet")
    zero.locator('[data-action="retry"]').click()
    expect(zero.locator(".attempt-label")).to_have_text("Attempt 2 of 2")
    expect(zero.locator('[data-feedback="zero-q"]')).to_have_text("")
    for j, x in enumerate(["33.3", "33.3", "33.4"]):
        zero.locator(f"#resp-zero-q-{j}").fill(x)
    zero.locator('[data-action="check"]').click()
    expect(zero.locator('[data-feedback="zero-q"]')).to_contain_text("Goal met")

    # 4) another detour: the Python panel, while on zero-q attempt 2
    lab.open("python")

    # each attempt keeps its own feedback: back to attempt 1
    zero.locator('[data-action="prev-attempt"]').click()
    expect(zero.locator(".attempt-label")).to_have_text("Attempt 1 of 2")
    expect(zero.locator('[data-feedback="zero-q"]')).to_contain_text("Not yet")
    expect(zero.locator("#resp-zero-q-2")).to_have_value("80")
    # clearing a response keeps the help history
    zero.locator('[data-action="clear"]').click()
    expect(zero.locator("#resp-zero-q-2")).to_have_value("")

    groups = page.locator(".history-group")
    expect(groups).to_have_count(3)
    expect(groups.locator("h4")).to_have_text([
        "Predict the shares at q = [0, 0] · attempt 1",
        "Predict the shares at q = [0, 0] · attempt 2",
        "Predict row 0's masked output · attempt 1",
    ])
    expect(groups.nth(0).locator(".history-help li")).to_have_text(["No help used"])
    expect(groups.nth(1).locator(".history-help li")).to_have_text(
        ["Opened “Read the same calculation in Python”"]
    )
    expect(groups.nth(2).locator(".history-help li")).to_have_text(
        ["Opened hint 1 of 3", "Watched the guided playback"]
    )
    # resetting values keeps the help history too
    page.locator("#reset").click()
    lab.wait_for_query("[2, 1]")
    expect(groups).to_have_count(3)
    expect(groups.nth(2).locator(".history-help li")).to_have_text(
        ["Opened hint 1 of 3", "Watched the guided playback"]
    )
    page.locator("#practice-list").screenshot(path=artifacts / "notebook-practice.png")
    page.locator("#history").screenshot(path=artifacts / "notebook-history.png")

    # reloading clears the history (the held example stays for this tab)
    page.reload()
    lab.wait_drawn()
    expect(page.locator("#history-empty")).to_have_text("No checks or help yet in this visit.")


def test_playback_becomes_steps_under_reduced_motion(browser, live_server, artifacts):
    lab = open_lab(browser, live_server.url, reduced_motion="reduce")
    try:
        page = lab.page
        lab.open("playback")
        expect(page.locator("#playback-stepped")).to_be_visible()
        expect(page.locator("#playback-animated")).to_be_hidden()
        expect(page.locator("#playback-steps li")).to_have_count(7)
        expect(page.locator("#playback-step-title")).to_have_text("Step 1 of 7")
        for _ in range(4):
            page.locator("#playback-step-next").click()
        expect(page.locator("#playback-step-title")).to_have_text("Step 5 of 7")
        expect(page.locator("#playback-caption")).to_contain_text("B takes 91%")  # A 1% + B 91% + C 8%
        assert page.locator("#playback").get_attribute("data-frame") == "230"
        page.locator("#playback").screenshot(path=artifacts / "notebook-playback-steps.png")
    finally:
        lab.close()


def test_content_math_papers_and_connections(lab, artifacts):
    page = lab.page
    math = page.locator("#core-math math")
    expect(math.first).to_be_attached()
    assert math.count() >= 10
    assert page.locator("#core-math math[display=block]").count() == 3  # each equation once
    expect(page.locator("#papers li")).to_have_count(3)
    expect(page.locator("#connections li.connection")).to_have_count(17)
    expect(page.locator("#connections .in-attnlab")).to_have_count(7)
    expect(page.locator("#why")).to_contain_text("Why It Matters for Modern Models")
    page.locator("#core-math").screenshot(path=artifacts / "notebook-core-math.png")
    page.locator("#connections").screenshot(path=artifacts / "notebook-connections.png")


def test_axe_with_every_part_open(lab, artifacts):
    from axe_playwright_python.sync_playwright import Axe

    page = lab.page
    # axe reads colours as they are at that instant: a stage fading in (the block's playback,
    # 600 ms, slower under load) is mid-opacity. Reduced motion draws every state at rest.
    page.emulate_media(reduced_motion="reduce")
    lab.open_all()
    page.locator("#challenge-near-vb button.challenge-open").click()
    expect(page.locator("#active-challenge fieldset.choice")).to_be_visible()
    page.locator("#stepper-inspect-title").evaluate("s => s.parentElement.open = true")
    expect(page.locator("#playback-caption")).not_to_be_empty()
    results = Axe().run(page)
    bad = [v for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    (artifacts / "axe-notebook-report.txt").write_text(results.generate_report())
    page.screenshot(path=artifacts / "notebook-everything-open.png", full_page=True)
    assert bad == [], json.dumps(
        [{"id": v["id"], "nodes": [n["target"] for n in v["nodes"]]} for v in bad], indent=1
    )


def test_every_part_fits_a_phone(browser, live_server, artifacts):
    lab = open_lab(browser, live_server.url, viewport={"width": 390, "height": 844},
                   has_touch=True, is_mobile=True)
    try:
        page = lab.page
        lab.open_all()
        page.locator("#challenge-near-vb button.challenge-open").click()
        expect(page.locator("#playback-caption")).not_to_be_empty()
        expect(page.locator("#connections li.connection")).to_have_count(17)
        expect(page.locator("#active-challenge fieldset.choice")).to_be_visible()
        # nothing wider than the screen: wide tables scroll inside their own box
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        page.locator("#practice").screenshot(path=artifacts / "notebook-phone-390-practice.png")
        page.locator("#playback").screenshot(path=artifacts / "notebook-phone-390-playback.png")
    finally:
        lab.close()
