"""The words every page places the same way, served once inside the page.

``web/assets.py`` writes a page's words into it as a JSON data block
(``<script type="application/json" id="attnlab-words">``), so a module reads
them at once and never writes a sentence of its own; a feature's page adds
its own words (``lab.explorer.page``, ``lab.notebook.page``). These are the
HTTP module's (``js/shared/http.js``): what the page says when the server
answers an error without naming a field (a 404, a 500), which no request of
the page's own should meet.
"""

from __future__ import annotations


def shared_words() -> dict:
    """The words of the modules every page loads (``js/shared``)."""
    return {
        "http": {
            "refused": "The server refused this request without saying why.",
            "failed": "The server failed while answering this request; try again.",
        },
    }


def real_model_page() -> dict:
    """What the server writes into the Real model page: the shared words (its own come with
    ``GET /api/models``)."""
    return {"words": shared_words(), "fills": {}}
