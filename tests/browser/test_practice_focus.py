"""Typing an answer while an earlier practice action is still being answered.

Opening a challenge sends a study action; its answer redraws the challenge.
A learner who has started typing by then keeps the focus, the caret and what
was typed. The answer is held back on purpose (page.route) so the redraw
lands between two keystrokes every time.
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
    page.locator("#challenge-zero-q > summary").click()  # sends {"kind": "open"}, held back
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(20)
    assert len(held) == 1

    field = page.locator(f"#{FIELD}")
    field.click()
    page.keyboard.type("1")
    page.evaluate(f"() => {{ window.__field = document.getElementById('{FIELD}'); }}")
    held[0].continue_()
    for _ in range(200):  # wait until the answer has redrawn the challenge (a new input element)
        if page.evaluate(f"() => document.getElementById('{FIELD}') !== window.__field"):
            break
        page.wait_for_timeout(20)
    else:
        raise AssertionError("the open action's answer never redrew the challenge")

    page.keyboard.type("0")
    expect(page.locator(f"#{FIELD}")).to_have_value("10")
    expect(page.locator(f"#{FIELD}")).to_be_focused()
