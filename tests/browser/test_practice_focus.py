"""Typing an answer while an earlier practice action is still being answered.

Opening a challenge sends a study action; its answer redraws the active
challenge panel. The form is mounted once per attempt and updated in place,
so a learner who has started typing by then keeps the very same field, the
focus, the caret and what was typed. The answer is held back on purpose
(page.route) so the redraw lands between two keystrokes every time.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

FIELD = "resp-zero-q-0"


def test_typing_continues_across_a_redraw_of_the_challenge(lab):
    page = lab.page
    held = []
    # hold back the first study action only; any later one goes straight through
    page.route("**/api/notebook/study", lambda route: route.continue_() if held else held.append(route))
    page.locator("#challenge-zero-q button.challenge-open").click()  # sends {"kind": "open"}, held back
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(20)
    assert len(held) == 1

    field = page.locator(f"#{FIELD}")
    field.click()
    page.keyboard.type("1")
    page.keyboard.press("ArrowLeft")  # the caret between nothing and "1": the next key goes first
    page.evaluate(f"() => {{ window.__field = document.getElementById('{FIELD}'); }}")
    with page.expect_response("**/api/notebook/study"):
        held[0].continue_()
    # the answer has arrived and been drawn: the history lists the opened attempt
    expect(page.locator('.history-group[data-challenge="zero-q"]')).to_have_count(1)
    assert page.evaluate(f"() => document.getElementById('{FIELD}') === window.__field")

    page.keyboard.type("2")
    expect(page.locator(f"#{FIELD}")).to_have_value("21")
    expect(page.locator(f"#{FIELD}")).to_be_focused()
