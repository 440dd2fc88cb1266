"""'How is this computed?' on the Real model page: a number's program, named and shown (headless Chromium)."""

from __future__ import annotations

import re

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect
from realkit import assert_no_sideways_scroll, job_id, page_fixture, trace

from attnlab.models import files

pytestmark = [pytest.mark.browser, pytest.mark.models]

try:
    files.locate(files.MINILM)
except files.ModelNotInstalled as error:  # pragma: no cover - depends on the machine
    pytest.skip(str(error), allow_module_level=True)

CAT = "The cat sat on the mat."

desktop = page_fixture(1280, 900)
phone = page_fixture(390, 844)


def _head(live_server, page) -> dict:
    job = job_id(page, "/heads/")
    return httpx.get(f"{live_server.url}api/models/jobs/{job}/heads/0/0").json()


def test_how_opens_on_a_head_number_and_shows_a_program_that_names_its_value(desktop, live_server):
    page = desktop
    trace(page, CAT)
    how = page.locator("#rm-view details.rm-how")
    expect(how.locator("summary")).to_have_text("How is this computed?")
    how.locator("summary").click()
    # the first number is a heatmap share: the last query's share on key 0 (no token focused yet)
    expect(how).to_have_attribute("data-drawn", "minilm_weight_L0_H0_8_0.py")
    head = _head(live_server, page)
    shown = head["weights"][8][0]
    program = how.locator(".rm-how-program code")
    expect(program).to_contain_text(f"# The page shows {shown!r} (float32 path).")
    expect(program).to_contain_text("LAYER, HEAD, QUERY, KEY = 0, 0, 8, 0")
    expect(program).not_to_contain_text("import attnlab")
    expect(how.locator(".rm-how-says")).to_contain_text("bit for bit")
    expect(how.locator(".rm-how-buttons button").last).to_have_text("Download minilm_weight_L0_H0_8_0.py")
    # another number of the head: its previous-token score, named as the API gives it
    how.locator(".rm-how-choice").select_option("previous")
    expect(how).to_have_attribute("data-drawn", "minilm_previous_L0_H0.py")
    expect(program).to_contain_text(f"# The page shows {head['previous']!r} (float32 path).")
    # a picked cell: focus token 3, pick key 2
    page.locator('#rm-tokens [data-index="3"]').focus()
    how.locator(".rm-how-choice").select_option("weight")
    how.locator('select[data-field="key"]').select_option("2")
    expect(how).to_have_attribute("data-drawn", "minilm_weight_L0_H0_3_2.py")
    expect(program).to_contain_text(f"# The page shows {head['weights'][3][2]!r} (float32 path).")


def test_every_view_of_a_traced_token_has_its_control_and_an_unknown_number_is_refused_in_words(
    desktop, live_server
):
    page = desktop
    trace(page, CAT)
    page.locator('#rm-tokens [data-index="2"]').focus()
    expect(page.locator("#rm-neuron-out h3")).to_be_visible()
    for panel in ("#rm-neuron", "#rm-journey"):
        expect(page.locator(f"{panel} details.rm-how summary")).to_have_text("How is this computed?")
    neuron = page.locator("#rm-neuron details.rm-how")
    neuron.locator("summary").click()
    expect(neuron).to_have_attribute("data-drawn", "minilm_q_L0_H0_2_0.py")
    journey = page.locator("#rm-journey details.rm-how")
    journey.locator("summary").click()
    journey.locator(".rm-how-choice").select_option("mlp_unit")
    journey.locator('select[data-field="layer"]').select_option("3")
    journey.locator('select[data-field="rank"]').select_option("1")
    expect(journey).to_have_attribute("data-drawn", "minilm_journey_2_L3_mlp_unit.py")
    expect(journey.locator(".rm-how-program code")).to_contain_text("INDEX, LAYER = 2, 3")
    # the API refuses a number the text does not have, in the page's words
    job = job_id(page, "/journey/")
    answer = httpx.get(f"{live_server.url}api/models/jobs/{job}/program",
                       params={"kind": "weight", "layer": 9, "head": 0, "query": 1, "key": 1})  # fmt: skip
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["msg"] == "Layer 9 does not exist; minilm has layers 0..5"


def test_the_control_fits_a_phone_and_passes_axe(phone):
    page = phone
    trace(page, CAT)
    how = page.locator("#rm-view details.rm-how")
    how.locator("summary").tap()
    expect(how).to_have_attribute("data-drawn", re.compile(r"\.py$"))
    assert_no_sideways_scroll(page)
    results = Axe().run(page)
    serious = [v["id"] for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == []
