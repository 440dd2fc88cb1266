"""``widget.to_html(path)``: a standalone HTML file of one view with its numbers frozen.

ipywidgets' ``embed_minimal_html`` loads its widget manager from a CDN, so
attnlab writes its own snapshot: the widget's current state (JSON, with the
page modules' source text in ``_modules``) and its CSS are inlined, and a
small bootstrap module loads the same entry module (``widgets/entry.js``)
with a frozen model (``get`` reads the saved state; ``set`` and
``save_changes`` do nothing) that says it is one (``_snapshot``: a view draws no
handle to drag and says it is a snapshot). The page's Content-Security-Policy allows only
that inline script and style (by hash), Blob modules and data: images, and
no connection at all, so the file works offline and nothing leaves the machine.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from pathlib import Path

BOOT = """\
const data = JSON.parse(document.getElementById("attnlab-state").textContent);
const url = URL.createObjectURL(new Blob([data.entry], { type: "text/javascript" }));
const widget = (await import(url)).default;
const model = {
  get: (name) => data.state[name],
  set() {},
  save_changes() {},
  on() {},
  off() {},
  send() {},
};
await widget.render({ model, el: document.getElementById("attnlab-snapshot") });
document.documentElement.dataset.attnlabReady = "1";
"""


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def _json_in_html(data: dict) -> str:
    """JSON safe inside <script type="application/json"> (no "</script>", no "<!--")."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def snapshot_html(widget, title: str) -> str:
    """The standalone page for ``widget`` (an ``attnlab.widgets.base.LabWidget``)."""
    css = widget._css
    data = {"entry": widget._esm, "state": {**widget.snapshot_state(), "_snapshot": True}}
    csp = "; ".join(
        [
            "default-src 'none'",
            f"script-src {_hash(BOOT)} blob:",
            f"style-src {_hash(css)}",
            "img-src data:",
            "connect-src 'none'",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(csp, quote=False)}">\n'
        f"<title>{html.escape(title)}</title>\n<style>{css}</style>\n</head>\n<body>\n"
        '<main class="attnlab-widget">\n'
        f"<h1>{html.escape(title)}</h1>\n"
        '<p class="note">A snapshot from attnlab: the numbers are frozen as they were in the notebook.</p>\n'
        '<div id="attnlab-snapshot"></div>\n</main>\n'
        f'<script type="application/json" id="attnlab-state">{_json_in_html(data)}</script>\n'
        f'<script type="module">{BOOT}</script>\n</body>\n</html>\n'
    )


def write_snapshot(widget, path: Path) -> Path:
    """Write :func:`snapshot_html` to ``path`` (UTF-8) and return the path."""
    title = getattr(widget, "TITLE", "attnlab")
    path.write_text(snapshot_html(widget, title), encoding="utf-8")
    return path
