"""The lab page preloads exactly the modules its entry scripts import, and no other page's."""

import re
from pathlib import Path

from fastapi.testclient import TestClient

from attnlab.web.app import create_app

JS = Path(__file__).resolve().parents[2] / "src" / "attnlab" / "web" / "static" / "js"


def test_preloads_are_the_import_closure_of_the_entry_scripts():
    with TestClient(create_app()) as client:
        page = client.get("/").text
    preloaded = set(re.findall(r'<link rel="modulepreload" href="/static/js/([\w.-]+)">', page))
    entries = set(re.findall(r'<script type="module" src="/static/js/([\w.-]+)"', page))
    assert entries <= preloaded
    for name in preloaded:
        source = (JS / name).read_text(encoding="utf-8")
        imported = re.findall(r'from\s+["\']\./([\w.-]+\.js)["\']', source)
        assert set(imported) <= preloaded, (name, set(imported) - preloaded)
    assert not {n for n in preloaded if n.startswith("realmodel")}
    assert {"main.js", "state.js", "notebook.js"} <= preloaded
