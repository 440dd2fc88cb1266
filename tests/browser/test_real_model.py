"""The Real model view (static/real-model.html) in headless Chromium against the live server."""

from __future__ import annotations

import re

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect
from realkit import TRACE_TIMEOUT_MS, job_id, real_model_view, trace

from attnlab.models import files

pytestmark = [pytest.mark.browser, pytest.mark.models]


def _missing() -> str | None:
    try:
        files.locate(files.MINILM)
        files.locate(files.SMOLLM2)
    except files.ModelNotInstalled as error:
        return str(error)
    return None


if _missing():
    pytest.skip(_missing(), allow_module_level=True)

CAT = "The cat sat on the mat."


@pytest.fixture
def view(browser, live_server):
    """/real-model at 1280x900 as (page, recorder); at teardown: no foreign request, no console error."""
    with real_model_view(browser, live_server, 1280, 900) as opened:
        yield opened


def head_from_api(live_server, page, layer: int, head: int) -> dict:
    job = job_id(page, "/api/models/jobs/")
    return httpx.get(f"{live_server.url}api/models/jobs/{job}/heads/{layer}/{head}", timeout=30).json()


def test_type_text_pick_a_head_and_the_cells_are_the_apis_weights(view, live_server, artifacts):
    page, _ = view
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    trace(page, CAT)
    expect(page.locator("#rm-tokens .rm-token")).to_have_count(9)
    page.locator("#rm-layer").select_option("2")
    page.locator("#rm-head").select_option("5")
    kind = page.locator("#rm-head-kind")
    expect(kind).to_contain_text("of each token's attention goes to the previous token")
    # "breadth" said in words, and a colour legend beside the heatmap
    expect(kind).to_contain_text("0 = each token attends to one key, 1 = its attention is spread evenly")
    expect(page.locator("#rm-legend .rm-legend-svg rect.rm-cell")).to_have_count(7)
    expect(page.locator("#rm-legend")).to_contain_text("square root of the share")
    expect(page.locator("#rm-heatmap")).to_have_attribute("data-drawn", "2/5")
    api = head_from_api(live_server, page, 2, 5)
    cells = page.locator("#rm-heatmap rect.rm-cell")
    expect(cells).to_have_count(81)
    drawn = page.evaluate(
        "() => [...document.querySelectorAll('#rm-heatmap rect.rm-cell')]"
        ".map(r => [Number(r.dataset.q), Number(r.dataset.k), Number(r.dataset.weight)])"
    )
    assert len(drawn) == 81
    for q, k, w in drawn:
        assert w == api["weights"][q][k]
    # every cell says its share as the server wrote it, and exactly
    title = page.locator('#rm-heatmap rect.rm-cell[data-q="3"][data-k="2"] title')
    said = re.fullmatch(r"3 sat → 2 cat: share (\S+) \(exactly (\S+)\)", title.text_content())
    assert said and said[1] == api["shares"][3][2] and float(said[2]) == api["weights"][3][2]
    # every head of the layer is drawn in the overview; head 5 is the selected one
    expect(page.locator("#rm-heads .rm-head-button")).to_have_count(12)
    expect(page.locator("#rm-heads")).to_have_attribute("data-layer", "2")
    expect(page.locator('#rm-heads [data-head="5"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator('#rm-heads [data-head="5"]')).to_have_attribute(
        "aria-label", re.compile(rf"previous token {re.escape(api['previous_display'])}, ")
    )
    # switching layer and head fetched single heads and the model view's thumbnails, never a whole layer
    assert any("/heads/2/5?packed=true" in u for u in asked)
    assert sum(u.endswith("/model-view") for u in asked) == 1
    assert not [u for u in asked if "/layers/" in u]
    page.screenshot(path=str(artifacts / "real-model-minilm.png"), full_page=True)


def test_hovering_a_token_shows_its_query_row(view):
    page, _ = view
    trace(page, CAT)
    page.locator('#rm-tokens [data-index="3"]').hover()
    expect(page.locator("#rm-row-title")).to_have_text("Query 3 sat · layer 0, head 0")
    expect(page.locator("#rm-row tbody tr")).to_have_count(9)
    expect(page.locator("#rm-row .rm-top")).to_contain_text("Top 5 sources:")
    expect(page.locator("#rm-row")).to_contain_text("Share: softmax subtracts the largest score")


def test_keyboard_reaches_tokens_heads_and_rows(view):
    page, _ = view
    trace(page, CAT)
    page.locator('#rm-tokens [data-index="0"]').focus()
    expect(page.locator("#rm-row-title")).to_have_text("Query 0 [CLS] · layer 0, head 0")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.locator('#rm-tokens [data-index="2"]')).to_be_focused()
    expect(page.locator("#rm-row-title")).to_have_text("Query 2 cat · layer 0, head 0")
    page.keyboard.press("End")
    expect(page.locator("#rm-row-title")).to_have_text("Query 8 [SEP] · layer 0, head 0")
    head = page.locator('#rm-heads [data-head="7"]')
    head.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#rm-head")).to_have_value("7")
    expect(page.locator("#rm-row-title")).to_have_text("Query 8 [SEP] · layer 0, head 7")


def test_smollm2_shows_its_gqa_groups_and_a_causal_pattern(view, artifacts):
    page, _ = view
    trace(page, CAT, model="smollm2")
    expect(page.locator("#rm-heads .rm-gqa")).to_have_count(3)
    kv1 = page.locator("#rm-heads").get_by_role("group", name="KV head 1", exact=True)
    expect(kv1.locator(".rm-head-button")).to_have_count(3)
    expect(page.locator("#rm-heads .rm-gqa").first).to_contain_text(
        "KV head 0: query heads 0, 1, 2 share its keys and values"
    )
    expect(page.locator("#rm-head option").nth(4)).to_have_text("head 4 (KV head 1)")
    # once the worker has loaded it, the model line says what its products ran on
    expect(page.locator("#rm-model-note")).to_contain_text("Weights computed on the file's Q4_1 blocks")
    expect(page.locator("#rm-heatmap rect.rm-cell.is-blocked")).to_have_count(21)  # 7 tokens: 7*6/2
    page.locator('#rm-tokens [data-index="4"]').hover()
    # a whitespace token shows visibly: " the" is ␣the, never a blank
    expect(page.locator("#rm-row-title")).to_have_text("Query 4 ␣the · layer 0, head 0 (reads KV head 0)")
    page.screenshot(path=str(artifacts / "real-model-smollm2.png"), full_page=True)


# SmolLM2 makes a token of each: 2 a space, 4 a line break, 6 a tab
SPACES = "The cat  sat\non\tthe mat."
VISIBLE = {2: ("2 ␣", " "), 4: ("4 ⏎", "\n"), 6: ("6 ⇥", "\t")}


def test_whitespace_tokens_show_visibly_and_carry_their_exact_text_as_title(view):
    page, _ = view
    trace(page, SPACES, model="smollm2")
    # the token toolbar
    for i, (label, exact) in VISIBLE.items():
        button = page.locator(f'#rm-tokens [data-index="{i}"]')
        expect(button).to_have_text(label)
        expect(button).to_have_attribute("title", exact)
    # the heatmap's axes: each label's group says the exact text (keys on top, queries at the left)
    axes = page.evaluate(
        "() => [...document.querySelectorAll('#rm-heatmap g.rm-axis-label')]"
        ".map(g => [g.querySelector('text').getAttribute('class'), g.querySelector('text').textContent,"
        " g.querySelector('title').textContent])"
    )
    for label, exact in VISIBLE.values():
        assert ["rm-key-label", label, exact] in axes and ["rm-query-label", label, exact] in axes
    # the row of the tab's query: the table's key cells and the top sources, each with its exact text
    page.locator('#rm-tokens [data-index="6"]').focus()
    expect(page.locator("#rm-row-title")).to_have_text("Query 6 ⇥ · layer 0, head 0 (reads KV head 0)")
    for i, (label, exact) in VISIBLE.items():
        key = page.locator(f'#rm-row tbody tr[data-index="{i}"] th')
        expect(key).to_have_text(label)
        expect(key).to_have_attribute("title", exact)
    pairs = "es => es.map(e => [e.textContent, e.title])"
    exact_of = dict(page.locator("#rm-tokens .rm-token").evaluate_all(pairs))
    top = page.locator("#rm-row .rm-top strong").evaluate_all(pairs)
    assert len(top) == 5 and all(title == exact_of[label] for label, title in top)
    # the bridge: every key's disclosure says its token's exact text
    page.locator("#rm-bridge-open").click()
    for i, (label, exact) in VISIBLE.items():
        summary = page.locator(f'#rm-bridge-out .rm-bridge-keys li[data-index="{i}"] > details > summary')
        expect(summary).to_contain_text(f"k of {label} ·", timeout=TRACE_TIMEOUT_MS)
        expect(summary).to_have_attribute("title", exact)


def test_the_cap_is_counted_in_tokens_as_the_learner_types(view):
    page, recorder = view
    recorder.allow(r"status of 422")
    # said up front, counted by the server's tokenizer: [CLS] the cat sat on the mat . [SEP]
    expect(page.locator("#rm-count")).to_have_text("9 of 256 tokens")
    page.locator("#rm-text").fill("word " * 300)
    expect(page.locator("#rm-count")).to_contain_text("302 tokens")
    expect(page.locator("#rm-count")).to_contain_text("shorten it by 46.")
    expect(page.locator("#rm-count")).to_have_class(re.compile("is-over"))
    # switching model recounts with that model's tokenizer
    page.locator("#rm-text").fill(CAT)
    page.locator("#rm-model").select_option("smollm2")
    expect(page.locator("#rm-count")).to_have_text("7 of 256 tokens")
    # over the cap is refused before any model load
    page.locator("#rm-text").fill("word " * 300)
    page.locator("#rm-run").click()
    expect(page.locator("#rm-error")).to_contain_text(re.compile("text", re.IGNORECASE))
    expect(page.locator("#rm-status")).to_have_text("Nothing traced: fix the text and try again.")
    expect(page.locator("#rm-text")).to_have_attribute("aria-invalid", "true")


def test_a_text_over_the_character_limit_or_a_failed_count_is_said_in_the_servers_words(view):
    page, recorder = view
    recorder.allow(r"status of 422")
    page.locator("#rm-text").fill("a" * 2001)  # counted here, before any request
    expect(page.locator("#rm-count")).to_have_text(
        "2001 characters: over the 2000-character limit; the cap is 256 tokens"
    )
    expect(page.locator("#rm-count")).to_have_class(re.compile("is-over"))
    said = "The text is not one we can count."
    refused = [{"loc": ["body", "text"], "field": "text", "msg": said, "type": "value_error"}]
    page.route("**/api/models/*/tokens", lambda route: route.fulfill(status=422, json={"detail": refused}))
    page.locator("#rm-text").fill(CAT)
    expect(page.locator("#rm-count")).to_have_text(f"Could not count the tokens: {said}")


BUSY = "The model is busy: 33 requests are ahead of you."


def _as_queued(job: dict) -> dict:
    """The job as the server shows it while two others wait before it."""
    return {
        **job,
        "status": "queued",
        "place": 3,
        "place_display": "3rd in line",
        "stage_display": "Waiting: 3rd in line",
        "progress": 0.0,
        "progress_display": "0%",
        "layers_done": 0,
        "result": None,
    }


def test_a_full_line_is_waited_out_and_the_page_shows_its_place(view):
    page, recorder = view
    recorder.allow(r"status of 429")
    line = {"full": True, "queued": True}  # what the routes below pretend, until the test says otherwise

    def post(route):
        if line["full"]:
            detail = [{"loc": ["body"], "field": "body", "msg": BUSY, "type": "busy"}]
            route.fulfill(status=429, headers={"Retry-After": "1"}, json={"detail": detail})
        else:
            response = route.fetch()
            route.fulfill(response=response, json=_as_queued(response.json()))

    def status(route):
        if line["queued"]:
            response = route.fetch()
            route.fulfill(response=response, json=_as_queued(response.json()))
        else:
            route.continue_()

    def posted(request) -> bool:
        return request.method == "POST" and request.url.endswith("/api/models/jobs")

    page.route("**/api/models/jobs", post)
    page.route(re.compile(r".*/api/models/jobs/[^/]+$"), status)
    page.locator("#rm-text").fill(CAT)
    with page.expect_request(posted):
        page.locator("#rm-run").click()
    expect(page.locator("#rm-status")).to_have_text(f"{BUSY} Trying again in 1 s…")
    expect(page.locator("#rm-run")).to_be_disabled()
    with page.expect_request(posted):  # nobody clicks: the page tries again by itself
        pass
    line["full"] = False
    expect(page.locator("#rm-status")).to_have_text("Waiting: 3rd in line", timeout=30_000)
    line["queued"] = False
    expect(page.locator("#rm-status")).to_contain_text("Done: 9 tokens", timeout=120_000)
    expect(page.locator("#rm-error")).to_be_hidden()


def test_axe_finds_no_serious_or_critical_violation(view, artifacts):
    page, _ = view
    trace(page, CAT, model="smollm2")
    page.locator('#rm-tokens [data-index="2"]').focus()
    expect(page.locator("#rm-row tbody tr")).to_have_count(7)
    results = Axe().run(page)
    (artifacts / "axe-real-model.txt").write_text(results.generate_report(), encoding="utf-8")
    serious = [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]])
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == []


def test_the_lab_page_links_to_the_view(live_server):
    page = httpx.get(live_server.url, timeout=30).text
    assert 'href="/real-model"' in page


def test_smollm2_continues_the_text_token_by_token(view, live_server):
    page, _ = view
    page.locator("#rm-text").fill("Once upon a time")
    # "Continue the text" continues it as it is; the chat template is a separate, labelled choice
    expect(page.locator("#rm-gen-run")).to_have_text("Continue the text")
    expect(page.locator("#rm-gen-chat")).to_have_text("Answer as the assistant (chat template)")
    page.locator("#rm-gen-tokens").fill("12")
    page.locator("#rm-gen-run").click()
    expect(page.locator("#rm-gen-status")).to_have_text(
        "Stopped after 12 tokens (the limit).", timeout=120_000
    )
    expect(page.locator("#rm-gen-out .rm-gen-prompt")).to_have_text("Once upon a time")
    # the same request straight to the API gives the same greedy continuation
    api = live_server.url + "api/models/generate"
    job = httpx.post(
        api, json={"prompt": "Once upon a time", "max_new_tokens": 12, "chat": False}, timeout=30
    ).json()
    for _ in range(1200):
        job = httpx.get(f"{api}/{job['id']}", timeout=30).json()
        if job["status"] == "done":
            break
        page.wait_for_timeout(100)
    expect(page.locator("#rm-gen-out .rm-gen-new")).to_have_text(job["text"])
    # each step: the token drawn and the distribution it came from (greedy: the likeliest)
    steps = page.locator("#rm-gen-steps > li")
    expect(steps).to_have_count(len(job["steps"]))
    first = job["steps"][0]
    steps.first.locator("summary").click()
    expect(steps.first.locator(".rm-step-top li")).to_have_count(5)
    expect(steps.first.locator(".rm-step-top li.is-drawn")).to_contain_text(first["top"][0]["p_display"])
    expect(steps.first.locator("summary")).to_contain_text(f"drawn with p {first['p_display']}")
    # every token visible: the label shows a space as ␣, the exact text is the hover title
    expect(steps.first.locator("summary code")).to_have_text(first["label"])
    expect(steps.first.locator("summary code")).to_have_attribute("title", first["token"])


def test_continue_the_text_continues_it_and_the_chat_choice_answers(view):
    page, _ = view
    page.locator("#rm-text").fill("The capital of France is")
    page.locator("#rm-gen-tokens").fill("3")
    page.locator("#rm-gen-run").click()
    status = page.locator("#rm-gen-status")
    expect(status).to_have_text("Stopped after 3 tokens (the limit).", timeout=120_000)
    expect(page.locator("#rm-gen-out .rm-gen-prompt")).to_have_text("The capital of France is")
    expect(page.locator("#rm-gen-out .rm-gen-new")).to_contain_text("Paris")
    expect(page.locator("#rm-gen-out")).to_have_attribute("data-mode", "Continue the text")
    page.locator("#rm-gen-chat").click()
    expect(page.locator("#rm-gen-out")).to_have_attribute(
        "data-mode", "Answer as the assistant (chat template)", timeout=120_000
    )
    expect(page.locator("#rm-gen-out .rm-gen-prompt")).to_have_count(0)


def test_a_question_without_chat_gets_a_hint_or_an_answer(view):
    page, _ = view
    page.locator("#rm-text").fill("What is the capital of France?")
    page.locator("#rm-gen-tokens").fill("8")
    page.locator("#rm-gen-run").click()
    status = page.locator("#rm-gen-status")
    # greedy SmolLM2 ends its turn at once on a raw question: the page says why and what to do
    expect(status).to_contain_text("Stopped at the end of its turn after 1 token.", timeout=120_000)
    expect(status).to_contain_text("choose “Answer as the assistant (chat template)” to ask it a question.")
    # the chat choice answers it
    page.locator("#rm-gen-chat").click()
    expect(page.locator("#rm-gen-out .rm-gen-new")).to_contain_text("Paris", timeout=120_000)


def test_next_token_probabilities_follow_the_controls_and_the_position(view, live_server, artifacts):
    page, recorder = view
    recorder.allow(r"status of 422")  # the out-of-range temperature at the end
    trace(page, "The capital of France is", model="smollm2")
    panel = page.locator("#rm-next")
    expect(panel).to_be_visible()
    expect(page.locator("#rm-next-position")).to_have_value("4")
    # every token visible: " is" shows as ␣is (no blank token)
    expect(page.locator("#rm-next-out .rm-next-context")).to_contain_text("After token 4 ␣is")
    first = page.locator("#rm-next-out > table tbody tr th code").first
    expect(first).to_have_text("␣Paris")
    expect(first).to_have_attribute("title", " Paris")
    # the top five first, the rest on demand; the numbers are the API's
    expect(page.locator("#rm-next-out > table tbody tr")).to_have_count(5)
    expect(page.locator("#rm-next-out details tbody tr")).to_have_count(15)
    job = job_id(page, "/next/")
    api = httpx.get(
        f"{live_server.url}api/models/jobs/{job}/next/4", params={"top": 20}, timeout=30
    ).json()
    drawn = page.locator("#rm-next-out tbody tr").evaluate_all("rs => rs.map(r => Number(r.dataset.id))")
    assert drawn == [e["id"] for e in api["entries"]]
    expect(page.locator("#rm-next-out > table tbody tr").first).to_contain_text(
        api["entries"][0]["p_display"]
    )
    # top-k 1 keeps only the likeliest token: it gets 100%, the others are marked removed
    page.locator("#rm-next-top-k").fill("1")
    page.locator("#rm-next-top-k").press("Enter")
    page.locator("#rm-next-run").click()
    expect(page.locator('#rm-next-out [data-control="top_k"]')).to_contain_text(
        "Top-k 1 removed 49,151 tokens"
    )
    expect(page.locator("#rm-next-out > table tbody tr").first).to_contain_text("100%")
    expect(page.locator("#rm-next-out tr.is-removed")).to_have_count(19)
    # another position: the token that really follows is named with its rank
    page.locator("#rm-next-position").select_option("1")
    expect(page.locator("#rm-next-out .rm-next-actual")).to_contain_text("the next token is ␣of, at rank")
    # a temperature out of range is refused by the server, naming the field
    page.locator("#rm-next-temperature").fill("9")
    page.locator("#rm-next-run").click()
    expect(page.locator("#rm-next-error")).to_contain_text(re.compile("[Tt]emperature must be at most 5"))
    page.screenshot(path=str(artifacts / "real-model-next-token.png"), full_page=True)


def test_next_token_view_is_hidden_for_an_encoder(view):
    page, _ = view
    trace(page, CAT)
    expect(page.locator("#rm-next")).to_be_hidden()
