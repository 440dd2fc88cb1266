"""The app's page, static files, headers and OpenAPI document."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient

from attnlab.web.app import CSP, STATIC_DIR, create_app, field_path


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def test_page_is_served_with_strict_headers(client):
    r = client.get("/")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    csp = r.headers["content-security-policy"]
    assert csp == CSP
    assert "default-src 'self'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["referrer-policy"] == "no-referrer"


def test_api_answers_carry_the_headers_too(client):
    r = client.get("/api/example")
    assert r.headers["content-security-policy"] == CSP


def test_every_static_asset_is_served_and_local(client):
    files = [p for p in STATIC_DIR.rglob("*") if p.is_file()]
    assert any(p.suffix == ".js" for p in files) and any(p.suffix == ".css" for p in files)
    for path in files:
        rel = path.relative_to(STATIC_DIR).as_posix()
        r = client.get(f"/static/{rel}")
        assert r.status_code == 200, rel
        text = path.read_text(encoding="utf-8")
        # No asset points anywhere but this server.
        # (XML namespace names such as http://www.w3.org/2000/svg are names, not requests.)
        assert not re.search(r"https?://(?!www\.w3\.org/)", text), rel


def test_page_has_no_inline_script_or_style():
    html = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    assert "<style" not in html
    assert not re.search(r"\sstyle=", html)
    assert not re.search(r"\son[a-z]+=", html)  # no inline event handlers
    for js in (STATIC_DIR / "js").rglob("*.js"):
        source = js.read_text(encoding="utf-8")
        assert ".innerHTML" not in source and "eval(" not in source, js.name
        assert 'setAttribute("style"' not in source, js.name


def test_js_modules_stay_small():
    for js in (STATIC_DIR / "js").rglob("*.js"):
        assert len(js.read_text(encoding="utf-8").splitlines()) <= 300, js.name


def test_openapi_documents_the_api(client):
    doc = client.get("/api/openapi.json").json()
    trace = doc["paths"]["/api/trace"]["post"]
    assert set(trace["responses"]) == {"200", "413", "422", "429"}  # 429: past its share (web.fairness)
    assert "Retry-After" in trace["responses"]["429"]["headers"]
    assert doc["components"]["schemas"]["LabState"]["properties"]["q"]["maxItems"] == 64
    # The CDN-backed docs pages are off: nothing may load from elsewhere.
    assert client.get("/docs").status_code == 404
    assert client.get("/redoc").status_code == 404


def test_extra_router_is_one_line():
    app = create_app()
    extra = APIRouter(prefix="/api/extra")

    @extra.get("/ping")
    def ping() -> dict:
        return {"pong": True}

    app.include_router(extra)
    with TestClient(app) as c:
        r = c.get("/api/extra/ping")
    assert r.json() == {"pong": True}
    assert r.headers["content-security-policy"] == CSP


@pytest.mark.parametrize(
    ("loc", "text"),
    [
        (("body", "q", 0), "q[0]"),
        (("body", "values", 1, 0), "values[1][0]"),
        (("body",), "body"),
        (("body", "labels"), "labels"),
    ],
)
def test_field_path(loc, text):
    assert field_path(loc) == text


def test_package_data_includes_the_static_files():
    # pyproject's package-data glob must cover the page, or an installed lab is blank.
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"web/static/**/*"' in pyproject


def test_the_browser_does_not_do_the_maths():
    # Softmax, square roots and the like belong to the engine; the page only draws.
    # (Math.sin/cos for the pie's angles and Math.round for pointer positions are drawing.)
    forbidden = re.compile(r"Math\.(exp|sqrt|log|log1p|expm1|hypot|pow)\b|\w\s*\*\*\s*\w")
    # Drawing-only uses, each named: pixel lengths (arrowheads sized to their arrow,
    # leader lines) and square-root visual scales (ink, dot radius). None of them
    # is a number the lab shows.
    drawing = {
        "shared/plot.js": ["Math.hypot(x2 - x1, y2 - y1)", "Math.hypot(dx, dy)"],
        "realmodel/ink.js": ["Math.sqrt(clamped)"],
        "realmodel/neuron.js": ["Math.sqrt(k.share)"],
    }
    for js in (STATIC_DIR / "js").rglob("*.js"):
        source = js.read_text(encoding="utf-8")
        for use in drawing.get(js.relative_to(STATIC_DIR / "js").as_posix(), []):
            assert use in source, (js.name, use)  # keep the list honest
            source = source.replace(use, "")
        assert not forbidden.search(source), js.name


def test_why_and_questions_come_before_the_demos_written_by_the_server(client):
    """As on the reference page: "Why it matters", then "Questions", then the explorer."""
    from attnlab.lab.content import raw

    page = client.get("/").text
    data = raw()
    why = page.index('<h2 id="why-title">Why It Matters for Modern Models</h2>')
    questions = page.index('<h2 id="questions-title">Questions to Think About</h2>')
    explorer = page.index('<section id="explorer"')
    assert why < questions < explorer
    assert "<!-- why -->" not in page and "<!-- questions -->" not in page
    for paragraph in data["why"]["paragraphs"]:
        assert f"<p>{html.escape(paragraph, quote=False)}</p>" in page[why:questions]
    for item in data["questions"]["items"]:
        assert f"<li>{html.escape(item, quote=False)}</li>" in page[questions:explorer]


def test_the_pages_own_explorer_sentences_are_the_unmasked_rows(client):
    """index.html starts with explorer_texts for the starting (unmasked) row; JS swaps them later."""
    from attnlab.lab.explorer.sequence import STARTING
    from attnlab.lab.explorer.texts import explorer_texts

    page = client.get("/").text
    texts = explorer_texts(STARTING)
    for element_id, key in (
        ("row-explain", "row"),
        ("explorer-given", "given"),
        ("q-legend", "q_legend"),
        ("current-allowed", "allowed"),
        ("words-example", "example"),
    ):
        assert re.search(rf'id="{element_id}"[^>]*>{re.escape(texts[key]["text"])}<', page), key


def _get_paths(app) -> list[str]:
    """Every GET route that takes no path parameter: the API's (its OpenAPI paths) and the pages."""
    from attnlab.web.assets import PAGES

    api = [path for path, ops in app.openapi()["paths"].items() if "get" in ops and "{" not in path]
    return sorted({*api, *PAGES})


@pytest.mark.models  # every GET route, /api/models/about (the shipped models' files) among them
def test_head_answers_wherever_get_does_with_its_headers_and_no_body():
    # Before: pages and static files answered HEAD with 405.
    app = create_app()
    paths = [*_get_paths(app), "/static/css/lab.css", "/static/js/shared/http.js", "/no-such-page"]
    with TestClient(app) as c:  # a page and a static file: the same bytes each time, the same length said
        for path in ("/", "/static/css/lab.css"):
            assert c.head(path).headers["content-length"] == c.get(path).headers["content-length"]
    assert {"/", "/real-model", "/api/example", "/api/limits"} <= set(paths)
    with TestClient(app) as c:
        for path in paths:
            got, head = c.get(path), c.head(path)
            assert head.status_code == got.status_code != 405, path
            assert head.content == b"", path
            for name in ("content-type", "content-security-policy", "cache-control"):
                assert head.headers.get(name) == got.headers.get(name), (path, name)
            assert ("content-length" in head.headers) == ("content-length" in got.headers), path


def test_a_real_server_answers_head_and_keeps_the_connection():
    import http.client

    from attnlab.web.server import serving

    with serving(create_app()) as (_, port):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for path in ("/", "/static/css/lab.css", "/api/example", "/"):  # one keep-alive connection
            conn.request("HEAD", path)
            r = conn.getresponse()
            assert (r.status, r.read()) == (200, b""), path
            assert int(r.getheader("content-length")) > 0
        conn.close()
