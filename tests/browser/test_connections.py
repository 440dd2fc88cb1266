"""The twelve connection labs' common checks, written once and run for every lab (headless Chromium).

For each lab (:data:`CASES`): it opens from a link of its own with that link's inputs and shows its own
answer (the API's title, controls, words and link); with every part open (every number, the Python,
every challenge) axe finds nothing at all, on a desktop and on a phone, where it also fits; and the
main page's "Open …" links to it name it, lead to it, and it links back. A lab whose page runs a model
(circuits, serving, speculate) waits for its run and is marked ``models``; a lab with a model part of
its own (the needle, the live cache, SmolLM2's RoPE, its logits, MiniLM's embeddings) opens it too, in
the ``models`` lane. What only one lab does is tested in its own ``test_connections_<name>.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urlencode
from urllib.request import urlopen

import pytest
from axe_playwright_python.sync_playwright import Axe
from connectionskit import PHONE, assert_fits, lab_page, settle
from playwright.sync_api import expect

from attnlab.lab.connections import registry
from attnlab.lab.content import content

pytestmark = pytest.mark.browser

RUN_MS = 300_000  # a model run, the first loading its model in the worker
SERVING = urlencode({"prompts": "Hi\nThe capital of France is\nOne, two,", "tokens": 6})


@dataclass(frozen=True)
class Case:
    name: str
    link: str  # a link's query with inputs of its own (the lab's defaults are another case)
    models: bool = False  # its page runs a model at this link: wait for the run
    parts: str | None = None  # a query that turns on the lab's own model part


CASES = (
    Case("rope", "offset=700", parts="own=on"),
    Case("kv", "tokens=1024&precision=4", parts="live=on&new=4"),
    Case("speculate", "tokens=12", models=True),
    Case("serving", SERVING, models=True),
    Case("flash", "n=32&tile=8&keys=12"),
    Case("dilution", "keys=64&scaling=off", parts="needle=on"),
    Case("ssm", "n=8&step=8"),
    Case("moe", "experts=6&k=1"),
    Case("cross", "grid=6&row=3&col=3"),
    Case("embeddings", "tau=0.05", parts="source=minilm"),
    Case("sampling", "temperature=1", parts="source=smollm2&k=5"),
    Case("circuits", "map=previous", models=True),
)


def every(cases=CASES) -> list:
    """The cases as pytest parameters, a model lab's in the ``models`` lane."""
    return [pytest.param(c, id=c.name, marks=[pytest.mark.models] if c.models else []) for c in cases]


def with_parts() -> list:
    return [pytest.param(c, id=c.name, marks=[pytest.mark.models]) for c in CASES if c.parts]


def api(live_server, name: str, query: str) -> dict:
    with urlopen(f"{live_server.url}api/connections/{name}?{query}", timeout=60) as r:
        return json.load(r)


def wait_for_the_run(page) -> None:
    expect(page.locator("html")).to_have_attribute("data-cx-live", "done", timeout=RUN_MS)
    settle(page)


def open_every_part(page) -> int:
    """Open every disclosure (every number, the Python, each challenge); return how many there are."""
    parts = page.locator("main details")
    for d in parts.all():
        if not d.evaluate("d => d.open"):
            d.locator("summary").first.click()
    settle(page)
    expect(page.locator("#cx-tables table").first).to_be_visible()
    expect(page.locator("#cx-code")).to_contain_text("import")
    return parts.count()


def violations(page) -> list:
    """Every axe finding, whatever its impact: (rule, impact, the first nodes)."""
    found = Axe().run(page).response["violations"]
    return [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in found]


@pytest.mark.parametrize("case", every())
def test_the_lab_opens_from_its_link_with_its_own_answer(browser, live_server, case):
    with lab_page(browser, live_server, f"connections/{case.name}?{case.link}") as (page, _):
        if case.models:
            wait_for_the_run(page)
        answer = api(live_server, case.name, case.link)
        assert answer["lab"]["title"] == registry.entry(case.name).title
        expect(page.locator("h1")).to_have_text(answer["lab"]["title"])
        for c in answer["controls"]:
            shown = page.locator(f"#cx-in-{c['name']}").input_value()
            if c["kind"] in ("choice", "text"):
                assert shown == str(c["value"]), c["name"]
            else:
                assert float(shown) == float(c["value"]), c["name"]
                expect(page.locator(f"#cx-in-{c['name']}-value")).to_have_text(c["value_text"])
        assert page.locator("#cx-words li").all_inner_texts() == [w["text"] for w in answer["words"]]
        assert page.url.endswith(answer["link"])  # the address bar holds the lab's own link
        assert page.locator("#cx-link").get_attribute("href") == answer["link"]
        assert page.locator("#cx-back").get_attribute("href") == "/#connections"


@pytest.mark.parametrize("case", every())
def test_with_every_part_open_axe_finds_nothing(browser, live_server, case):
    with lab_page(browser, live_server, f"connections/{case.name}?{case.link}") as (page, _):
        if case.models:
            wait_for_the_run(page)
        assert open_every_part(page) >= 3  # the numbers, the Python and at least one challenge
        assert violations(page) == []


@pytest.mark.parametrize("case", every())
def test_on_a_phone_it_fits_and_axe_finds_nothing(browser, live_server, case):
    with lab_page(browser, live_server, f"connections/{case.name}?{case.link}", **PHONE) as (page, _):
        if case.models:
            wait_for_the_run(page)
        open_every_part(page)
        assert_fits(page, PHONE["width"])
        assert violations(page) == []


@pytest.mark.parametrize("case", with_parts())
def test_with_its_model_part_on_axe_finds_nothing(browser, live_server, case):
    with lab_page(browser, live_server, f"connections/{case.name}?{case.parts}") as (page, _):
        wait_for_the_run(page)
        open_every_part(page)
        assert violations(page) == []


def test_the_open_links_are_the_registrys():
    links = [
        (item["title"], item["open"]["text"], item["open"]["href"])
        for group in content()["connections"]["groups"]
        for item in group["items"]
        if item["open"]
    ]
    routes = {title: e.route for e in registry.ENTRIES for title in e.opens_from}
    assert {title: href for title, _, href in links} == routes
    assert all(text.startswith("Open ") for _, text, _ in links)
    assert {e.name for e in registry.ENTRIES} == {c.name for c in CASES}  # every lab has its case


def test_the_main_page_shows_every_open_link_in_the_contents_order(lab):
    page = lab.page
    page.locator("#connections-title").scroll_into_view_if_needed()
    links = page.locator("a.connection-open")
    expected = [
        (item["open"]["text"], item["open"]["href"])
        for group in content()["connections"]["groups"]
        for item in group["items"]
        if item["open"]
    ]
    expect(links).to_have_count(len(expected))
    assert [(a.inner_text(), a.get_attribute("href")) for a in links.all()] == expected


@pytest.mark.parametrize("case", every())
def test_every_open_link_names_this_lab_leads_here_and_the_lab_links_back(lab, case):
    """From the main page: each "Open …" link to this lab says which lab it opens (one wording for the
    one lab), opens it, and the lab's back link returns to the Connections."""
    entry = registry.entry(case.name)
    page = lab.page
    page.locator("#connections-title").scroll_into_view_if_needed()
    links = page.locator(f'a.connection-open[href="{entry.route}"]')
    expect(links).to_have_count(len(entry.opens_from))
    assert set(links.all_inner_texts()) == {entry.open_text}
    others = {a.inner_text() for a in page.locator("a.connection-open").all()} - {entry.open_text}
    assert entry.open_text not in others and len(others) == len(registry.ENTRIES) - 1
    for i in range(len(entry.opens_from)):
        page.locator("#connections-title").scroll_into_view_if_needed()
        page.locator(f'a.connection-open[href="{entry.route}"]').nth(i).click()
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        assert page.url.split("?")[0].endswith(entry.route)
        expect(page.locator("h1")).to_have_text(entry.title)
        back = page.locator('a[href="/#connections"]').first
        expect(back).to_be_visible()
        back.click()
        lab.wait_drawn()
