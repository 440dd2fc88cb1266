"""The Real model page's picker with found models, in a real browser (axe-clean).

The server runs as ``attnlab serve`` does, its registry pointed at a fake Hugging Face cache of tiny
models (tests/hubkit.py): the picker offers the shipped models, then the found ones, each as the
server words it; the files skipped are listed with why; a found model is traced and every head
drawn; a model without a chat template has no chat choice, and the page says so; the chosen
decoder writes.
"""

from __future__ import annotations

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe
from labkit import LiveServer
from playwright.sync_api import expect
from realkit import real_model_view, trace

from hubkit import GPT2, QWEN2

pytestmark = [pytest.mark.browser, pytest.mark.models]  # the page opens on MiniLM, read from its files


@pytest.fixture(scope="module")
def found_server(fake_hub):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_CACHE", str(fake_hub))
        mp.setenv("ATTNLAB_MODELS_DIR", "")
        server = LiveServer().start()  # the server and its worker process inherit the cache's place
    yield server
    server.stop()


def test_the_picker_offers_found_models_and_every_view_draws_one(browser, found_server, artifacts):
    listing = httpx.get(found_server.url + "api/models", timeout=30).json()
    with real_model_view(browser, found_server, 1280, 900) as (page, _):
        groups = page.locator("#rm-model optgroup")
        expect(groups).to_have_count(2)
        expect(groups.nth(0)).to_have_attribute("label", "Shipped with attnlab")
        expect(groups.nth(1)).to_have_attribute("label", "Found on this computer")
        found = [m for m in listing["models"] if m["group"] == "found"]
        expect(groups.nth(1).locator("option")).to_have_text([m["option"] for m in found])
        expect(page.locator("#rm-skipped summary")).to_have_text("1 file that looks like a model skipped")
        page.locator("#rm-skipped summary").click()
        expect(page.locator("#rm-skipped-list li")).to_have_text([listing["skipped"][0]["text"]])
        expect(page.locator("#rm-searched")).to_have_text(listing["searched"]["text"])

        page.locator("#rm-model").select_option(QWEN2)
        about = httpx.get(found_server.url + "api/models/about", params={"model": QWEN2}, timeout=30).json()
        expect(page.locator("#rm-model-note")).to_have_text(about["note"])
        expect(page.locator("#rm-gen-writer")).to_have_text("tiny/qwen2 continues the text.")
        expect(page.locator("#rm-gen-chat")).to_be_visible()
        trace(page, "The cat sat on the mat.", model=QWEN2)
        expect(page.locator("#rm-status")).to_contain_text("Done:")
        expect(page.locator("#rm-layer option")).to_have_count(about["n_layer"])
        expect(page.locator("#rm-heads .rm-gqa")).to_have_count(about["n_kv_head"])  # its GQA groups
        expect(page.locator("#rm-heatmap")).to_have_attribute("data-drawn", "0/0")
        page.locator('#rm-tokens [data-index="3"]').hover()
        expect(page.locator("#rm-row")).to_have_attribute("data-drawn", "0/0/3")
        page.mouse.move(1, 1)

        page.locator("#rm-model").select_option(GPT2)
        expect(page.locator("#rm-gen-chat")).to_be_hidden()  # no chat template: no chat choice
        expect(page.locator("#rm-gen-chat-note")).to_have_text(
            "tiny/gpt2 has no chat template, so it has no chat: it continues the text you give it.")
        page.locator("#rm-text").fill("Hello")
        page.locator("#rm-gen-tokens").fill("3")
        page.locator("#rm-gen-run").click()
        expect(page.locator("#rm-gen-status")).to_have_text("Stopped after 3 tokens (the limit).",
                                                            timeout=120_000)  # fmt: skip
        page.screenshot(path=str(artifacts / "real-model-found.png"), full_page=True)
        results = Axe().run(page)
        (artifacts / "axe-real-model-found.txt").write_text(results.generate_report(), encoding="utf-8")
        found_violations = [(v["id"], v["impact"]) for v in results.response["violations"]]
        assert found_violations == [], found_violations
