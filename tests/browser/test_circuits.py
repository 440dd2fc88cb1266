"""The Circuits page in headless Chromium, on the real models: the census names SmolLM2's induction
heads on the probe, ablation changes p, a patching sweep shows its progress and can be cancelled
(the partial result drawn), the lens names the block, axe is clean and nothing scrolls sideways at 390 px.

Kept short: 9- to 16-token texts, and a sweep over two layers where the test allows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from axe_playwright_python.sync_playwright import Axe
from labkit import Recorder
from playwright.sync_api import expect
from realkit import TRACE_TIMEOUT_MS, assert_no_sideways_scroll

from attnlab.models import files

pytestmark = [pytest.mark.browser, pytest.mark.models]

for _shipped in (files.MINILM, files.SMOLLM2):
    try:
        files.locate(_shipped)
    except files.ModelNotInstalled as error:  # pragma: no cover - depends on the machine
        pytest.skip(str(error), allow_module_level=True)

CLEAN = "The Eiffel Tower is in the city of"
CORRUPT = "The Colosseum is in the city of"
SHORT = "The cat sat on the mat. The cat sat on the mat."  # 14 SmolLM2 tokens
CAT = "?model=minilm&text=The%20cat%20sat%20on%20the%20mat."
WAIT = {"timeout": TRACE_TIMEOUT_MS}  # a model job: the first loads the weights


@contextmanager
def circuits(browser, live_server, query: str = "", width: int = 1280, height: int = 900) -> Iterator:
    """/circuits (with ``query``) at ``width`` x ``height``, drawn; on leaving, no foreign request and
    no console error."""
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=width < 600)
    page = context.new_page()
    recorder = Recorder()
    recorder.attach(page)
    page.goto(live_server.url + "circuits" + query)
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    yield page
    context.close()
    recorder.check(live_server.url, live_server)


def serious(page) -> list[str]:
    results = Axe().run(page)
    return [v["id"] for v in results.response["violations"] if v["impact"] in ("serious", "critical")]


def test_census_on_the_probe_names_smollm2s_induction_heads_with_the_seed_shown(browser, live_server):
    with circuits(browser, live_server) as page:
        # seed 1's run, not a fresh draw: on some runs no head of SmolLM2 copies (seed 240's first
        # token takes 86% of layer 18 head 6's attention, in HF's model too), so the ranking it
        # checks is that of one known run
        page.route("**/api/models/probe", lambda route: route.continue_(url=route.request.url + "?seed=1"))
        expect(page.locator("#ci-model")).to_have_value("smollm2")
        page.locator("#ci-probe").click()
        out = page.locator("#ci-census-out")
        expect(out).to_have_attribute("data-score", "induction", **WAIT)
        seed = page.locator("#ci-probe-note").get_attribute("data-seed")
        assert seed == "1"
        expect(page.locator("#ci-probe-note")).to_contain_text(f"Seed {seed}:")
        first = page.locator(".ci-ranked button").first
        expect(first).to_have_attribute("data-layer", "18")
        expect(first).to_have_attribute("data-head", "6")
        expect(first.locator(".ci-kind")).to_have_text("induction")
        summary = out.locator(".ci-said").nth(1)
        expect(summary).to_contain_text("Highest induction score: L18 H6")
        # every head is a cell of the map (30 layers × 9 heads), coloured by its score
        expect(page.locator('[data-grid="census"] rect.ci-cell')).to_have_count(270)
        first.click()
        expect(page.locator("#ci-evidence")).to_have_attribute("data-head", "18/6")
        expect(page.locator("#ci-evidence")).to_contain_text("The score is the mean of these")
        expect(page.locator("#ci-evidence .ci-row")).to_have_count(3)
        # another score recolours the map and reranks: the previous-token heads lead
        page.locator("#ci-score").select_option("previous")
        expect(out).to_have_attribute("data-score", "previous")
        expect(out.locator(".ci-said").first).to_contain_text("Previous token:")


def test_ablation_changes_p_and_names_the_biggest_changes(browser, live_server):
    with circuits(browser, live_server, "?model=smollm2&text=" + SHORT.replace(" ", "%20")) as page:
        expect(page.locator("#ci-text")).to_have_value(SHORT)
        page.locator("#ci-heads").fill("L18H6, L17H3, L17H4")
        page.locator("#ci-ablation-run").click()
        out = page.locator("#ci-ablation-out")
        expect(out).to_have_attribute("data-drawn", "L18 H6, L17 H3, L17 H4", **WAIT)
        expect(out).to_contain_text("Zero ablation of L18 H6, L17 H3, L17 H4")
        rows = out.locator("tbody tr")
        expect(rows).to_have_count(14)
        before = rows.locator("td:nth-child(3)").all_inner_texts()
        after = rows.locator("td:nth-child(4)").all_inner_texts()
        assert before[:-1] != after[:-1]  # some position's p changed
        expect(out.locator("li").first).to_contain_text("the probability of the text's next token")
        # which heads matter here: the attribution at the last position, its exact sum stated
        page.locator("#ci-dla-run").click()
        dla = page.locator("#ci-dla-out")
        expect(dla).to_have_attribute("data-drawn", "13", **WAIT)
        expect(dla).to_contain_text("The final RMSNorm divides")
        expect(dla).to_contain_text("the measured gap is")
        expect(dla).to_contain_text("so that bound holds but says little")


def test_a_sweep_shows_its_progress_and_a_cancel_keeps_the_partial_result(browser, live_server):
    with circuits(browser, live_server) as page:
        page.locator("#ci-clean").fill(CLEAN)
        page.locator("#ci-corrupt").fill(CORRUPT)
        page.locator("#ci-site").select_option("post")
        page.locator("#ci-first-layer").select_option("28")
        page.locator("#ci-last-layer").select_option("29")
        page.locator("#ci-patch-run").click()
        out = page.locator("#ci-patch-out")
        expect(out).to_have_attribute("data-cancelled", "false", **WAIT)
        expect(page.locator("#ci-patch-status")).to_have_text("Done: 18 patches.")
        assert page.locator("#ci-patch-progress").evaluate("p => p.value") == 1
        cells = page.locator('[data-grid="patching"] rect.ci-cell')
        expect(cells).to_have_count(18)
        # the last layer at the last token brings the clean answer back whole
        title = page.locator('[data-grid="patching"] rect[data-i="1"][data-j="8"] title')
        expect(title).to_contain_text("Layer 29, token 8 ␣of: recovered 1 (")
        # the full sweep, cancelled once it is under way: what was done is drawn, the rest blank
        page.locator("#ci-site").select_option("pre")
        page.locator("#ci-first-layer").select_option("0")
        page.locator("#ci-patch-run").click()
        # at least one patch done (the first poll may come before any: "0 of 270")
        expect(page.locator("#ci-patch-status")).to_have_text(
            re.compile(r"^Patching: [1-9][0-9]* of 270 patches done"), **WAIT)
        assert 0 < page.locator("#ci-patch-progress").evaluate("p => p.value") < 1
        page.locator("#ci-patch-cancel").click()
        expect(out).to_have_attribute("data-cancelled", "true", **WAIT)
        done = int(out.get_attribute("data-done"))
        assert 0 < done < 270
        expect(page.locator("#ci-patch-status")).to_have_text(
            f"Cancelled after {done} of 270 patches: the partial result is shown.")
        expect(out.locator(".ci-sweep-status")).to_contain_text(f"the {270 - done} not computed are blank")
        expect(page.locator('[data-grid="patching"] rect.ci-cell.is-blank')).to_have_count(270 - done)
        expect(page.locator("#ci-patch-cancel")).to_be_disabled()


def test_the_lens_names_the_block_where_the_answer_first_leads(browser, live_server):
    with circuits(browser, live_server, "?model=smollm2&text=" + CLEAN.replace(" ", "%20")) as page:
        expect(page.locator("#ci-lens-position option")).to_have_count(9)
        page.locator("#ci-lens-run").click()
        out = page.locator("#ci-lens-out")
        expect(out.locator(".ci-named")).to_contain_text("the model's answer is ␣Paris", **WAIT)
        first = out.get_attribute("data-first")
        expect(out.locator(".ci-named")).to_contain_text(f"first becomes the top token after block {first} ")
        expect(out.locator("tbody tr")).to_have_count(30)
        expect(out.locator("tbody tr.is-top").last).to_contain_text("after block 29")


def test_the_encoder_at_390_px_with_the_keyboard_and_axe(browser, live_server, artifacts):
    with circuits(browser, live_server, CAT, 390, 844) as page:
        assert_no_sideways_scroll(page)
        expect(page.locator("#ci-lens")).to_be_hidden()  # an encoder has no logit lens
        page.locator("#ci-census-run").click()
        expect(page.locator("#ci-census-out")).to_have_attribute("data-score", "induction", **WAIT)
        # the map from the keyboard: focus, move, pick
        figure = page.locator('[data-grid="census"]')
        figure.focus()
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowRight")
        expect(figure.locator("rect.is-at")).to_have_attribute("data-i", "1")
        page.keyboard.press("Enter")
        expect(page.locator("#ci-evidence")).to_have_attribute("data-head", "1/1")
        page.locator("#ci-heads").fill("L3H1")
        page.locator("#ci-ablation-run").tap()
        expect(page.locator("#ci-ablation-out")).to_contain_text("sentence embedding's cosine", **WAIT)
        page.locator("#ci-clean").fill("The cat sat on the mat.")
        page.locator("#ci-corrupt").fill("The dog sat on the rug.")
        page.locator("#ci-patch-run").tap()
        expect(page.locator("#ci-patch-out")).to_have_attribute("data-cancelled", "false", **WAIT)
        expect(page.locator("#ci-patch-out")).to_contain_text("cosine")
        page.locator("#ci-head-run").tap()
        expect(page.locator("#ci-head-out")).to_contain_text("has no RoPE", **WAIT)
        assert_no_sideways_scroll(page)
        page.screenshot(path=str(artifacts / "circuits-phone.png"), full_page=True)
        assert serious(page) == []


def test_the_real_model_page_links_here_with_its_text_and_model(browser, live_server):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(live_server.url + "real-model")
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    page.locator("#rm-text").fill("Two cats.")
    page.locator("#rm-model").select_option("minilm")
    page.locator("#rm-circuits").click()
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    expect(page.locator("#ci-text")).to_have_value("Two cats.")
    expect(page.locator("#ci-model")).to_have_value("minilm")
    page.locator("#ci-back").click()
    expect(page.locator("#rm-text")).to_be_visible()
    context.close()
