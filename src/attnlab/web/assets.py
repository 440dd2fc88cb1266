"""Serve the page and its static files from memory.

The whole front end is well under 200 KB, so each file is read once (and
again only when its modification time changes, so an edited file shows on
reload) and answered without a thread hop. The page gets a
``<link rel="modulepreload">`` for every module its entry scripts import,
directly or not (static ``import ... from "./x.js"`` only; dynamic imports stay
lazy), at the ``<!-- modulepreload -->`` marker, so the browser fetches them in
one wave instead of one wave per level of imports, and nothing another page uses. "Why it matters" and
"Questions to think about" (lab/data/content.json) are written in at the
``<!-- why -->`` and ``<!-- questions -->`` markers: they sit above the
explorer, and text that arrived later would shift it under a learner's pointer.
"""

from __future__ import annotations

import hashlib
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from attnlab.lab.content import intro_html

TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
}
PRELOAD_MARKER = "<!-- modulepreload -->"
INTRO_MARKERS = {"why": "<!-- why -->", "questions": "<!-- questions -->"}
_ENTRY = re.compile(r'<script type="module" src="/static/js/([\w.-]+\.js)"')
_STATIC_IMPORT = re.compile(r'^\s*(?:import|export)\b[^;(]*?["\']\./([\w.-]+\.js)["\']', re.M)


def module_closure(html: str, js_root: Path) -> list[str]:
    """Return the modules the page's entry scripts import, directly or not.

    In load order: each entry's modules (breadth first) before the next entry's,
    entries in document order, so the first entry's graph (the explorer) arrives first.
    """
    seen: dict[str, None] = {}  # insertion-ordered set
    for entry in _ENTRY.findall(html):
        pending = [entry]
        while pending:
            name = pending.pop(0)
            if name in seen or not (js_root / name).is_file():
                continue
            seen[name] = None
            pending.extend(_STATIC_IMPORT.findall((js_root / name).read_text(encoding="utf-8")))
    return list(seen)


@dataclass
class _Cached:
    mtime_ns: int
    body: bytes
    etag: str


class Assets:
    """The files under ``root``, cached in memory, served at ``/static/...``."""

    def __init__(self, *, root: Path) -> None:
        self.root = root.resolve()
        self._cache: dict[Path, _Cached] = {}

    def _load(self, path: Path) -> _Cached:
        mtime = path.stat().st_mtime_ns
        cached = self._cache.get(path)
        if cached is None or cached.mtime_ns != mtime:
            body = path.read_bytes()
            etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
            cached = _Cached(mtime_ns=mtime, body=body, etag=etag)
            self._cache[path] = cached
        return cached

    def _respond(self, request: Request, body: bytes, etag: str, media_type: str) -> Response:
        headers = {"etag": etag, "cache-control": "no-cache"}
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=media_type, headers=headers)

    def file(self, request: Request) -> Response:
        """Answer ``GET /static/{path}``: 404 outside the folder, for a missing file or an impossible name."""
        relative = request.path_params["path"]
        try:
            path = (self.root / relative).resolve()
            cached = self._load(path) if path.is_relative_to(self.root) and path.is_file() else None
        except (OSError, ValueError):  # a NUL byte (ValueError), a name over NAME_MAX (ENAMETOOLONG), ...
            cached = None
        if cached is None:
            return PlainTextResponse("Not Found", status_code=404)
        media_type = TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "text/plain"
        return self._respond(request, cached.body, cached.etag, media_type)

    def page(self, request: Request) -> Response:
        """Answer ``GET /``: index.html with a modulepreload link per module and the intro."""
        cached = self._load(self.root / "index.html")
        page = cached.body.decode("utf-8")
        modules = module_closure(page, self.root / "js")
        links = "\n".join(f'<link rel="modulepreload" href="/static/js/{name}">' for name in modules)
        page = page.replace(PRELOAD_MARKER, links, 1)
        for name, fragment in intro_html().items():
            page = page.replace(INTRO_MARKERS[name], fragment, 1)
        html = page.encode("utf-8")
        etag = '"' + hashlib.sha256(html).hexdigest()[:20] + '"'
        return self._respond(request, html, etag, TYPES[".html"])
