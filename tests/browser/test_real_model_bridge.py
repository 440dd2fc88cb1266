"""The bridge to real models: "Open this head in the explorer" on /real-model (headless Chromium, MiniLM).

The page draws one real query row in the explorer's terms; every number shown is the
API's, and the API's are ``==`` to ``trace_query`` on the same real vectors (computed
here from the model in this process).
"""

from __future__ import annotations

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect
from realkit import assert_no_sideways_scroll, page_fixture, trace

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.query import row_labels
from attnlab.models import files

pytestmark = [pytest.mark.browser, pytest.mark.models]

try:
    files.locate(files.MINILM)
except files.ModelNotInstalled as error:  # pragma: no cover - depends on the machine
    pytest.skip(str(error), allow_module_level=True)


def _smollm2_missing() -> str | None:
    try:
        files.locate(files.SMOLLM2)
    except files.ModelNotInstalled as error:  # pragma: no cover - depends on the machine
        return str(error)
    return None


CAT = "The cat sat on the mat."

# Every pair of text boxes in an SVG that overlap (by more than a hair), as [i, j, text_i, text_j].
OVERLAPS = """svg => {
  const boxes = [...svg.querySelectorAll('text')].map(t => [t.getBBox(), t.textContent]);
  const out = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const [a, ta] = boxes[i], [b, tb] = boxes[j];
    const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
    const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
    if (w > 0.5 && h > 0.5) out.push([i, j, ta, tb]);
  }
  return out;
}"""


desktop = page_fixture(1280, 900)
phone = page_fixture(390, 844)


# the bridge's answer may queue behind the trace's other views on a busy machine
PATIENT = 60_000


def open_bridge(page) -> None:
    """Open the bridge with the keyboard, once the focused query has enabled its button."""
    button = page.locator("#rm-bridge-open")
    expect(button).to_be_enabled()
    button.focus()
    page.keyboard.press("Enter")


def bridge_from_api(page, live_server) -> dict:
    urls = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
    url = [u for u in urls if "/bridge/" in u][-1]
    return httpx.get(url, timeout=30).json()


def floats(text: str) -> list[float]:
    return [float(x) for x in text.strip("[]").split(", ")]


def test_the_bridge_opens_a_real_row_in_the_explorers_terms(desktop, live_server, artifacts):
    page = desktop
    trace(page, CAT)
    button = page.locator("#rm-bridge-open")
    expect(button).to_be_disabled()
    expect(page.locator("#rm-bridge")).to_be_hidden()
    page.locator('#rm-tokens [data-index="3"]').focus()
    page.locator("#rm-head").select_option("5")
    expect(page.locator("#rm-bridge-note")).to_have_text("Query 3 sat · layer 0, head 5")
    # keyboard: the button is focusable and Enter opens the bridge, whose title takes the focus
    button.focus()
    page.keyboard.press("Enter")
    title = page.locator("#rm-bridge-title")
    expect(title).to_have_text("Layer 0, head 5 · query 3 sat: one real row in the explorer", timeout=PATIENT)
    expect(title).to_be_focused()
    api = bridge_from_api(page, live_server)

    # the API's numbers are trace_query's on the model's own vectors (==)
    from attnlab.models.registry import get_model

    real = get_model("minilm").trace(CAT, details=True)
    g = real.kv_head(5)
    ref = trace_query(
        real.q[0, 5, 3].astype(float).tolist(),
        real.k[0, g].astype(float).tolist(),
        real.v[0, g].astype(float).tolist(),
        labels=row_labels(real),
        allowed=real.allowed[3].tolist(),
        scale=real.scale,
    )
    t = api["trace"]
    assert t["scores"] == list(ref.scores) and t["weights"] == list(ref.weights)
    assert t["q"] == list(ref.q) and t["keys"] == [list(k) for k in ref.keys]
    assert (t["m"], t["z"], t["output"]) == (ref.m, ref.z, list(ref.output))

    # the score table shows the API's scores and shares, which round trace_query's
    n = len(ref.keys)
    rows = page.locator("#rm-bridge-out table.score-table tbody tr")
    expect(rows).to_have_count(n)
    scores = page.locator("#rm-bridge-out td[data-field^='score-']").all_text_contents()
    shares = page.locator("#rm-bridge-out td[data-field^='percent-']").all_text_contents()
    sources = api["display"]["sources"]
    assert scores == [s["score"] for s in sources] == [fmt.rounded(x) for x in ref.scores]
    assert shares == [s["percent"] for s in sources] == fmt.percents(ref.weights)  # adding up to 100
    # the explorer's own score header (the scale is a multiplier there)
    header = api["display"]["labels"]["score_header"]["text"]
    expect(page.locator("#rm-bridge-out table.score-table thead")).to_contain_text(header)
    # the explorer's words, as the server wrote them
    for part in ("summary", "match", "share", "mix"):
        expect(page.locator(f'#rm-bridge-out [data-words="{part}"]')).to_have_text(api["words"][part]["text"])
    # the shares strip: one slice per allowed key
    expect(page.locator("#rm-bridge-out svg.strip rect.slice")).to_have_count(n)

    # q and every key at full precision, behind disclosures (d_k = 32 for MiniLM)
    q_text = page.locator('#rm-bridge-out [data-field="q-precise"]')
    expect(q_text).to_be_hidden()
    page.locator('#rm-bridge-out details[data-part="q"] > summary').click()
    expect(q_text).to_be_visible()
    assert floats(q_text.text_content()) == list(ref.q) and len(ref.q) == 32
    page.locator('#rm-bridge-out details[data-part="keys"] > summary').click()
    page.locator('#rm-bridge-out .rm-bridge-keys li[data-index="2"] summary').click()
    key2 = page.locator('#rm-bridge-out [data-field="key-precise-2"]')
    expect(key2).to_be_visible()
    assert floats(key2.text_content()) == list(ref.keys[2])
    for i in range(n):
        text = page.locator(f'#rm-bridge-out [data-field="key-precise-{i}"]').text_content()
        assert floats(text) == list(ref.keys[i])

    # the plane: labelled as a projection, what it leaves out said, every key drawn, top 5 named
    caption = page.locator("#rm-bridge-plane-cap")
    expect(caption).to_contain_text("A projection, not the whole picture.")
    expect(caption).to_contain_text(api["plane"]["leaves_out"]["text"])
    expect(caption).to_contain_text("keeps every score exactly")
    expect(caption).to_contain_text("only the 5 with the largest shares are labelled")
    keys = page.locator("#rm-bridge-out svg.rm-bridge-plane circle.rm-bridge-key")
    expect(keys).to_have_count(n)
    drawn = keys.evaluate_all("cs => cs.map(c => [c.dataset.index, c.dataset.x, c.dataset.y].map(Number))")
    assert drawn == [[k["index"], k["x"], k["y"]] for k in api["plane"]["keys"]]
    top5 = sorted(range(n), key=lambda i: (-ref.weights[i], i))[:5]
    named = page.locator("#rm-bridge-out svg.rm-bridge-plane text.label").all_text_contents()
    assert sorted(named) == sorted([api["plane"]["q_display"], *(ref.labels[i] for i in top5)])
    svg = page.locator("#rm-bridge-out svg.rm-bridge-plane")
    assert svg.evaluate(OVERLAPS) == []
    page.locator("#rm-bridge").screenshot(path=str(artifacts / "real-model-bridge.png"))
    results = Axe().run(page)
    serious = [v["id"] for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == []


def test_the_open_bridge_follows_the_focused_query_and_head(desktop):
    page = desktop
    title = page.locator("#rm-bridge-title")
    row = " · query {}: one real row in the explorer"
    trace(page, CAT)
    page.locator('#rm-tokens [data-index="2"]').focus()
    open_bridge(page)
    expect(title).to_have_text("Layer 0, head 0" + row.format("2 cat"), timeout=PATIENT)
    page.locator("#rm-head").select_option("3")
    expect(title).to_have_text("Layer 0, head 3" + row.format("2 cat"))
    page.locator("#rm-layer").select_option("4")
    expect(title).to_have_text("Layer 4, head 3" + row.format("2 cat"))
    page.locator('#rm-tokens [data-index="2"]').focus()
    page.keyboard.press("ArrowRight")
    expect(title).to_have_text("Layer 4, head 3" + row.format("3 sat"))
    # a new text: the open bridge no longer shows the old text's row
    trace(page, "A dog ran in the park.")
    empty = "Focus a query token of this text to open its row here."
    expect(page.locator("#rm-bridge-out")).to_have_text(empty)
    expect(title).to_have_count(0)
    expect(page.locator("#rm-bridge-open")).to_be_disabled()


def test_the_bridge_at_390_px_never_scrolls_sideways(phone, artifacts):
    page = phone
    trace(page, CAT)
    page.locator('#rm-tokens [data-index="3"]').tap()
    expect(page.locator("#rm-bridge-open")).to_be_enabled()
    page.locator("#rm-bridge-open").tap()
    expect(page.locator("#rm-bridge-title")).to_contain_text("query 3 sat", timeout=PATIENT)
    assert_no_sideways_scroll(page)
    for part in ("q", "keys", "output"):
        page.locator(f'#rm-bridge-out details[data-part="{part}"] > summary').tap()
    page.locator('#rm-bridge-out .rm-bridge-keys li[data-index="0"] summary').tap()
    expect(page.locator('#rm-bridge-out [data-field="key-precise-0"]')).to_be_visible()
    assert_no_sideways_scroll(page)
    assert page.locator("#rm-bridge-out svg.rm-bridge-plane").evaluate(OVERLAPS) == []
    page.locator("#rm-bridge").screenshot(path=str(artifacts / "real-model-bridge-phone.png"))
    results = Axe().run(page)
    serious = [v["id"] for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == []


def test_a_252_token_row_draws_every_key_and_names_only_the_top_five(desktop, live_server):
    page = desktop
    long = " ".join(["cat", "dog", "mat", "sat", "ran"] * 50)  # 252 MiniLM tokens with [CLS], [SEP]
    trace(page, long)
    page.locator('#rm-tokens [data-index="0"]').focus()
    page.keyboard.press("End")
    expect(page.locator("#rm-bridge-note")).to_have_text("Query 251 [SEP] · layer 0, head 0")
    open_bridge(page)
    expect(page.locator("#rm-bridge-title")).to_contain_text("query 251 [SEP]", timeout=PATIENT)
    api = bridge_from_api(page, live_server)
    assert api["n_keys"] == 252 and len(api["trace"]["weights"]) == 252
    plane = page.locator("#rm-bridge-out svg.rm-bridge-plane")
    expect(plane.locator("circle.rm-bridge-key")).to_have_count(252)
    expect(plane.locator("text.label")).to_have_count(6)  # q and the 5 largest shares
    expect(page.locator("#rm-bridge-out table.score-table tbody tr")).to_have_count(252)
    assert plane.evaluate(OVERLAPS) == []
    assert_no_sideways_scroll(page)


@pytest.mark.skipif(bool(_smollm2_missing()), reason=_smollm2_missing() or "")
def test_a_causal_row_of_smollm2_has_d_k_64_and_its_later_keys_blocked(desktop, live_server):
    page = desktop
    trace(page, CAT, "smollm2")
    page.locator('#rm-tokens [data-index="3"]').focus()
    open_bridge(page)
    expect(page.locator("#rm-bridge-title")).to_contain_text("Layer 0, head 0 · query 3", timeout=PATIENT)
    api = bridge_from_api(page, live_server)
    n = api["n_keys"]
    assert api["d_k"] == 64 and len(api["trace"]["q"]) == 64 and n > 4
    assert api["trace"]["blocked"] == list(range(4, n))
    expect(page.locator('#rm-bridge-out details[data-part="q"] > summary')).to_contain_text(
        "64 numbers at full precision"
    )
    expect(page.locator("#rm-bridge-out .hint").first).to_contain_text(
        f"(4 may be seen, and the causal mask blocks {n - 4} later tokens)"
    )
    shares = page.locator("#rm-bridge-out td[data-field^='percent-']").all_text_contents()
    assert shares[4:] == ["blocked"] * (n - 4)
    # the plane draws the keys the query may see; the leaves-out sentence counts 62 other directions
    expect(page.locator("#rm-bridge-out svg.rm-bridge-plane circle.rm-bridge-key")).to_have_count(4)
    expect(page.locator("#rm-bridge-plane-cap")).to_contain_text("It leaves out the other 62 directions")
