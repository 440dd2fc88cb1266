"""The lab's limits, declared once: what a learner may type, and what the page is told.

The engine's own numerics limits (``MAX_DIM``, ``MAX_LABEL_LENGTH``, the array
engine's ``MAX_SOURCES``) stay in ``attnlab.engine.single``; these are the
lab's teaching limits on top of them. The request schemas, the lab's
validators and the page (``GET /api/limits``, :func:`page_limits`) all read
them from here, so a limit changes in one line.
"""

from __future__ import annotations

from attnlab.engine.single import MAX_DIM, MAX_LABEL_LENGTH
from attnlab.lab.said import said
from attnlab.models.registry import DEFAULT_MAX_CHARS, DEFAULT_MAX_TOKENS

# the explorer and the held example: every coordinate within ±1,000,000, what the planes can draw
MAX_MAGNITUDE = 1e6
# an own example: 1 to 8 sources (eight source colours), each named by at most MAX_LABEL_LENGTH characters
MIN_SOURCES = 1
MAX_SOURCES = 8
# the block: every number of X and the weights within ±1,000
BLOCK_MAX_MAGNITUDE = 1000.0
# the Real model view: a text's cap in the model's own tokens (each model may say its own), and in characters:
# the model registry's defaults, which it enforces
MAX_TOKENS = DEFAULT_MAX_TOKENS
MAX_CHARS = DEFAULT_MAX_CHARS
# its next-token controls and "Continue the text"
TEMPERATURE_MIN = 0.0
TEMPERATURE_MAX = 5.0
TOP_K_MAX = 49_152  # SmolLM2's vocabulary: a larger k keeps every token; 0 is off
TOP_P_MAX = 1.0  # top-p is more than 0 and at most 1
MIN_NEW_TOKENS = 1
MAX_NEW_TOKENS = 64
# `attnlab generate` may write more: a prompt of MAX_TOKENS plus this stays well inside SmolLM2's 8,192
CLI_MAX_NEW_TOKENS = 1024


def bound(limit: float) -> str:
    """Write a limit as a problem states it: ``1,000,000``, ``-1,000``, ``0.05``, ``5``."""
    x = float(limit)
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}" if abs(x) >= 1000 else str(int(x))
    return repr(x)


def limit_words() -> dict:
    """The page's sentences that state a limit, each with the limit it states as its claim.

    ``sources_count[n - 1]`` is what the own-example form says while it has n sources.
    """
    block = bound(BLOCK_MAX_MAGNITUDE)
    return {
        "own_example": said(
            f"Add or remove sources ({MIN_SOURCES} to {MAX_SOURCES}), rename them and change their keys "
            "and values, all in 2-D so the planes can draw them, then choose “Use this example”. Every "
            f"coordinate stays within ±{bound(MAX_MAGNITUDE)}. The address bar’s link carries the held "
            "example; Reset example returns to the worked example.",
            min_sources=MIN_SOURCES, max_sources=MAX_SOURCES, max_magnitude=MAX_MAGNITUDE,
        ),
        "sources_count": [
            said(f"{n} of at most {MAX_SOURCES} sources.", sources=n, max_sources=MAX_SOURCES)
            for n in range(MIN_SOURCES, MAX_SOURCES + 1)
        ],
        "block_edit": said(
            f"Type a number and press Enter. Numbers past ±{block} or that are not numbers are refused "
            "next to their field; the last good walk stays.",
            max_magnitude=BLOCK_MAX_MAGNITUDE,
        ),
        "new_tokens": said(f"New tokens ({MIN_NEW_TOKENS} to {MAX_NEW_TOKENS})", min=MIN_NEW_TOKENS,
                           max=MAX_NEW_TOKENS),  # fmt: skip
    }


def page_limits() -> dict:
    """The limits the page sets on its controls before it asks (``GET /api/limits``), and their words."""
    return {
        "max_magnitude": MAX_MAGNITUDE,
        "min_sources": MIN_SOURCES,
        "max_sources": MAX_SOURCES,
        "max_dim": MAX_DIM,
        "max_label_length": MAX_LABEL_LENGTH,
        "block_max_magnitude": BLOCK_MAX_MAGNITUDE,
        "max_tokens": MAX_TOKENS,
        "max_chars": MAX_CHARS,
        "temperature_min": TEMPERATURE_MIN,
        "temperature_max": TEMPERATURE_MAX,
        "top_k_max": TOP_K_MAX,
        "top_p_max": TOP_P_MAX,
        "min_new_tokens": MIN_NEW_TOKENS,
        "max_new_tokens": MAX_NEW_TOKENS,
        "words": limit_words(),
    }
