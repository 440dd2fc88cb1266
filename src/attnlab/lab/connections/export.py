"""A connection lab exported: a JSON document and a Markdown report of the input, numbers, words and study.

The JSON keeps every number at full precision (the lab's ``data``), the input,
the sentences with their claims and the study with its history; the Markdown
is the page's tables and sentences for a person to read, and the program.
"""

from __future__ import annotations

import json

from attnlab.lab.connections.page import WORDS, lab_page
from attnlab.lab.connections.study import history

FORMAT = "attnlab-connection"
VERSION = 1


def to_json(name: str, given: dict, study: object, measured: dict | None = None) -> str:
    page = lab_page(name, given, "inputs", measured)
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "lab": name,
        "title": page["lab"]["title"],
        "link": page["link"],
        "inputs": page["inputs"],
        "words": page["words"],
        "data": page["data"],
        "study": study,
        "history": history(name, study),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|")


def _table(t: dict) -> list[str]:
    lines = [f"**{t['title']}**", "", "| " + " | ".join(_cell(c) for c in t["columns"]) + " |"]
    lines.append("|" + "---|" * len(t["columns"]))
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in t["rows"]]
    return [*lines, ""]


def to_markdown(name: str, given: dict, study: object, measured: dict | None = None) -> str:
    page = lab_page(name, given, "inputs", measured)
    lines = [f"# {page['lab']['title']}", "", page["lede"], "", f"Link: `{page['link']}`", "", "## Input", ""]
    lines += [f"- {c['label']}: {c['value_text']}" for c in page["controls"]]
    lines += ["", f"## {WORDS['words']}", ""]
    lines += [f"- {s['text']}" for s in page["words"]]
    lines += ["", f"## {WORDS['numbers']}", ""]
    for t in page["numbers"]:
        lines += _table(t)
    lines += [f"## {WORDS['history']}", ""]
    groups = history(name, study)
    if not groups:
        lines += [WORDS["no_history"], ""]
    for g in groups:
        lines += [f"### {g['heading']}", ""]
        lines += [f"- {c['label']}" for c in g.get("checks", [])]  # every check, the tries before a right one
        lines += [f"- {h}" for h in g["help"]]
        lines.append("")
    lines += [f"## {WORDS['python']}", "", "```python", page["python"].rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"
