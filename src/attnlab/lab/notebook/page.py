"""The notebook's words on the page, and what the server writes into index.html.

:func:`page_words` is the fixed words ``js/notebook`` places (the practice
panel's buttons, the held table's headers, the export's file names and
sentences); :func:`index_page` is everything the server writes into
index.html (``web/assets.py``): the words of every module the page loads
(shared, explorer, notebook) as one JSON data block, and the sentences of
the page's ``<!-- fill:name -->`` markers, taken from the lab's first answers
(the worked example's state, the playback script, the content) and the fixed
prose (``lab.notebook.prose``, ``lab.explorer.page.page_text``).
"""

from __future__ import annotations

from attnlab.lab import content
from attnlab.lab.challenge_set import PANEL_BUTTONS
from attnlab.lab.explorer import page as explorer_page
from attnlab.lab.explorer.state import example_answer
from attnlab.lab.notebook import playback, prose
from attnlab.lab.page import fill_texts, shared_fills, shared_words
from attnlab.lab.said import said

# Each export: its file's name and what the page says once it is saved.
EXPORTS = {
    "json": "attnlab-study.json",
    "markdown": "attnlab-study.md",
    "ipynb": "attnlab-worked-example.ipynb",
    "key-svg": "attnlab-key-space.svg",
    "value-svg": "attnlab-value-space.svg",
    "key-png": "attnlab-key-space.png",
    "value-png": "attnlab-value-space.png",
}


def page_words() -> dict:
    """The notebook's fixed words, by the module that places them."""
    return {
        "sequence": {
            "row_query": "Row (query)",
            "output": "Output o",
            "blocked": "blocked",
            "may_attend": "may attend",
            "in_explorer": "In the explorer",
            "show": "Show in the explorer",
        },
        "practice": {
            "no_response": "No typed answer: the goal is checked on the example as it is now.",
            **PANEL_BUTTONS,
            "load": "Load the A/B/C example",
            "reveal": "Show answer",
            "close": "Close challenge",
            "where": {
                "held": " · opens beside the held sequence",
                "explorer": " · opens beside the explorer",
            },
            "met": " · ✓ met",
            "answer": "Answer:",
            "load_offer": "Load the worked example to try this challenge; your study history stays.",
        },
        "history": {
            "empty": "No checks or help yet in this visit.",
            "checks": "Checks",
            "help": "Help used",
        },
        "playback": {
            "play": prose.playback_text()["playback_play"],
            "pause": "Pause",
            "failed": "The playback could not be loaded from the attnlab server.",
        },
        "export": {
            "files": {kind: {"name": name, "saved": f"Saved {name}."} for kind, name in EXPORTS.items()},
            "failed": "The export failed.",
            "titles": {
                "key": "attnlab key space: q, the keys and q's projections",
                "value": "attnlab value space: the values, the carries and the output o",
            },
            "unreadable": "Import refused: the file could not be read. Nothing changed.",
            "nothing_changed": "Nothing changed.",
        },
    }


def first_sentences() -> dict[str, str]:
    """The notebook's sentences for index.html's markers, from the lab's first answers."""
    script = playback.script_summary()
    description = said(script["description"], duration=script["duration"])
    return {
        **fill_texts(prose.page_text()),
        "held_title": example_answer()["sequence"]["title"]["text"],
        "playback_hint": description["text"],
        "playback_time": playback.time_words(0.0, script["duration"])["text"],
        "notebook_footer": content.content()["footer"],
    }


def index_page() -> dict:
    """What the server writes into index.html: ``words`` (one JSON data block) and ``fills`` (by marker)."""
    return {
        "words": {**shared_words(), **explorer_page.page_words(), **page_words()},
        "fills": {**shared_fills(), **explorer_page.first_sentences(), **first_sentences()},
    }
