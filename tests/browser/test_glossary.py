"""Terms defined where they first appear, on hover and on keyboard focus, from the one glossary
(lab/glossary.py), on the main page, /circuits, /real-model and a lab (headless Chromium)."""

from __future__ import annotations

import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from blockkit import wait_block
from connectionskit import lab_page, slide
from labkit import DESKTOP, Recorder, animations_ended
from playwright.sync_api import expect

from attnlab.lab import glossary

pytestmark = pytest.mark.browser

DEFINED = "dfn.term"
TIP = "#term-tip"

# The first occurrence of each term among the text a reader can see, in document order, the way
# js/shared/glossary.js looks for it (the same forms, the same places left out): [[term id, text]].
FIRSTS = """(terms) => {
  const skip = new Set(["SCRIPT","STYLE","NOSCRIPT","TEMPLATE","TITLE","TEXTAREA","INPUT","SELECT","OPTION",
    "BUTTON","A","SUMMARY","LABEL","OUTPUT","CODE","PRE","KBD","SAMP"]);
  const hidden = (el) => el.hidden || el.getAttribute("aria-hidden") === "true" || (el.parentElement &&
    el.parentElement.tagName === "DETAILS" && !el.parentElement.open && el.tagName !== "SUMMARY");
  const forms = [];
  for (const t of terms) {
    for (const f of t.forms) {
      for (const v of new Set([f, f[0].toUpperCase() + f.slice(1)])) forms.push([v, t.id]);
    }
  }
  forms.sort((a, b) => b[0].length - a[0].length);
  const esc = (s) => s.replace(/[.*+?^${}()|[\\]\\\\]/g, "\\\\$&");
  const edge = "[\\\\p{L}\\\\p{N}_]";
  const any = forms.map((f) => esc(f[0])).join("|");
  const re = new RegExp(`(?<!${edge})(?:${any})(?!${edge})`, "gu");
  const idOf = new Map(forms);
  const out = new Map();
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) {
      // a <dfn>'s text counts as text here
      re.lastIndex = 0;
      for (let m = re.exec(node.data); m; m = re.exec(node.data)) {
        const id = idOf.get(m[0]);
        if (!out.has(id)) out.set(id, [id, m[0], node.parentElement.tagName === "DFN"]);
      }
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE || node.namespaceURI !== "http://www.w3.org/1999/xhtml") return;
    if (skip.has(node.tagName) || node.dataset.glossary || hidden(node)) return;
    for (const child of node.childNodes) walk(child);
  };
  walk(document.body);
  return [...out.values()];
}"""


def terms() -> list[dict]:
    return glossary.page_glossary()["terms"]


def definition_of(term_id: str) -> str:
    return next(t["definition"] for t in terms() if t["id"] == term_id)


def check_defined_where_first(page) -> dict[str, str]:
    """Every term on the page is defined at its first occurrence, once; returns {id: shown text}.

    Read once the page's last change has been answered: js/shared/glossary.js marks
    <html data-glossary-pending> from the change until its next pass has placed the definitions.
    """
    expect(page.locator("html")).to_have_attribute("data-glossary-pending", "0")
    firsts = page.evaluate(FIRSTS, terms())
    assert firsts, "no term of the glossary on this page"
    assert [f for f in firsts if not f[2]] == []  # each first occurrence is the <dfn>
    dfns = page.locator(DEFINED)
    ids = [d.get_attribute("data-term") for d in dfns.all()]
    assert len(ids) == len(set(ids)) == len(firsts)  # once per term, and only there
    for d in dfns.all():
        tid = d.get_attribute("data-term")
        assert d.get_attribute("tabindex") == "0"
        described = page.locator(f"#{d.get_attribute('aria-describedby')}")
        assert described.text_content() == definition_of(tid)
    return {f[0]: f[1] for f in firsts}


def test_the_main_pages_terms_are_defined_on_hover_and_on_focus(lab):
    page = lab.page
    wait_block(page)  # the block walk (LayerNorm, RoPE, d_k, logits) loads when it is about to be seen
    page.evaluate("window.scrollTo(0, 0)")
    shown = check_defined_where_first(page)
    assert {"softmax", "w-o", "mlp", "layernorm", "rope", "d-k", "logit"} <= set(shown)
    softmax = page.locator(f'{DEFINED}[data-term="softmax"]')
    tip = page.locator(TIP)
    expect(tip).to_be_hidden()
    softmax.scroll_into_view_if_needed()
    softmax.hover()
    expect(tip).to_be_visible()
    expect(tip).to_have_text(glossary.definition("softmax"))
    expect(tip).to_have_attribute("role", "tooltip")
    below = tip.bounding_box()["y"] >= softmax.bounding_box()["y"]
    assert below  # beside the term, not somewhere else on the page
    tip.hover()  # the pointer may rest on the definition to read it
    expect(tip).to_be_visible()
    page.mouse.move(1, 1)
    expect(tip).to_be_hidden()
    # the keyboard: Tab onto the next term shows its definition; Escape hides it
    w_o = page.locator(f'{DEFINED}[data-term="w-o"]')
    w_o.focus()
    expect(w_o).to_be_focused()
    expect(tip).to_have_text(glossary.definition("W_O"))
    expect(tip).to_be_visible()
    page.keyboard.press("Escape")
    expect(tip).to_be_hidden()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")
    expect(w_o).to_be_focused()
    expect(tip).to_be_visible()
    animations_ended(page)  # the block's play stage fades in (600 ms): axe reads its final colours
    found = Axe().run(page).response["violations"]
    assert [(v["id"], v["impact"], [n["target"] for n in v["nodes"]]) for v in found] == []


def open_page(browser, url):
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    recorder = Recorder()
    recorder.attach(page)
    page.goto(url)
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    return context, page, recorder


@pytest.mark.models  # the pages list the installed models: they read the model packages
@pytest.mark.parametrize(
    "path,expected",
    [
        ("circuits", {"w-o", "unembedding", "logit", "residual-stream", "mlp", "logit-lens", "ablation"}),
        ("real-model", {"logit", "kv-cache"}),
    ],
)
def test_circuits_and_the_real_model_define_their_terms(browser, live_server, path, expected):
    context, page, recorder = open_page(browser, live_server.url + path)
    try:
        expect(page.locator(DEFINED).first).to_be_attached()
        shown = check_defined_where_first(page)
        assert expected <= set(shown), shown
        first = page.locator(DEFINED).first
        first.focus()
        expect(page.locator(TIP)).to_have_text(definition_of(first.get_attribute("data-term")))
        found = Axe().run(page).response["violations"]
        assert [(v["id"], v["impact"], [n["target"] for n in v["nodes"]]) for v in found] == []
    finally:
        context.close()
        recorder.check(live_server.url, live_server)


@pytest.mark.parametrize("path,term", [("connections/kv", "gqa"), ("connections/dilution", "nats")])
def test_a_labs_terms_are_defined_too_and_stay_defined_as_it_redraws(browser, live_server, path, term):
    with lab_page(browser, live_server, path) as (page, _):
        expect(page.locator(f'{DEFINED}[data-term="{term}"]')).to_have_count(1)
        assert term in check_defined_where_first(page)
        page.locator(f'{DEFINED}[data-term="{term}"]').hover()
        expect(page.locator(TIP)).to_have_text(definition_of(term))
        # the words are drawn again for a new input: each term is defined again where it now first is
        before = page.locator("#cx-words").inner_text()
        slide(page, page.locator("#cx-control-list input[type=range]").first.get_attribute("id")[6:], "End")
        expect(page.locator("#cx-words")).not_to_have_text(before)
        assert term in check_defined_where_first(page)
        page.locator("#cx-numbers summary").click()  # a part opened: its terms are looked for too
        check_defined_where_first(page)


@pytest.mark.models
def test_the_terms_of_a_runs_results_are_defined_when_they_appear(browser, live_server):
    """The words that arrive with a model's results define their terms too: the attribution's
    RMSNorm and γ, the ablation table's nats, and, in the circuits lab, K-composition."""
    text = "The cat sat on the mat. The cat sat on the mat.".replace(" ", "%20")
    context, page, recorder = open_page(browser, f"{live_server.url}circuits?model=smollm2&text={text}")
    try:
        page.locator("#ci-dla-run").click()
        drawn = re.compile(r"^\d+$")  # the position attributed
        expect(page.locator("#ci-dla-out")).to_have_attribute("data-drawn", drawn, timeout=300_000)
        page.locator("#ci-heads").fill("L18H6")
        page.locator("#ci-ablation-run").click()
        expect(page.locator("#ci-ablation-out")).to_have_attribute("data-drawn", "L18 H6", timeout=300_000)
        shown = check_defined_where_first(page)
        assert {"rmsnorm", "gamma", "nats", "unembedding", "w-o"} <= set(shown), shown
        page.locator(f'{DEFINED}[data-term="rmsnorm"]').focus()
        expect(page.locator(TIP)).to_have_text(glossary.definition("RMSNorm"))
    finally:
        context.close()
        recorder.check(live_server.url, live_server)
    with lab_page(browser, live_server, "connections/circuits") as (page, _):
        expect(page.locator("html")).to_have_attribute("data-cx-live", "done", timeout=300_000)
        assert "k-composition" in check_defined_where_first(page)
