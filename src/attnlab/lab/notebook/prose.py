"""The notebook's fixed prose in index.html: the header, the playback, the stepper, practice and
export, the held example, the block section's introduction and the footer.

:func:`page_text` is served at the page's ``<!-- fill:name -->`` markers (through
``lab.notebook.page.index_page``): a plain string for a heading or a label, a
:func:`~attnlab.lab.said.said` for a sentence that states a fact about the numbers
(the block's heads, norm and dtype; the held sequence's tokens and mask), so a test
checks the words against the lab's own numbers (``lab.block`` too, which the
notebook does not import). The stepper's first title and the
sequence's labels come from the lab's first answer, never a copy.
"""

from __future__ import annotations

from attnlab.lab.explorer.state import example_answer
from attnlab.lab.said import said

MODELS = {"minilm": "MiniLM", "smollm2": "SmolLM2"}  # the Real model page's models, as the note names them
COUNTS = {2: "Two", 3: "Three", 4: "Four"}  # a count at the start of a sentence
# The block section's first walk (lab.block.page.block_page's defaults). The notebook builds on the
# explorer alone, so these are stated here as claims, and a test checks them against lab.block.
BLOCK_START = {"heads": 2, "norm": "pre", "dtype": "float64"}


def _labels() -> list[str]:
    """The held sequence's token labels, from the first answer: "A/B/C"."""
    return list(example_answer()["sequence"]["labels"])


def header_text() -> dict[str, str | dict]:
    """The page's title, header and footer."""
    models = " and ".join(MODELS.values())
    return {
        "page_title": "Scaled dot-product attention",
        "skip": "Skip to the explorer",
        "lede": said(
            "Every number on this page is a Python float computed by attnlab's engine on this machine; the "
            "page only draws it.",
            dtype="float64",
        ),
        "real_model_link": "Inside a real model",
        "real_model_note": said(
            f": every attention head of {COUNTS[len(MODELS)].lower()} real pretrained transformers "
            f"({models}), run by the same engine.",
            models=list(MODELS),
        ),
        "served_note": "served from this machine; no request leaves it.",
    }


def playback_text() -> dict[str, str]:
    """The playback's and the stepper's headings, figure captions and buttons."""
    stepper = example_answer()["stepper"]
    first = stepper["steps"][0]
    return {
        "playback_title": "Watch Match → Share → Mix",
        "playback_keys_label": "Playback key space: q, the keys and q's projections",
        "playback_pie_label": "Playback shares as a pie",
        "playback_values_label": "Playback value space: the carries tip to tail and the output",
        "playback_match": "1 · Match",
        "playback_share": "2 · Share",
        "playback_mix": "3 · Mix",
        "playback_play": "Play",
        "playback_restart": "Restart",
        "playback_position": "Position",
        "playback_reduced": "Reduced motion is on, so the playback is shown as steps, each a still picture.",
        "playback_prev_step": "Previous step",
        "playback_next_step": "Next step",
        "stepper_summary": f"{stepper['title']}: " + " → ".join(step["name"] for step in stepper["steps"]),
        "stepper_title": first["title"],
        "stepper_inspect": first["inspect"],
        "stepper_prev": "Previous",
        "stepper_next": "Next",
        "stepper_keys": "Or use the Left and Right arrow keys.",
    }


def practice_text() -> dict[str, str | dict]:
    """The practice section's headings and notes, the held example's, and the export's buttons."""
    labels = _labels()
    return {
        "practice_title": "Practice, help and export",
        "practice_note": (
            "A study detour counts as consultation for the attempt you leave. Clearing a response or "
            "resetting values keeps its help history."
        ),
        "held_hint": said(
            f"Started from the {'/'.join(labels)} sequence: each token has a query, a key and a value. The "
            "mask starts causal (each row may attend to itself and earlier sources). Given vectors, not "
            "learned meanings.",
            labels=labels, mask="causal",
        ),
        "held_unmasked": said("Show row 0’s unmasked projection", row=0),
        "held_note": said(
            "Query edits in the explorer return to row 0; value edits are shared by every row. Other rows "
            "and the held mask stay unchanged. Reset example restores only the query and the first value’s "
            "x coordinate.",
            query_row=0, value=(0, 0),
        ),
        "challenges_title": "Challenges",
        "history_title": "Study history for this visit",
        "history_hint": (
            "Each attempt lists the checks you made (right or not yet), the hints you opened and any "
            "answer you showed; these are no scores. Each attempt keeps its own feedback and help. "
            "Reloading the page clears this history; export it as JSON first to keep it, and import that "
            "file to bring it back."
        ),
        "export_title": "Export and import",
        "export_json": "Export JSON",
        "export_markdown": "Export Markdown report",
        "export_ipynb": "Export Jupyter notebook",
        "export_key_svg": "Key plot SVG",
        "export_value_svg": "Value plot SVG",
        "export_key_png": "Key plot PNG",
        "export_value_png": "Value plot PNG",
        "import_label": "Import a JSON export (the held example and its study history)",
    }


def block_text() -> dict[str, str | dict]:
    """The block section's eyebrow, heading and introduction."""
    labels = _labels()  # the explorer's held tokens, which the block section takes
    return {
        "block_eyebrow": said(
            f"Second half · the same {'/'.join(labels)} tokens · the same causal mask",
            labels=labels, mask="causal",
        ),
        "block_title": "From one head to a transformer block",
        "block_intro": said(
            f"{COUNTS[BLOCK_START['heads']]} heads of the single-head calculation above, put side by side, "
            "mixed by W_O, added back to the input, normalised and passed through a small MLP: one "
            f"transformer block ({BLOCK_START['norm']}-norm to start), every number computed by the engine "
            f"in {BLOCK_START['dtype']}.",
            **BLOCK_START,
        ),
    }


def page_text() -> dict[str, str | dict]:
    """The notebook's fixed prose in index.html, by marker."""
    return {**header_text(), **playback_text(), **practice_text(), **block_text()}
