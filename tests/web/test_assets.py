"""The pages preload exactly the modules their entry scripts import, under versioned, gzipped URLs."""

import gzip
import html
import json
import os
import posixpath
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.routing import Route

from attnlab.web.app import create_app
from attnlab.web.assets import IMMUTABLE, Assets

STATIC = Path(__file__).resolve().parents[2] / "src" / "attnlab" / "web" / "static"
JS = STATIC / "js"
VERSIONED = r"/static/v/([0-9a-f]{16})/"


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def imported(name: str, source: str) -> set[str]:
    """The modules ``name`` imports statically, as paths under static/js."""
    specs = re.findall(r'from\s+["\'](\.\.?/[\w./-]+\.js)["\']', source)
    return {posixpath.normpath(posixpath.join(posixpath.dirname(name), spec)) for spec in specs}


def test_preloads_are_the_import_closure_of_the_entry_scripts(client):
    page = client.get("/").text
    preloaded = set(re.findall(r'<link rel="modulepreload" href="' + VERSIONED + r'js/([\w./-]+)">', page))
    entries = set(re.findall(r'<script type="module" src="' + VERSIONED + r'js/([\w./-]+)"', page))
    assert entries <= preloaded
    preloaded = {name for _, name in preloaded}
    for name in preloaded:
        source = (JS / name).read_text(encoding="utf-8")
        assert imported(name, source) <= preloaded, (name, imported(name, source) - preloaded)
    assert not {n for n in preloaded if n.startswith("realmodel/")}
    assert {"explorer/main.js", "explorer/state.js", "notebook/main.js", "shared/dom.js"} <= preloaded


def test_the_real_model_page_preloads_its_own_modules_and_no_notebook(client):
    page = client.get("/real-model").text
    links = re.findall(r'rel="modulepreload" href="' + VERSIONED + r'js/([\w./-]+)"', page)
    preloaded = {name for _, name in links}
    assert {"realmodel/main.js", "shared/http.js", "shared/limits.js", "shared/dom.js"} <= preloaded
    assert not {n for n in preloaded if n.startswith(("notebook/", "block/"))}


@pytest.mark.parametrize("route", ["/", "/real-model"])
def test_pages_name_only_versioned_static_urls_of_one_version(client, route):
    page = client.get(route)
    assert page.headers["cache-control"] == "no-cache"
    urls = re.findall(r'(?:src|href)="(/static/[^"]*)"', page.text)
    assert urls and all(re.match(VERSIONED, url) for url in urls), urls
    assert len({re.match(VERSIONED, url).group(1) for url in urls}) == 1
    assert not re.search(r'["\']/static/(?!v/)', page.text)


def test_a_versioned_file_is_immutable_and_an_unversioned_one_is_revalidated(client):
    url = re.search(r'src="(' + VERSIONED + r'js/explorer/main\.js)"', client.get("/").text).group(1)
    versioned = client.get(url)
    plain = client.get("/static/js/explorer/main.js")
    assert versioned.status_code == plain.status_code == 200
    assert versioned.headers["cache-control"] == IMMUTABLE == "public, max-age=31536000, immutable"
    assert plain.headers["cache-control"] == "no-cache"
    assert versioned.content == plain.content == (JS / "explorer" / "main.js").read_bytes()
    assert versioned.headers["content-type"] == "text/javascript; charset=utf-8"
    # Another version's URL still answers (a tab open across an upgrade), but is not kept.
    old = client.get("/static/v/0123456789abcdef/js/explorer/main.js")
    assert old.status_code == 200 and old.headers["cache-control"] == "no-cache"
    assert old.content == plain.content
    assert client.get("/static/v/0123456789abcdef/js/missing.js").status_code == 404
    assert client.get("/static/v/").status_code == 404


@pytest.mark.parametrize("path", ["/static/js/explorer/state.js", "/static/css/lab.css", "/"])
def test_answers_are_gzipped_for_a_client_that_accepts_it(client, path):
    with client.stream("GET", path, headers={"accept-encoding": "gzip"}) as r:
        raw = b"".join(r.iter_raw())
    assert r.headers["content-encoding"] == "gzip" and "accept-encoding" in r.headers["vary"].lower()
    assert int(r.headers["content-length"]) == len(raw)
    plain = client.get(path, headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert gzip.decompress(raw) == plain.content
    if path != "/":
        assert plain.content == (STATIC / path.removeprefix("/static/")).read_bytes()
    assert len(raw) < len(plain.content) / 2


def test_small_answers_are_not_gzipped(client):
    r = client.get("/static/js/missing.js", headers={"accept-encoding": "gzip"})
    assert r.status_code == 404 and "content-encoding" not in r.headers


def test_the_socket_still_answers_through_the_gzip_middleware(client):
    with client.websocket_connect("/api/trace/ws", headers={"accept-encoding": "gzip"}) as ws:
        ws.send_text('{"q": [2, 1], "keys": [[1, 0]], "values": [[1, 1]]}')
        assert ws.receive_json()["status"] == 200


def _tree(root: Path) -> Starlette:
    (root / "js" / "explorer").mkdir(parents=True)
    (root / "js" / "shared").mkdir()
    (root / "index.html").write_text(
        '<!-- modulepreload -->\n<script type="module" src="/static/js/explorer/main.js"></script>\n',
        encoding="utf-8",
    )
    (root / "js" / "explorer" / "main.js").write_text(
        'import { f } from "../shared/f.js";\nf();\n', encoding="utf-8"
    )
    (root / "js" / "shared" / "f.js").write_text("export function f() {}\n", encoding="utf-8")
    assets = Assets(root=root)
    return Starlette(routes=[Route("/", assets.page), Route("/static/{path:path}", assets.file)])


def test_the_version_changes_when_a_file_does(tmp_path):
    with TestClient(_tree(tmp_path)) as c:
        page = c.get("/").text
        assert re.findall(r'href="' + VERSIONED + r'js/([\w./-]+)"', page) == [
            (re.search(VERSIONED, page).group(1), "explorer/main.js"),
            (re.search(VERSIONED, page).group(1), "shared/f.js"),
        ]
        before = re.search(VERSIONED, page).group(1)
        assert c.get(f"/static/v/{before}/js/shared/f.js").headers["cache-control"] == IMMUTABLE
        # An edit (even of a module the entry only imports) is a new version ...
        f = tmp_path / "js" / "shared" / "f.js"
        f.write_text("export function f() { return 1; }\n", encoding="utf-8")
        os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 10**9))
        # ... and the old URL no longer claims to be that file for good, before and after the next page.
        assert c.get(f"/static/v/{before}/js/shared/f.js").headers["cache-control"] == "no-cache"
        after = re.search(VERSIONED, c.get("/").text).group(1)
        assert after != before
        answer = c.get(f"/static/v/{after}/js/shared/f.js")
        assert answer.headers["cache-control"] == IMMUTABLE and answer.text == f.read_text(encoding="utf-8")
        assert c.get(f"/static/v/{before}/js/shared/f.js").headers["cache-control"] == "no-cache"


def served_words(page: str) -> dict:
    block = re.search(r'<script type="application/json" id="attnlab-words">(.*?)</script>', page, re.S)
    assert block, "no words block"
    return json.loads(block.group(1))


def test_the_served_html_says_the_labs_sentences_of_the_worked_example(client):
    """Every answer-dependent sentence index.html shows before its first answer is the lab's,
    from the worked example's own answer: none is a copy in the HTML that could drift."""
    from attnlab.lab.explorer.state import example_answer
    from attnlab.lab.notebook.page import index_page

    page = client.get("/").text
    served = index_page()
    assert "<!-- fill:" not in page
    answer = example_answer()
    labels = answer["explorer"]["display"]["labels"]
    texts = answer["sequence"]["explorer"]["texts"]
    for element, text in [
        ("row-label", answer["sequence"]["explorer"]["heading"]["text"]),
        ("row-explain", texts["row"]["text"]),
        ("explorer-given", texts["given"]["text"]),
        ("q-legend", texts["q_legend"]["text"]),
        ("current-allowed", texts["allowed"]["text"]),
        ("words-example", texts["example"]["text"]),
        ("explorer-eyebrow", labels["eyebrow"]["text"]),
        ("query-caption", labels["caption"]["text"]),
        ("mix-hint", labels["mix_hint"]["text"]),
        ("score-axis-title", labels["score_title"]["text"]),
        ("share-strip-title", labels["share_title"]["text"]),
        ("formula-scale", labels["score_formula"]["text"]),
        ("formula-code", labels["score_code"]["text"]),
        ("formula-scale-2", labels["scale_note"]["text"]),
        ("challenge-goal", answer["explorer"]["challenge"]["goal"]),
        ("held-title", answer["sequence"]["title"]["text"]),
    ]:
        shown = re.search(rf'id="{element}"[^>]*>([^<]*)<', page)
        assert shown and html.unescape(shown.group(1)) == text, element
    for text in served["fills"].values():
        assert html.escape(text, quote=False) in page
    # the worked example's numbers: three sources, so a triangle; the default scale, so / √2
    assert "shaded triangle of the three allowed values" in labels["mix_hint"]["text"]
    assert labels["score_title"]["text"] == "Scaled scores · s = q·k / √2"
    assert served_words(page) == served["words"]


def test_each_page_gets_its_modules_words_and_no_text_can_close_the_block(client):
    from attnlab.lab.page import shared_words
    from attnlab.web.assets import fill_page

    real = client.get("/real-model").text
    assert served_words(real) == shared_words()  # the HTTP module's words, on every page
    assert served_words(client.get("/").text)["http"] == shared_words()["http"]
    page = fill_page(
        "<head></head><p><!-- fill:a --></p>",
        {"words": {"x": "</script><b>"}, "fills": {"a": "1 < 2 & <b>"}},
    )
    assert "</script><b>" not in page and served_words(page) == {"x": "</script><b>"}
    assert "<p>1 &lt; 2 &amp; &lt;b&gt;</p>" in page
    with pytest.raises(KeyError):  # a marker the lab gives no sentence for would show nothing
        fill_page("<head></head><!-- fill:missing -->", {"words": {}, "fills": {}})


class _Shown(HTMLParser):
    """A page's visible text nodes (outside script and style) and its word-carrying attributes."""

    WORDS = ("aria-label", "title", "alt", "placeholder")

    def __init__(self) -> None:
        super().__init__()
        self.hidden = 0
        self.texts: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.hidden += tag in ("script", "style")
        self.texts += [value for name, value in attrs if name in self.WORDS and value]

    def handle_endtag(self, tag):
        self.hidden -= tag in ("script", "style")

    def handle_data(self, data):
        if not self.hidden and data.strip():
            self.texts.append(data.strip())


def shown_texts(page: str) -> list[str]:
    parser = _Shown()
    parser.feed(page)
    return parser.texts


@pytest.mark.parametrize("name", ["index.html", "real-model.html", "circuits.html", "connections.html"])
def test_no_page_file_holds_a_word_only_the_labs_markers_do(name):
    """Every word a page shows comes from the lab at a ``<!-- fill:name -->`` marker; the file itself
    keeps only marks with no letter in them (a step's "1", a "✓", the " · " between two markers)."""
    raw = (STATIC / name).read_text(encoding="utf-8")
    assert re.findall(r"<!-- fill:[a-z0-9_]+ -->", raw)
    shown = shown_texts(re.sub(r"<!-- fill:[a-z0-9_]+ -->", "", raw))
    assert [text for text in shown if any(c.isalpha() for c in text)] == []


def test_every_served_page_has_every_marker_filled_and_its_words_shown(client):
    from attnlab.web.assets import FILLS, PAGES

    for route, name in PAGES.items():
        page = client.get(route).text
        raw = (STATIC / name).read_text(encoding="utf-8")
        assert "<!-- fill:" not in page, route
        fills = FILLS[route]()["fills"]
        for marker in set(re.findall(r"<!-- fill:([a-z0-9_]+) -->", raw)):
            assert html.escape(fills[marker], quote=False) in page, (route, marker)
            if f'="<!-- fill:{marker} -->"' in raw:  # placed in an attribute: no quote can end it early
                assert '"' not in fills[marker], (route, marker)
