"""The page names its tab on every request, so the server's line of model jobs serves each tab in turn.

Real Chromium on the real server: every API request of a page carries ``X-Attnlab-Tab`` (24 hex
digits, the same for the page's life), and two pages have two tabs.
"""

from __future__ import annotations

import re

import pytest
from labkit import open_lab

pytestmark = pytest.mark.browser

TAB = re.compile(r"^[0-9a-f]{24}$")


def tabs_of(lab) -> list[tuple[str, str]]:
    """The tab header of every API fetch the page has made so far (each must have one), with its URL."""
    fetched = [r for r in lab.api_requests if r.resource_type == "fetch"]
    return [(r.headers.get("x-attnlab-tab", ""), r.url) for r in fetched]


def test_every_api_request_names_its_pages_tab_and_two_pages_are_two_tabs(browser, live_server):
    pages = []
    for _ in range(2):
        lab = open_lab(browser, live_server.url)
        lab.api_requests = []
        lab.page.on("request", lambda r, lab=lab: lab.api_requests.append(r) if "/api/" in r.url else None)
        lab.page.reload()
        lab.wait_drawn()
        pages.append(lab)
    try:
        first, second = (tabs_of(lab) for lab in pages)
        assert first and second  # the page asks the API as it starts (limits, the example, a trace)
        assert [url for tab, url in first + second if not TAB.match(tab)] == []
        assert len({t for t, _ in first}) == 1 and len({t for t, _ in second}) == 1  # one for the page's life
        assert first[0][0] != second[0][0]
    finally:
        for lab in pages:
            lab.close()
