"""Your own example: 1 to 8 sources, renamed, keys, values and scale; Reset; the link carries it.

Expected numbers come from the engine (trace_query) for the same inputs, never
from the page.
"""

from __future__ import annotations

import base64
import json

import pytest
from labkit import DESKTOP, Lab, Recorder
from playwright.sync_api import expect

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt

pytestmark = pytest.mark.browser


def set_field(page, path: str, value: str) -> None:
    page.locator(f'[data-own="{path}"]').fill(value)


def test_own_example_with_one_and_eight_sources_renamed_and_reset(lab, artifacts):
    page = lab.page
    lab.open("own-example")
    expect(page.locator('[data-own="labels[2]"]')).to_have_value("C")
    # down to one source: the remove buttons stop at 1
    page.locator("[data-remove='2']").click()
    page.locator("[data-remove='1']").click()
    expect(page.locator("[data-remove='0']")).to_be_disabled()
    set_field(page, "labels[0]", "cat")
    page.locator("#own-use").click()
    expect(page.locator("#row-label")).to_have_text("Your own example · one query over 1 source.")
    expect(page.locator("#summary")).to_contain_text("cat")
    expect(page.locator("#score-table")).to_contain_text("100%")

    # up to eight sources with names of their own, keys, values and a scale
    for _ in range(7):
        page.locator("#own-add").click()
    expect(page.locator("#own-add")).to_be_disabled()
    names = ["cat", "sat", "on", "the", "mat", "and", "purred", "loudly"]
    keys = [[(i % 3) - 1, (i % 4) - 1.5] for i in range(8)]
    values = [[i, -i / 2] for i in range(8)]
    for i, name in enumerate(names):
        set_field(page, f"labels[{i}]", name)
        for j in range(2):
            set_field(page, f"keys[{i}][{j}]", str(keys[i][j]))
            set_field(page, f"values[{i}][{j}]", str(values[i][j]))
    page.locator("#own-scale").fill("0.5")
    page.locator("#own-use").click()
    expect(page.locator("#row-label")).to_have_text("Your own example · one query over 8 sources.")
    want = trace_query([2, 1], keys, values, labels=names, scale=0.5)
    expect(page.locator("#summary")).to_contain_text(f"Output o = {fmt.vector(want.output)}")
    for name in names:
        expect(page.locator("#score-table")).to_contain_text(name)
    lab.open("every-number")
    expect(page.locator("#score-axis-title")).to_have_text("Scaled scores · s = q·k × 0.5")  # a multiplier
    expect(page.locator("#seq-explorer-note")).to_contain_text("an example of its own")
    page.screenshot(path=artifacts / "own-example-8-sources.png", full_page=False)

    # a refusal in the lab's words, next to the field typed in; the example stays
    set_field(page, "labels[1]", "cat")
    lab.recorder.allow(r"status of 422")
    page.locator("#own-use").click()
    expect(page.locator('[data-own-error-for="labels[1]"]')).to_contain_text("repeats")
    expect(page.locator("#row-label")).to_have_text("Your own example · one query over 8 sources.")

    # Reset example: back to the worked example, connected to the held sequence again
    page.locator("#reset").click()
    lab.wait_for_query("[2, 1]")
    expect(page.locator("#row-label")).to_have_text("Row 0 (A) · unmasked projection.")
    expect(page.locator("#summary")).to_contain_text("Output o = [-0.004, 0.868]")
    expect(page.locator("#seq-explorer-note")).to_contain_text("The explorer shows Row 0 (A)")


def test_an_own_example_travels_in_the_link(lab, browser, live_server):
    page = lab.page
    lab.open("own-example")
    page.locator("[data-remove='2']").click()
    set_field(page, "labels[0]", "x<b>")  # escaped wherever drawn
    set_field(page, "keys[1][1]", "-3")
    page.locator("#own-use").click()
    expect(page.locator("#row-label")).to_have_text("Your own example · one query over 2 sources.")
    expect(page.locator("#summary")).to_contain_text("x<b>")
    lab.wait_settled()
    summary = page.locator("#summary").inner_text()
    fragment = "#" + page.url.split("#", 1)[1]
    # the own example IS the held example (the page's one state): one query, in `example=`
    assert fragment.startswith("#example=") and "own=" not in fragment
    text = fragment.removeprefix("#example=")
    shared = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    assert (shared["labels"], shared["queries"], shared["mask"]) == (["x<b>", "B"], [[2, 1]], [[True, True]])

    other_page = browser.new_context(viewport=DESKTOP).new_page()
    recorder = Recorder()
    recorder.attach(other_page)
    other = Lab(page=other_page, recorder=recorder, base_url=live_server.url)
    try:
        other_page.goto(live_server.url + fragment)
        expect(other_page.locator("#row-label")).to_have_text("Your own example · one query over 2 sources.")
        other.wait_settled()
        # The worked example may draw first: wait for the linked example's own words.
        expect(other_page.locator("#summary")).to_have_text(summary)
        assert other_page.locator("main b").count() == 0
    finally:
        other.close()


def test_the_form_takes_the_served_limits_and_a_tiny_scale_shows_as_itself(lab):
    from attnlab.engine.single import MAX_LABEL_LENGTH
    from attnlab.lab.limits import limit_words, page_limits

    page = lab.page
    lab.open("own-example")
    limits = page_limits()
    # "(1 to 8)", "±1,000,000": the served limits, not numbers the page wrote
    expect(page.locator("#own-hint")).to_have_text(limit_words()["own_example"]["text"])
    expect(page.locator("#own-count")).to_have_text(limits["words"]["sources_count"][2]["text"])  # 3 sources
    expect(page.locator('[data-own="labels[0]"]')).to_have_attribute("maxlength", str(MAX_LABEL_LENGTH))
    for _ in range(limits["max_sources"] - 3):
        page.locator("#own-add").click()
    expect(page.locator("#own-add")).to_be_disabled()
    expect(page.locator("#own-count")).to_have_text("8 of at most 8 sources.")
    page.locator("#own-scale").fill("1e-9")
    page.locator("#own-use").click()
    expect(page.locator("#row-label")).to_have_text("Your own example · one query over 8 sources.")
    lab.open("every-number")
    # the scale multiplies, and a scale of 1e-9 is never written as "× 0"
    expect(page.locator("#score-axis-title")).to_have_text("Scaled scores · s = q·k × 1e-09")
    expect(page.locator("#score-table thead")).to_contain_text("Score q·k × 1e-09")
