"""Errors in the page's words, in headless Chromium against the live server.

A refused value is named next to its control as the page labels that control
("Source B · value y", "X (inputs) · row 1, column 1", "Top-k"), never by a
request path ("values[1][1]", "x[0][0]", "top_k"); the learner's other inputs
stay as typed; the controls' ranges and the hints that state them are the
ones the server declares (GET /api/limits), not numbers the page wrote.
"""

from __future__ import annotations

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe
from blockkit import wait_block
from playwright.sync_api import expect
from realkit import real_model_view, trace

from attnlab.lab.fields import plain
from attnlab.lab.limits import page_limits

pytestmark = pytest.mark.browser

LIMITS = page_limits()


def _serious(page, within: str) -> list:
    """axe-core's serious and critical findings inside ``within`` (the controls under test)."""
    results = Axe().run(page, context=within)
    return [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]])
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def test_the_page_is_served_the_limits_it_sets(live_server):
    assert httpx.get(f"{live_server.url}api/limits", timeout=30).json() == LIMITS


def test_an_own_value_out_of_range_is_named_as_the_page_labels_it(lab):
    page = lab.page
    lab.open("own-example")
    own = lambda path: page.locator(f'[data-own="{path}"]')  # noqa: E731
    expect(own("labels[2]")).to_have_value("C")
    typed = {"labels[0]": "cat", "keys[0][0]": "-1.5", "values[0][1]": "0.25", "values[1][1]": "2000000"}
    for path, value in typed.items():
        own(path).fill(value)
    lab.recorder.allow(r"status of 422")
    page.locator("#own-use").click()
    error = page.locator('[data-own-error-for="values[1][1]"]')
    expect(error).to_have_text("Source B · value y must be at most 1,000,000")
    assert plain(error.inner_text())
    # the learner's other inputs are kept as typed, the refused one too
    for path, value in typed.items():
        expect(own(path)).to_have_value(value)
    expect(own("labels[1]")).to_have_value("B")
    # no other field is blamed
    for path in ("values[0][1]", "values[1][0]", "keys[0][0]"):
        expect(page.locator(f'[data-own-error-for="{path}"]')).to_have_text("")
    assert _serious(page, "#own-example") == []


def test_a_block_number_out_of_range_is_named_by_matrix_row_and_column(lab):
    page = lab.page
    wait_block(page)
    hint = page.locator("#block-edit-hint")
    expect(hint).to_have_text(LIMITS["words"]["block_edit"]["text"])  # the served limit, ±1,000
    assert "±1,000 " in hint.inner_text()
    page.locator("#block-edit-pick").select_option("x")
    box = page.locator('#block-edit-part input[data-field="x[0][0]"]')
    kept = page.locator('#block-edit-part input[data-field="x[1][2]"]')
    before = kept.input_value()
    lab.recorder.allow(r"status of 422")
    box.fill("5000")
    box.press("Enter")
    error = page.locator('#block-edit-part [data-error-for="x[0][0]"]')
    expect(error).to_have_text("X (inputs) · row 1, column 1 must be at most 1,000")
    assert plain(error.inner_text())
    expect(box).to_have_value("5000")  # the refused text stays for the learner to fix
    expect(kept).to_have_value(before)
    assert _serious(page, "#block-edit-part") == []


def _models_missing() -> str | None:
    from attnlab.models import files

    try:
        files.locate(files.SMOLLM2)
    except files.ModelNotInstalled as error:
        return str(error)
    return None


def test_the_real_model_controls_take_the_served_ranges(browser, live_server):
    with real_model_view(browser, live_server, 1280, 900) as (page, _):
        top_k = page.locator("#rm-next-top-k")
        expect(top_k).to_have_attribute("max", str(LIMITS["top_k_max"]))  # 49152, as generate takes
        expect(top_k).to_have_attribute("min", "0")
        expect(page.locator("#rm-next-temperature")).to_have_attribute("max", "5")
        expect(page.locator("#rm-next-top-p")).to_have_attribute("max", "1")
        tokens = page.locator("#rm-gen-tokens")
        expect(tokens).to_have_attribute("min", str(LIMITS["min_new_tokens"]))
        expect(tokens).to_have_attribute("max", str(LIMITS["max_new_tokens"]))
        expect(page.locator('label[for="rm-gen-tokens"]')).to_have_text("New tokens (1 to 64)")


@pytest.mark.models
def test_a_top_k_out_of_range_is_named_as_its_control(browser, live_server):
    if _models_missing():
        pytest.skip(_models_missing())
    with real_model_view(browser, live_server, 1280, 900) as (page, recorder):
        recorder.allow(r"status of 422")
        trace(page, "The capital of France is", model="smollm2")
        expect(page.locator("#rm-next")).to_be_visible()
        top_k = page.locator("#rm-next-top-k")
        top_k.fill(str(LIMITS["top_k_max"] + 1))  # 49,153: the one declared limit, next view included
        page.locator("#rm-next-run").click()
        error = page.locator("#rm-next-error")
        expect(error).to_have_text("Top-k must be at most 49,152")
        shown = error.inner_text()
        assert plain(shown) and "top_k" not in shown and "query" not in shown
        expect(top_k).to_have_value("49153")  # kept for the learner to fix
        expect(page.locator("#rm-next-temperature")).to_have_value("1")
        assert _serious(page, "#rm-next") == []


def test_a_refusal_that_names_no_field_is_said_in_the_labs_words(lab):
    """An error answer with no field (a 500 from anywhere) is said by the lab's sentence, served in the
    page: the page writes no "HTTP 500" of its own."""
    from attnlab.lab.page import shared_words

    page = lab.page
    lab.recorder.allow(r"status of 500")
    page.route("**/api/notebook/study", lambda route: route.fulfill(status=500, body="{}",
                                                                    content_type="application/json"))
    page.locator("#challenge-open").click()  # opening a challenge records it in the study
    message = page.locator("#practice-message")
    expect(message).to_have_text(shared_words()["http"]["failed"])
    assert "HTTP" not in message.inner_text()
