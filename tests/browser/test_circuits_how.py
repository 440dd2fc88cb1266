"""'How is this computed?' on the Circuits page (headless Chromium, the real SmolLM2): a lens
probability and a patching value, each picked in its view (a click, the arrow keys, Enter on a
map's cell), give a program that names the number's value as the page holds it."""

from __future__ import annotations

import json
import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from labkit import Recorder
from playwright.sync_api import expect
from realkit import TRACE_TIMEOUT_MS, assert_no_sideways_scroll

from attnlab.models import files

pytestmark = [pytest.mark.browser, pytest.mark.models]

try:
    files.locate(files.SMOLLM2)
except files.ModelNotInstalled as error:  # pragma: no cover - depends on the machine
    pytest.skip(str(error), allow_module_level=True)

CLEAN = "The Eiffel Tower is in the city of"
CORRUPT = "The Colosseum is in the city of"
WAIT = {"timeout": TRACE_TIMEOUT_MS}  # a model job: the first loads the weights


@pytest.fixture
def page(browser, live_server):
    """/circuits on SmolLM2 with the clean prompt as its text, drawn; no foreign request, no console error."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    opened = context.new_page()
    recorder = Recorder()
    recorder.attach(opened)
    opened.goto(live_server.url + "circuits?model=smollm2&text=" + CLEAN.replace(" ", "%20"))
    expect(opened.locator("body")).to_have_attribute("data-ready", "true")
    yield opened
    context.close()
    recorder.check(live_server.url, live_server)


def shown(number) -> str:
    """The line a program writes about the number the page holds (the path: the server's q4_1 or float32)."""
    value = float(json.loads(number.get_attribute("data-value")))  # JSON writes 0.0 as 0
    return f"# The page shows {value!r} ("


def test_a_lens_probability_and_a_patching_value_each_show_their_program(page):
    # the lens: block 27's probability of the answer, picked with a click
    expect(page.locator("#ci-lens-position option")).to_have_count(9)  # the text's tokens, the last chosen
    page.locator("#ci-lens-run").click()
    out = page.locator("#ci-lens-out")
    expect(out.locator(".ci-named")).to_contain_text("the model's answer is ␣Paris", **WAIT)
    how = page.locator('details.ci-how[data-view="lens"]')
    expect(how.locator("summary")).to_have_text("How is this computed?")
    expect(how.locator(".ci-how-pick")).to_contain_text("Pick a number in this view")
    how.locator("summary").click()
    p = out.locator("tbody tr").nth(27).locator("td").nth(2)
    p.click()
    expect(p).to_have_class(re.compile(r"\bis-how\b"))
    expect(how).to_have_attribute("data-drawn", "smollm2_lens_token_p_8_L27.py")
    program = how.locator(".rm-how-program code")
    expect(program).to_contain_text(shown(p))
    expect(program).to_contain_text("import numpy as np")
    expect(program).not_to_contain_text("import attnlab")
    expect(how.locator(".rm-how-title")).to_contain_text("The logit lens after block 27 at token 8")
    # the arrow keys move to the next number of the view: block 28's first top token
    p.press("ArrowRight")
    chip = out.locator("tbody tr").nth(28).locator("li.ci-chip").first
    expect(chip).to_be_focused()
    expect(how).to_have_attribute("data-drawn", "smollm2_lens_top_p_8_L28_rank0.py")  # the first of the top 5
    expect(program).to_contain_text(shown(chip))

    # patching: the last two blocks' outputs, each position; a cell picked with Enter on the map
    page.locator("#ci-clean").fill(CLEAN)
    page.locator("#ci-corrupt").fill(CORRUPT)
    page.locator("#ci-site").select_option("post")
    page.locator("#ci-first-layer").select_option("28")
    page.locator("#ci-last-layer").select_option("29")
    page.locator("#ci-patch-run").click()
    patched = page.locator("#ci-patch-out")
    expect(patched).to_have_attribute("data-cancelled", "false", **WAIT)
    how = page.locator('details.ci-how[data-view="patching"]')
    how.locator("summary").click()
    program = how.locator(".rm-how-program code")
    # first shown: the clean prompt's logit difference, a number of the pair's sentence
    clean = patched.locator(".ci-num").first
    expect(clean).to_have_class(re.compile(r"\bis-how\b"))
    expect(how).to_have_attribute("data-drawn", "smollm2_patch_clean.py")
    expect(program).to_contain_text(shown(clean))
    figure = page.locator('[data-grid="patching"]')
    figure.focus()
    for key in ["ArrowRight"] * 5 + ["Enter"]:  # the cursor starts on (0, 0): block 28's output at 5 ␣in
        figure.press(key)
    cell = figure.locator('rect[data-i="0"][data-j="5"]')
    expect(cell).to_have_class(re.compile(r"\bis-at is-how\b"))
    expect(how).to_have_attribute("data-drawn", "smollm2_patch_recovered_resid_post_L28_5.py")
    expect(program).to_contain_text(shown(cell))
    expect(how.locator(".rm-how-title")).to_contain_text("patching layer 28 resid post, position 5")
    assert_no_sideways_scroll(page)
    results = Axe().run(page)
    assert [v["id"] for v in results.response["violations"] if v["impact"] in ("serious", "critical")] == []
