"""The class's pages, rendered like the lab's own (``web/assets.py``): versioned static URLs,
modulepreload links for their modules, and the lab's words at the fill markers.

They are not in ``assets.PAGES``: what they show depends on the running class (its
name, its join address), and the teacher's page is answered only to the teacher.
Also here: the class bar added to a learner's lab pages (:func:`with_bar`).
"""

from __future__ import annotations

import hashlib
import re

from starlette.requests import Request
from starlette.responses import Response

from attnlab.web.assets import PRELOAD_MARKER, TYPES, Assets, fill_page, module_closure

_STATIC_REF = re.compile(r'\b(src|href)="/static/(?!v/)')
JOIN = "classroom-join.html"
TEACHER = "classroom-teacher.html"
NOTICE = "classroom-notice.html"  # no class here, or not the teacher: a page that says so
BAR_MODULE = "js/classroom/bar.js"
BAR_STYLE = "css/classroom.css"


def render(assets: Assets, request: Request, name: str, served: dict, status: int = 200) -> Response:
    """Page ``name`` with the lab's words ``served`` (``{"words", "fills"}``), never cached."""
    page = (assets.root / name).read_text(encoding="utf-8")
    modules = module_closure(page, assets.root / "js")
    links = "\n".join(f'<link rel="modulepreload" href="/static/js/{m}">' for m in modules)
    page = page.replace(PRELOAD_MARKER, links, 1)
    page = _STATIC_REF.sub(rf'\1="/static/v/{assets.version()}/', page)
    body = fill_page(page, served).encode("utf-8")
    headers = {"cache-control": "no-store"}
    return Response(body, status_code=status, media_type=TYPES[".html"], headers=headers)


def with_bar(html: bytes, version: str) -> tuple[bytes, str]:
    """A lab page with the class bar's style and module before ``</head>``; returns it and its ETag."""
    tags = (
        f'<link rel="stylesheet" href="/static/v/{version}/{BAR_STYLE}">'
        f'<script type="module" src="/static/v/{version}/{BAR_MODULE}"></script>\n'
    ).encode()
    body = html.replace(b"</head>", tags + b"</head>", 1)
    return body, '"' + hashlib.sha256(body).hexdigest()[:20] + '-c"'
