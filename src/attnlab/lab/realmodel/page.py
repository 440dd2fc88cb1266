"""The Real model view's fixed words and templates, and the names of one trace's layers, heads and KV groups.

:func:`page_words` is served once (``GET /api/models``, ``words``): sentences the
page shows as they are, and templates whose ``{slot}`` the page fills with what it
already holds (a number it counted, a string the server sent); :data:`SLOTS` names
each template's slots, and a template has no other braces. The page never writes
a word itself.

:func:`real_model_page` is the page's ``FILLS`` entry (``web/assets.py``): the shared
words, and :func:`page_text` at the page's ``<!-- fill:name -->`` markers (its
headings, labels, hints and first values; a sentence that states a fact about a
model or a count as a :func:`said`).

:func:`trace_names` is part of a finished trace's answer: every layer's and head's
name for the pickers and the thumbnails, each KV group's name and title (with the
heads it holds as claims), the row panel's title template (which says the KV head
only when heads share one), and the scale as the page prints it.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.lab import numbers as fmt
from attnlab.lab.page import fill_texts, shared_fills, shared_words
from attnlab.lab.realmodel import nexttoken, probe
from attnlab.lab.said import said

# Each template's slots: the page passes these values, and a template names no others.
SLOTS = {
    "retry": ("message", "seconds"),
    "over_chars": ("chars", "max_chars", "cap"),
    "count_failed": ("message",),
    "about_failed": ("message",),
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
        # the chosen model's files could not be read (GET /api/models/about refused it)
        "about_failed": "Could not read this model's files: {message}",
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


ZOOMS = (3, 6, 12, 24)  # the heatmap's fixed zooms, px per cell (real-model.html's options; 0 = fit)
GENERATION_TOP = 5  # tokens each generation step shows (models.jobs.kinds.STEP_TOP)


def page_text() -> dict[str, str | dict]:
    """The page's fixed headings, labels, hints and first values, by marker."""
    widget = widget_words()
    words = page_words()
    return {
        "title": "Inside a real model",
        "skip": "Skip to the text",
        "lede": "Published language models are deep stacks of transformer blocks, each with several "
        "attention heads. Type a text and look at what every head of a real pretrained model does with it. "
        "attnlab's own engine runs the model on this machine; the page only draws the numbers it returns.",
        "circuits_link": "Circuits on this text: find what each head does, switch heads off, patch one "
        "prompt into another, read the logit lens →",
        "form_title": "Text and model",
        "text_label": "Text to look at",
        "default_text": "The cat sat on the mat.",
        "counting": "Counting tokens…",
        "model_label": "Model",
        "run": "Look inside",
        "probe": "Repeat a random run",
        "probe_note": said(
            "A random run of words, written several times, then traced: the text to find induction heads "
            "with.",
            repeats=probe.REPEATS,
        ),
        "status_start": 'Pick a model and press "Look inside".',
        "view_title": "One head's attention",
        "layer_label": widget["layer"],
        "head_label": "Head",
        "zoom_label": "Heatmap zoom",
        "zoom_fit": "fit",
        **{f"zoom_{px}": said(f"{px} px per cell", px=px) for px in ZOOMS},
        "view_hint": "Each row is a query token; its cells show how it shares its attention among the key "
        "tokens (darker = larger share). Hover or focus a token to see its query's row.",
        "tokens_label": widget["tokens"],
        "heatmap_caption": "Heatmap: rows are queries, columns are keys. Long texts: labels are thinned "
        "(the focused token always keeps its own), zoom in and scroll inside the picture.",
        "lines_caption": words["lines_caption"],
        "row_title": "A query's row",
        "row_hint": "Hover or focus a token to see its scaled scores, shares and top sources, computed the "
        "way the explorer computes one query.",
        "bridge_open": "Open this head in the explorer",
        "bridge_note": words["bridge_none"],
        "bridge_title": "This head in the explorer: one real row",
        "bridge_hint": "The explorer's Match, Share and Mix on the focused query's real q, keys and "
        "values: the same calculation, the same words, every number from the engine. It follows the "
        "focused query, layer and head.",
        "neuron_title": "Behind one score: the neuron view",
        "neuron_hint": "The focused query's q and one key's k, coordinate by coordinate: their products, "
        "added in order, times the scale, give the score the heatmap's row is the softmax of. Hover a bar "
        "for its exact value.",
        "neuron_key_label": "Key token",
        "journey_title": "One token's journey through the blocks",
        "journey_hint": "The focused token's residual stream, block by block: how long the vector is going "
        "in and out, how much attention and the MLP add, and what the norms see.",
        "heads_title": "Every head of this layer",
        "heads_hint": "Small multiples of the layer's heads, to spot previous-token heads, first-token heads "
        '("attention sinks") and broad heads. Choose one to look at it above.',
        "model_view_title": "The whole model: every layer × head",
        "model_view_hint": said(
            "One thumbnail per head, rows are layers. Hover or focus a token above to see its row and "
            "column in every head at once. Choose a thumbnail to open that head above (arrow keys move "
            "through the grid). Long texts are binned: each cell is the largest share in its block.",
            binned="max",
        ),
        "next_title": "What comes next: the model's probabilities",
        "next_hint": "At each position a decoder turns its last block's output into one logit per "
        "vocabulary token; softmax makes them probabilities. Temperature divides the logits (below 1 "
        "sharpens, above 1 flattens), top-k keeps the k likeliest tokens, top-p the fewest whose "
        "probabilities add up to p. The server recomputes the distribution from the real logits, in that "
        "order.",
        "position_label": "Position",
        "temperature_label": nexttoken.CONTROL_NAMES["temperature"],
        "top_k_label": said(f"{nexttoken.CONTROL_NAMES['top_k']} (0 = off)", off=0),
        "top_p_label": nexttoken.CONTROL_NAMES["top_p"],
        "next_run": "Recompute",
        # the model that writes is the chosen one where it is a decoder (GET /api/models/about: writer_note)
        "gen_title": "Let the model continue the text",
        "gen_hint": "A decoder writes one token at a time: it picks the likeliest next token from its "
        "logits, appends it, and runs again. Its KV cache keeps every earlier token's keys and values, so "
        "each step only pushes the newest token through its blocks.",
        "gen_tokens_label": "New tokens",
        "gen_run": "Continue the text",
        "gen_run_hint": "Writes on from the text exactly as it stands.",
        "gen_chat": "Answer as the assistant (chat template)",
        "gen_chat_hint": "Wraps the text in the chat template as a user's turn, so the instruct model "
        "answers it.",
        "gen_steps_title": "Each step's distribution",
        "gen_steps_hint": said(
            "Open a step to see the five likeliest tokens it was drawn from.", top=GENERATION_TOP
        ),
    }


def real_model_page() -> dict:
    """What the server writes into the Real model page: the shared words (its own come with
    ``GET /api/models``) and its fixed text at its markers."""
    return {"words": shared_words(), "fills": {**shared_fills(), **fill_texts(page_text())}}


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
