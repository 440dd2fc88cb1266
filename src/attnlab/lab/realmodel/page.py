"""The Real model view's fixed words and templates, and the names of one trace's layers, heads and KV groups.

:func:`page_words` is served once (``GET /api/models``, ``words``): sentences the
page shows as they are, and templates whose ``{slot}`` the page fills with what it
already holds (a number it counted, a string the server sent); :data:`SLOTS` names
each template's slots, and a template has no other braces. The page never writes
a word itself.

:func:`trace_names` is part of a finished trace's answer: every layer's and head's
name for the pickers and the thumbnails, each KV group's name and title (with the
heads it holds as claims), the row panel's title template (which says the KV head
only when heads share one), and the scale as the page prints it.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.lab import numbers as fmt
from attnlab.lab.said import said

# Each template's slots: the page passes these values, and a template names no others.
SLOTS = {
    "retry": ("message", "seconds"),
    "over_chars": ("chars", "max_chars", "cap"),
    "count_failed": ("message",),
    "row_pending": ("query", "layer", "head"),
    "bridge_at": ("query", "layer", "head"),
    "retraced": ("note", "done"),
    "row_title": ("query", "layer", "head", "kv_head"),  # trace_names's; kv_head only where heads share
}

ROW = "Query {query} · layer {layer}, head {head}"  # a query row's place: the row panel's, the bridge's
LINES = "Lines from each query (left) to the keys it attends to (right); thicker = larger share."


def page_words() -> dict[str, str]:
    """The view's fixed sentences and its templates (``{slot}`` per :data:`SLOTS`)."""
    return {
        # a full line of model jobs (429): the server's sentence, then the seconds left of its Retry-After
        "retry": "{message} Trying again in {seconds} s…",
        # the text is longer than the view takes, counted in the browser before any request
        "over_chars": "{chars} characters: over the {max_chars}-character limit; the cap is {cap} tokens",
        "count_failed": "Could not count the tokens: {message}",
        "nothing_traced": "Nothing traced: fix the text and try again.",
        "nothing_generated": "Nothing generated: fix the request and try again.",
        "row_pending": ROW,  # while the row is computed (it then gets the trace's row_title)
        "row_computing": "Computing this query's row…",
        # the bridge's button: which row it opens, or why it cannot
        "bridge_at": ROW,
        "bridge_none": "Focus a query token first.",
        "bridge_empty": "Focus a query token of this text to open its row here.",
        # a dropped trace traced again: the server's note, then the new trace's done line
        "retraced": "{note} {done}",
        "lines_caption": LINES,
        "lines_strongest": (
            "Lines from each query (left) to its strongest key (right): a long text would draw "
            "thousands. Focus a token to see all of its lines; thicker = larger share."
        ),
    }


def widget_words() -> dict[str, str]:
    """The Jupyter head views' fixed words (``widgets/heads.py``): headings, captions, the row's columns."""
    return {
        "head_heading": "One head",
        "layer": "Layer",
        "tokens": "Query tokens: use the arrow keys to move between them",
        "heatmap_caption": "Heatmap: rows are queries, columns are keys. Hover a cell for its share.",
        "lines_caption": LINES,
        "key": "key",
        "share": "share",
        "precise": "weight (full precision)",
        "model_heading": "Every head, layer by layer (the model view)",
    }


def _heads(members: Sequence[int]) -> str:
    return ", ".join(str(m) for m in members)


def kv_group_names(kv_groups: Sequence[Sequence[int]]) -> list[dict]:
    """Each KV head's name and title (the query heads that read it, as claims): the thumbnails' groups."""
    return [
        {
            "label": f"KV head {g}",
            "title": said(
                f"KV head {g}: query heads {_heads(members)} share its keys and values",
                kv_head=g,
                heads=[int(m) for m in members],
            ),
        }
        for g, members in enumerate(kv_groups)
    ]


def trace_names(*, n_layer: int, kv_groups: Sequence[Sequence[int]], scale: float) -> dict:
    """The names a trace's answer carries (``TraceSummary`` less the trace's own data).

    ``kv_groups[g]`` is the query heads that read KV head ``g`` (every head once).
    Heads share KV heads (grouped-query attention) when a group holds more than one.
    """
    groups = [[int(m) for m in members] for members in kv_groups]
    n_head = sum(len(members) for members in groups)
    group_of = {m: g for g, members in enumerate(groups) for m in members}
    shared = any(len(members) > 1 for members in groups)
    return {
        "scale_display": fmt.rounded(scale),
        "layer_names": [f"layer {i}" for i in range(n_layer)],
        "head_names": [f"head {i}" for i in range(n_head)],
        "head_options": [f"head {i} (KV head {group_of[i]})" if shared else f"head {i}"
                         for i in range(n_head)],  # fmt: skip
        "kv_group_names": kv_group_names(groups),
        # filled from the row's answer (its query label, layer, head and kv_head)
        "row_title": ROW + " (reads KV head {kv_head})" if shared else ROW,
    }
