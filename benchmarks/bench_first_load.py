"""Benchmark the first load's weight: every byte a fresh browser fetches, with and without gzip.

Run: ``.venv/bin/python benchmarks/bench_first_load.py`` (``--smoke``: the same run, which is small already)

For each page (``/`` and ``/real-model``) it fetches, with the app's TestClient
(no network), what a browser with an empty cache fetches: the page, its
stylesheets, its entry scripts and every ``<link rel="modulepreload">`` module,
and the data the page preloads (``<link rel="preload" as="fetch">``, i.e.
``GET /api/example``), each once with ``Accept-Encoding: identity`` and once
with ``gzip``. It prints the response bodies' bytes as sent (headers not
counted) and the ratio. A second visit sends only the page again: every static
URL is versioned and ``immutable``, so the browser does not ask for it.
"""

from __future__ import annotations

import argparse
import re

from fastapi.testclient import TestClient

from attnlab.web.app import create_app
from smoke import add_flag

NEEDS = ()  # what its smoke run needs beyond the test extra (tests/benchmarks)

PAGES = ["/", "/real-model"]
# What a page makes the browser fetch at once (dynamic imports and later requests are not counted).
KINDS = {
    "stylesheets": re.compile(r'<link rel="stylesheet" href="([^"]+)"'),
    "modules": re.compile(r'<(?:link rel="modulepreload" href|script type="module" src)="([^"]+)"'),
    "preloaded data": re.compile(r'<link rel="preload" href="([^"]+)" as="fetch"'),
}


def sent_bytes(client: TestClient, url: str, encoding: str) -> int:
    """The body's length as the server sent it (compressed when it chose to)."""
    with client.stream("GET", url, headers={"accept-encoding": encoding}) as r:
        assert r.status_code == 200, (url, r.status_code)
        return sum(len(chunk) for chunk in r.iter_raw())


def first_load(client: TestClient, page: str) -> list[tuple[str, int, int, int]]:
    """``[(what, files, identity bytes, gzip bytes), ...]`` for a fresh load of ``page``."""
    html = client.get(page, headers={"accept-encoding": "identity"}).text
    rows = [("page (HTML)", 1, sent_bytes(client, page, "identity"), sent_bytes(client, page, "gzip"))]
    for kind, pattern in KINDS.items():
        urls = list(dict.fromkeys(pattern.findall(html)))  # a module is both an entry and preloaded
        plain = sum(sent_bytes(client, url, "identity") for url in urls)
        packed = sum(sent_bytes(client, url, "gzip") for url in urls)
        rows.append((kind, len(urls), plain, packed))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_flag(parser)
    parser.parse_args()
    with TestClient(create_app()) as client:
        for page in PAGES:
            rows = first_load(client, page)
            print(f"\nFirst load of {page} (response bodies, bytes)")
            print(f"{'':18} {'files':>5} {'identity':>10} {'gzip':>10} {'ratio':>6}")
            for what, files, plain, packed in [*rows, ("total", *map(sum, list(zip(*rows))[1:]))]:
                if files == 0:
                    continue
                print(f"{what:18} {files:>5} {plain:>10,} {packed:>10,} {packed / plain:>6.2f}")
            static = sum(files for what, files, _, _ in rows if what in ("stylesheets", "modules"))
            print(f"second visit: the {static} static files come from the browser's cache (immutable URLs)")


if __name__ == "__main__":
    main()
