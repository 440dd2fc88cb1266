"""A connection lab's page answer: everything the page draws for one lab and one input, in one dict.

``lab_page(name, given, where)`` reads the input (``controls.read``; ``where``
is ``"query"`` for a link's ``?n=64``, ``"inputs"`` for a request body's object),
runs the lab's ``answer`` and ``program``, and adds what every lab's page
shows the same way: the lab's title, lede and the connections it opens from,
its controls with their values, the shareable link, the practice and the
page's own words (:data:`WORDS`: buttons, headings, "Back to Connections").
"""

from __future__ import annotations

from attnlab.lab.challenge_set import PANEL_BUTTONS
from attnlab.lab.connections import registry
from attnlab.lab.connections.controls import link, read, views
from attnlab.lab.connections.live import live
from attnlab.lab.page import shared_fills, shared_words
from attnlab.lab.said import said

BACK = "/#connections"  # the main page's Connections list

WORDS = {
    "back": "← Back to Connections",
    "controls": "Your input",
    "pictures": "What it shows",
    "words": "What the numbers say",
    "numbers": "Show every number",
    "python": "Read the same calculation in Python",
    "python_note": "The program rebuilds the inputs and prints every number of this lab, one name = value "
    "line each.",
    "copy": "Copy the program",
    "download": "Download the program",
    "copied": "Copied the program to the clipboard.",
    "selected": "The clipboard is not available here; the program is selected, press Ctrl+C.",
    "practice": "Practice",
    **PANEL_BUTTONS,
    "reveal": "Show the answer",
    "answer": "Answer (recorded as help):",
    "no_response": "No typed answer: the goal is checked on the inputs as you have set them above.",
    "history": "Study history for this visit",
    "no_history": "No help used and no attempts yet.",
    "history_checks": "Checks",
    "history_help": "Help used",
    "export": "Export",
    "export_json": "Download JSON",
    "export_markdown": "Download Markdown",
    "link": "Link to this lab with these inputs",
    "skip": "Skip to the controls",
    "offline": "The lab server cannot be reached; the page keeps your inputs. Try again when it is back.",
}


FILLED = (
    "back",
    "skip",
    "controls",
    "pictures",
    "words",
    "numbers",
    "python",
    "python_note",
    "copy",
    "download",
    "practice",
    "history",
    "export",
    "export_json",
    "export_markdown",
    "link",
)


def opens_from(entry: registry.Entry) -> dict:
    """The sentence naming the main page's connections that open this lab."""
    names = list(entry.opens_from)
    quoted = [f"“{name}”" for name in names]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
    plural = "connection" if len(names) == 1 else "connections"
    return said(f"Opened from the main page's {plural} {listed}.", connections=names)


def connections_page(name: str) -> dict:
    """What the server writes into lab ``name``'s page (``web/assets.py``): the words its modules
    place (``connections``, beside the shared modules') and the page's fixed sentences (``fills``)."""
    entry = registry.entry(name)
    fills = shared_fills() | {key: WORDS[key] for key in FILLED}
    fills |= {"title": entry.title, "lede": registry.lab(name).lede, "from": opens_from(entry)["text"]}
    return {"words": shared_words() | {"connections": WORDS | {"back_href": BACK}}, "fills": fills}


def practice(name: str) -> dict:
    data = registry.lab(name).challenges
    content = data.data()
    return {"title": content["title"], "note": content["note"], "challenges": data.listed()}


def files(name: str) -> dict:
    """The files the page downloads for lab ``name``: each one's name and the line that says it was saved."""
    names = {
        "program": f"attnlab_{name}.py",
        "json": f"attnlab-{name}.json",
        "markdown": f"attnlab-{name}.md",
    }
    return {kind: {"name": file, "done": f"Downloaded {file}."} for kind, file in names.items()}


def lab_page(name: str, given: dict, where: str = "query", measured: dict | None = None) -> dict:
    """Return what the page draws for lab ``name`` on input ``given`` (see the module docstring).

    ``measured``: a lab's model numbers by run (``live.measured``), for a lab with a model part;
    ``live`` then says whether they are all in (the page asks again while one is waiting).
    """
    entry = registry.entry(name)
    lab = registry.lab(name)
    values = read(lab.controls, given, where)
    parts = lab.answer_for(values, measured)
    return {
        "lab": {
            "name": entry.name,
            "title": entry.title,
            "route": entry.route,
            "opens_from": opens_from(entry),
        },
        "lede": lab.lede,
        "controls": views(lab.controls, values),
        "inputs": values,
        "link": link(entry.route, lab.controls, values),
        "pictures": parts["pictures"],
        "words": parts["words"],
        "numbers": parts["numbers"],
        "data": parts["data"],
        "python": lab.program_for(values, measured),
        "live": None if lab.ask is None else live(measured or {}, lab.ask(values)),
        "files": files(entry.name),
        "practice": practice(name),
    }
