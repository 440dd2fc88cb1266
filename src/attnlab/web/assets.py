"""Serve the pages and their static files from memory, under versioned URLs.

The whole front end is well under 300 KB, so each file is read once (and
again only when its modification time changes, so an edited file shows on
reload) and answered without a thread hop. A page gets a
``<link rel="modulepreload">`` for every module its entry scripts import,
directly or not (static ``import ... from "./x.js"`` or ``"../folder/x.js"``
only; dynamic imports stay lazy), at the ``<!-- modulepreload -->`` marker, so
the browser fetches them in one wave instead of one wave per level of imports,
and nothing another page uses.

Every ``/static/...`` URL a page names is versioned: ``/static/v/<version>/...``,
where the version hashes the path and content of every static file, so a
module's relative imports stay in the same version. A versioned file is
``Cache-Control: public, max-age=31536000, immutable`` while its version is the
current one and the file is as it was when that version was taken; the pages,
the unversioned URLs and an old version's URLs are ``no-cache`` (revalidated by
ETag). The version is taken again on every page load, so an edited file gets a
new URL on reload. "Why it matters" and
"Questions to think about" (lab/data/content.json) are written in at the
``<!-- why -->`` and ``<!-- questions -->`` markers: they sit above the
explorer, and text that arrived later would shift it under a learner's pointer.

Each page also gets what its lab function (``FILLS``) gives: its modules' fixed
words as one JSON data block before ``</head>`` (``<script type="application/json"
id="attnlab-words">``: a data block, never run, so the CSP allows it), read by
``js/shared/words.js``; and, at each ``<!-- fill:name -->`` marker, that
sentence, escaped: the first answer's words, so nothing the page shows before
its first answer is a copy that can drift from the lab's.
"""

from __future__ import annotations

import hashlib
import html as html_lib
import json
import mimetypes
import posixpath
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from attnlab.lab.circuits.page import circuits_page
from attnlab.lab.connections.page import connections_page
from attnlab.lab.connections.registry import ENTRIES as CONNECTION_LABS
from attnlab.lab.content import intro_html
from attnlab.lab.notebook.page import index_page
from attnlab.lab.realmodel.page import real_model_page

TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
}
PRELOAD_MARKER = "<!-- modulepreload -->"
INTRO_MARKERS = {"why": "<!-- why -->", "questions": "<!-- questions -->"}
PAGES = {"/": "index.html", "/real-model": "real-model.html", "/circuits": "circuits.html"}  # route -> file
PAGES |= {lab.route: "connections.html" for lab in CONNECTION_LABS}  # one page for every connection lab
# route -> {"words", "fills"} from the lab
FILLS = {"/": index_page, "/real-model": real_model_page, "/circuits": circuits_page}
FILLS |= {lab.route: partial(connections_page, lab.name) for lab in CONNECTION_LABS}
WORDS_ID = "attnlab-words"
_FILL = re.compile(r"<!-- fill:([a-z][a-z0-9_]*) -->")
IMMUTABLE = "public, max-age=31536000, immutable"
_ENTRY = re.compile(r'<script type="module" src="/static/js/([\w./-]+\.js)"')
# A static import or re-export of a relative module: "./x.js", "../folder/x.js".
_STATIC_IMPORT = re.compile(r'^\s*(?:import|export)\b[^;(]*?["\'](\.\.?/[\w./-]+\.js)["\']', re.M)
# A page's references to its static files (stylesheets, scripts, preloads).
_STATIC_REF = re.compile(r'\b(src|href)="/static/(?!v/)')


def resolve_import(importer: str, specifier: str) -> str | None:
    """The module ``specifier`` names from module ``importer`` (paths under the js root); None outside it."""
    name = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
    return None if name.startswith("../") or name == ".." else name


def module_closure(html: str, js_root: Path) -> list[str]:
    """Return the modules the page's entry scripts import, directly or not.

    In load order: each entry's modules (breadth first) before the next entry's,
    entries in document order, so the first entry's graph (the explorer) arrives first.
    """
    seen: dict[str, None] = {}  # insertion-ordered set
    for entry in _ENTRY.findall(html):
        pending: list[str | None] = [resolve_import("", entry)]
        while pending:
            name = pending.pop(0)
            if name is None or name in seen or not (js_root / name).is_file():
                continue
            seen[name] = None
            source = (js_root / name).read_text(encoding="utf-8")
            pending.extend(resolve_import(name, spec) for spec in _STATIC_IMPORT.findall(source))
    return list(seen)


def words_block(words: dict) -> str:
    """The page's words as a JSON data block; ``<`` is escaped so no text can close the element."""
    data = json.dumps(words, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return f'<script type="application/json" id="{WORDS_ID}">{data}</script>'


def fill_page(page: str, served: dict) -> str:
    """Write ``served["words"]`` in before ``</head>`` and each ``<!-- fill:name -->`` as its sentence.

    A marker the lab gives no sentence for is an error (``KeyError``): the page would show nothing.
    """
    fills = served["fills"]
    page = _FILL.sub(lambda m: html_lib.escape(fills[m.group(1)], quote=False), page)
    return page.replace("</head>", words_block(served["words"]) + "\n</head>", 1)


@dataclass
class _Cached:
    mtime_ns: int
    body: bytes
    etag: str


@dataclass(frozen=True)
class _Version:
    name: str  # 16 hex digits of a hash of every file's path and content
    etags: dict[str, str]  # each file's ETag (by path under the root) when the version was taken


class Assets:
    """The files under ``root``, cached in memory, served at ``/static/...`` and ``/static/v/<version>/...``.

    A page (``PAGES``) names each file at ``/static/v/<version>/``; see :meth:`version`.
    """

    def __init__(self, *, root: Path) -> None:
        self.root = root.resolve()
        self._cache: dict[Path, _Cached] = {}
        self._version: _Version | None = None

    def _load(self, path: Path) -> _Cached:
        mtime = path.stat().st_mtime_ns
        cached = self._cache.get(path)
        if cached is None or cached.mtime_ns != mtime:
            body = path.read_bytes()
            etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
            cached = _Cached(mtime_ns=mtime, body=body, etag=etag)
            self._cache[path] = cached
        return cached

    def version(self) -> str:
        """Take the static files' version now: 16 hex digits of a hash of each file's path and content."""
        return self._take_version().name

    def _take_version(self) -> _Version:
        etags = {
            path.relative_to(self.root).as_posix(): self._load(path).etag
            for path in sorted(self.root.rglob("*"))
            if path.is_file()
        }
        digest = hashlib.sha256("".join(f"{name}\0{etag}\n" for name, etag in etags.items()).encode("utf-8"))
        self._version = _Version(name=digest.hexdigest()[:16], etags=etags)
        return self._version

    def _immutable(self, version: str, relative: str, etag: str) -> bool:
        """Whether ``/static/v/<version>/<relative>`` names this content for good."""
        current = self._version or self._take_version()
        return version == current.name and current.etags.get(relative) == etag

    def _respond(
        self, request: Request, body: bytes, etag: str, media_type: str, cache: str = "no-cache"
    ) -> Response:
        headers = {"etag": etag, "cache-control": cache}
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=media_type, headers=headers)

    def file(self, request: Request) -> Response:
        """Answer ``GET /static/{path}``: 404 outside the folder, for a missing file or an impossible name.

        ``v/<version>/<file>`` is ``<file>``, cached for good while ``version`` is the current one.
        """
        relative = request.path_params["path"]
        version = None
        if relative.startswith("v/"):
            version, _, relative = relative[2:].partition("/")
        try:
            path = (self.root / relative).resolve()
            cached = self._load(path) if path.is_relative_to(self.root) and path.is_file() else None
        except (OSError, ValueError):  # a NUL byte (ValueError), a name over NAME_MAX (ENAMETOOLONG), ...
            cached = None
        if cached is None:
            return PlainTextResponse("Not Found", status_code=404)
        media_type = TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "text/plain"
        relative = path.relative_to(self.root).as_posix()
        immutable = version is not None and self._immutable(version, relative, cached.etag)
        cache = IMMUTABLE if immutable else "no-cache"
        return self._respond(request, cached.body, cached.etag, media_type, cache)

    def page(self, request: Request) -> Response:
        """Answer a page in ``PAGES`` (``GET /``, ``GET /real-model``): its file with versioned static URLs.

        A modulepreload link per module its entry scripts import (see :func:`module_closure`),
        and on ``/`` the intro.
        """
        cached = self._load(self.root / PAGES[request.url.path])
        page = cached.body.decode("utf-8")
        modules = module_closure(page, self.root / "js")
        links = "\n".join(f'<link rel="modulepreload" href="/static/js/{name}">' for name in modules)
        page = page.replace(PRELOAD_MARKER, links, 1)
        page = _STATIC_REF.sub(rf'\1="/static/v/{self.version()}/', page)
        for name, fragment in intro_html().items():
            page = page.replace(INTRO_MARKERS[name], fragment, 1)
        page = fill_page(page, FILLS[request.url.path]())
        html = page.encode("utf-8")
        etag = '"' + hashlib.sha256(html).hexdigest()[:20] + '"'
        return self._respond(request, html, etag, TYPES[".html"])
