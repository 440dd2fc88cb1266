"""The notebook's words as data: why it matters, questions, core math, papers, connections.

Everything is read from ``lab/data/content.json``. LaTeX is rendered to
MathML on the server with ``latex2mathml`` (no JavaScript maths library): a
display block becomes ``<math display="block">``, and ``$...$`` inside prose
becomes inline MathML. Prose is HTML-escaped; each ``<math>`` carries its
LaTeX source in ``alttext`` for screen readers.
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from importlib import resources

from attnlab.lab.connections import registry
from attnlab.lab.explorer.examples import WORKED_SEQUENCE
from attnlab.lab.said import said

_INLINE = re.compile(r"\$([^$]+)\$")


def mathml(latex: str, *, display: bool) -> str:
    """Return MathML for ``latex`` with its source as ``alttext``."""
    # Imported on first use (the content is rendered once, then cached), so the
    # server does not load the converter's symbol tables at start-up.
    from latex2mathml.converter import convert

    out = convert(latex.strip(), display="block" if display else "inline")
    alt = html.escape(latex.strip(), quote=True)
    return out.replace("<math ", f'<math alttext="{alt}" ', 1)


def prose(text: str) -> str:
    """Return ``text`` as escaped HTML with each ``$...$`` rendered as inline MathML."""
    parts, last = [], 0
    for m in _INLINE.finditer(text):
        parts.append(html.escape(text[last : m.start()], quote=False))
        parts.append(mathml(m.group(1), display=False))
        last = m.end()
    parts.append(html.escape(text[last:], quote=False))
    return "".join(parts)


@cache
def raw() -> dict:
    """Return the content file as data (LaTeX unrendered)."""
    text = resources.files("attnlab.lab").joinpath("data/content.json").read_text("utf-8")
    return json.loads(text)


@cache
def intro_html() -> dict[str, str]:
    """Return "Why it matters" and "Questions to think about" as escaped HTML fragments.

    Keys ``why`` and ``questions``: each a heading (``<h2 id="why-title">`` /
    ``<h2 id="questions-title">``) and its paragraphs or list. The page puts
    them above the explorer, as the reference page does; the server writes
    them into the page itself so nothing above the explorer moves once it is
    drawn (a drag never lands on a plot that has just shifted).
    """
    data = raw()
    why = data["why"]
    questions = data["questions"]
    why_html = f'<h2 id="why-title">{html.escape(why["heading"], quote=False)}</h2>' + "".join(
        f"<p>{prose(p)}</p>" for p in why["paragraphs"]
    )
    items = "".join(f"<li>{prose(q)}</li>" for q in questions["items"])
    questions_html = (
        f'<h2 id="questions-title">{html.escape(questions["heading"], quote=False)}</h2><ul>{items}</ul>'
    )
    return {"why": why_html, "questions": questions_html}


@cache
def content() -> dict:
    """Return the content ready to draw: math blocks carry ``html`` (MathML or prose).

    Every line the page places is here: a paper's ``byline`` ("Vaswani et al. ·
    2017 · NeurIPS") and ``link_label`` (its link's name for a screen reader),
    the connections' ``count_heading`` (with the count as its claim) and each
    connection's ``heading`` ("Position encoding:") and ``relation_sentence``.
    """
    data = json.loads(json.dumps(raw()))  # a deep copy the cache can hand out
    for block in data["math"]["blocks"]:
        if block["kind"] == "display":
            block["html"] = mathml(block["latex"], display=True)
        elif block["kind"] == "text":
            block["html"] = prose(block["text"])
        else:
            block["html"] = html.escape(block["text"], quote=False)
    for paper in data["papers"]["items"]:
        paper["byline"] = f"{paper['authors']} · {paper['year']} · {paper['venue']}"
        paper["link_label"] = f"{paper['link'].removesuffix(' →')}: {paper['title']}"
    connections = data["connections"]
    opens = {title: e for e in registry.ENTRIES for title in e.opens_from}
    total = sum(len(g["items"]) for g in connections["groups"])
    connections["count_heading"] = said(f"Other connections ({total})", count=total)
    for group in connections["groups"]:
        for item in group["items"]:
            item["heading"] = f"{item['title']}:"
            item["relation_sentence"] = f"{item['relation']}."
            lab = opens.get(item["title"])  # the lab this connection opens (lab/connections/registry.py)
            item["open"] = {"text": lab.open_text, "href": lab.route} if lab else None
    data["in_attnlab"] = "In attnlab:"
    data["footer"] = data["footer"].format(example=WORKED_SEQUENCE.id)
    return data
