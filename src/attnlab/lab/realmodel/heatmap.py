"""How a heatmap of shares is read: the ink legend, each cell's readout, the text inside a cell.

Every heatmap of the Real model view (and of the Jupyter widgets) draws a share
``w`` in [0, 1] with one ink (``js/realmodel/ink.js``: opacity grows with
``sqrt(w)``), so one legend reads them all: :func:`legend` gives its marks (the
shares it shows, with their printed form) and its sentences. :data:`CELL` is
the readout of one cell as templates the page fills with what the head's answer
holds: the two tokens' labels and the cell's printed share (``shares``), and,
where the answer carries them (:data:`PRECISE_UP_TO` tokens at most), the share
at full precision (``precise``). :func:`cell_text` is the short form written
inside a cell (``.12`` for ``0.12``), one entry per printed share.
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt

MARKS = (0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0)  # the shares the legend shows: a few small ones (sqrt matters)
PRECISE_UP_TO = 64  # tokens up to which a head's answer carries every share at full precision

# One cell's readout (a cell's <title>, the hover tooltip, the screen reader's line): slots
# {query} and {key} (the tokens' labels), {share} (the printed share), {exact} (full precision).
CELL = {
    "share": "{query} → {key}: share {share}",
    "exact": "{query} → {key}: share {share} (exactly {exact})",
    "blocked": "{query} may not see {key}",
}
CELL_SLOTS = {"share": ("query", "key", "share"), "exact": ("query", "key", "share", "exact"),
              "blocked": ("query", "key")}  # fmt: skip


def legend(*, causal: bool, binned: bool = False) -> dict:
    """The colour legend: its marks, the blocked swatch's word (a causal model), its label and sentence.

    ``binned``: the heatmaps are thumbnails whose cells each stand for a block of tokens.
    """
    marks = [{"share": m, "text": fmt.rounded(m, 2)} for m in MARKS]
    label = f"Colour legend: shares {', '.join(m['text'] for m in marks)} from faint to dark"
    words = (
        "Darker = larger share. The ink grows with the square root of the share, so thin spreads "
        f"({marks[1]['text']}–{marks[2]['text']}) stay visible."
    )
    if binned:
        words += (" Thumbnails of long texts are binned: each cell is the largest share in its block "
                  "of tokens.")  # fmt: skip
    return {
        "low": 0.0,
        "high": 1.0,
        "low_display": fmt.percent(0.0),
        "high_display": fmt.percent(1.0),
        "blocked": "a later token it may not see (causal)" if causal else "",
        "blocked_mark": "blocked" if causal else "",
        "marks": marks,
        "label": label + ("; grey cells are blocked (a token may not see later ones)" if causal else ""),
        "words": words,
    }


def cell_text(shares: list[str]) -> dict[str, str]:
    """The text inside a cell for each printed share: ``"0.12"`` → ``".12"``, ``"1"`` → ``"1"``."""
    return {s: s[1:] if s.startswith("0.") else s for s in shares}
