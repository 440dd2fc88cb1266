"""Every "Open …" link of the main page's Connections opens a working lab, which links back."""

from __future__ import annotations

import pytest
from connectionskit import settle
from playwright.sync_api import expect

from attnlab.lab.connections import registry
from attnlab.lab.content import content

pytestmark = pytest.mark.browser


def _expected_links() -> list[tuple[str, str, str]]:
    """(connection title, link text, route) for every connection that has a lab, in page order."""
    return [
        (item["title"], item["open"]["text"], item["open"]["href"])
        for group in content()["connections"]["groups"]
        for item in group["items"]
        if item["open"]
    ]


def test_the_links_are_the_registrys():
    routes = {title: e.route for e in registry.ENTRIES for title in e.opens_from}
    links = _expected_links()
    assert {title: href for title, _, href in links} == routes
    assert all(text.startswith("Open ") for _, text, _ in links)


def test_every_open_link_opens_its_lab_and_the_lab_links_back(lab):
    page = lab.page
    page.locator("#connections-title").scroll_into_view_if_needed()
    links = page.locator("a.connection-open")
    expected = _expected_links()
    expect(links).to_have_count(len(expected))
    assert [(a.inner_text(), a.get_attribute("href")) for a in links.all()] == [
        (text, href) for _, text, href in expected
    ]
    for href in sorted({href for _, _, href in expected}):
        page.locator(f'a.connection-open[href="{href}"]').first.click()
        expect(page.locator("body")).to_have_attribute("data-ready", "true")
        settle(page)
        assert page.url.split("?")[0].endswith(href)
        title = registry.entry(href.rsplit("/", 1)[1]).title
        expect(page.locator("h1")).to_have_text(title)
        back = page.locator('a[href="/#connections"]').first
        expect(back).to_be_visible()
        back.click()
        lab.wait_drawn()
        page.locator("#connections-title").scroll_into_view_if_needed()
