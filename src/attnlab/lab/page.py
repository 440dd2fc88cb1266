"""The words every page places the same way, served once inside the page.

``web/assets.py`` writes a page's words into it as a JSON data block
(``<script type="application/json" id="attnlab-words">``), so a module reads
them at once and never writes a sentence of its own; a feature's page adds
its own words (``lab.explorer.page``, ``lab.notebook.page``). These are the
HTTP module's (``js/shared/http.js``): what the page says when the server
answers an error without naming a field (a 404, a 500), which no request of
the page's own should meet. :func:`shared_fills` is what every page's markup
shows the same way (the brand in its title and header).
"""

from __future__ import annotations

from attnlab.lab.glossary import page_glossary


def shared_words() -> dict:
    """The words of the modules every page loads (``js/shared``): the HTTP module's, and the glossary
    whose terms ``js/shared/glossary.js`` defines where they first appear."""
    return {
        "glossary": page_glossary(),
        "http": {
            "refused": "The server refused this request without saying why.",
            "failed": "The server failed while answering this request; try again.",
        },
    }


def shared_fills() -> dict[str, str]:
    """The words every page shows the same way, at its ``<!-- fill:name -->`` markers: the brand."""
    return {"brand": "attnlab"}


def fill_texts(fixed: dict[str, str | dict]) -> dict[str, str]:
    """Each marker's words: a plain string as it is, a :func:`~attnlab.lab.said.said`'s text."""
    return {name: words if isinstance(words, str) else words["text"] for name, words in fixed.items()}


# The command line's own words: its description and `attnlab serve`'s (the lab as a whole)
TERMINAL = {
    "description": "An exact, explorable lab for scaled dot-product attention.",
    "serve": "serve the lab on 127.0.0.1 and open the browser",
    "--host": "interface to bind (default 127.0.0.1)",
    "--port": "port (default 8000; a free one if taken)",
    "--allow-host": "also answer requests for NAME (repeatable; to serve on a LAN on purpose)",
    "--no-browser": "do not open a browser",
}


def not_a_port(shown: str) -> str:
    """``--port``'s refusal of a value, ``shown`` as the terminal writes it back."""
    return f"{shown} is not a port number (0 to 65535)"
