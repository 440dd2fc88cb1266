"""The explorer's sentences that depend on which held row it shows.

The held example (``attnlab.lab.explorer.sequence``) shows one row in the explorer:
row 0's *unmasked projection* (every source allowed) or a *masked* row. These
sentences say which, so no fixed text on the page claims "unmasked" for a
masked row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # sequence imports this module; the type is only for annotations
    from attnlab.lab.explorer.sequence import Held


def explorer_texts(held: Held) -> dict[str, str]:
    """Return the explorer's fixed sentences that depend on the row it shows.

    Keys: ``row`` (what the row label means, for a newcomer), ``given`` (under the
    explorer's title), ``q_legend`` (the legend of
    the query fields), ``allowed`` (which sources the row may attend to) and
    ``example`` (what kind of calculation the words describe). For the
    unmasked projection they are the page's own sentences (index.html starts
    with them); for a masked row they say so, and that a query edit returns
    the explorer to row 0's unmasked projection.
    """
    if not held.sequence:
        return _one_query_texts(held)
    r, name = held.row, held.labels[held.row]
    if not held.masked:
        every = ", ".join(held.labels)
        return {
            "row": f"This is token {name}'s query in the held sequence below, unmasked: it may "
            f"attend to every source ({every}).",
            "given": "Given vectors for one unmasked head, not learned word meanings.",
            "q_legend": "Change the query · one unmasked row",
            "allowed": "All sources are allowed here; this is not a masked sequence output.",
            "example": "This hand-authored, unmasked example explains one attention calculation; "
            "it is not a trace from a trained model.",
        }
    blocked = [held.labels[i] for i, ok in enumerate(held.mask[r]) if not ok]
    seen = "its mask row allows every source" if not blocked else f"{', '.join(blocked)} blocked"
    return {
        "row": f"This is token {name}'s query in the held sequence below, masked: the mask "
        f"decides what it may attend to ({seen}).",
        "given": f"Given vectors for one masked row of a head (row {r}, {name}), not learned word meanings.",
        "q_legend": "Change the query · returns the explorer to row 0, unmasked",
        "allowed": f"This is row {r}'s masked sequence output: {seen}.",
        "example": f"This hand-authored example explains row {r}'s masked attention calculation; "
        "it is not a trace from a trained model.",
    }


def _blocked(held: Held) -> list[str]:
    return [held.labels[i] for i, ok in enumerate(held.mask[held.row]) if not ok]


def _one_query_texts(held: Held) -> dict[str, str]:
    """The same sentences for an example of one query (no sequence around it)."""
    blocked = _blocked(held)
    allowed = (
        "All sources are allowed here." if not blocked
        else f"{', '.join(blocked)} {'is' if len(blocked) == 1 else 'are'} blocked by its mask."
    )
    return {
        "row": "This is an example of its own: one query with no sequence around it; "
        "Reset example returns to the worked A/B/C sequence.",
        "given": "Given vectors for one query, not learned word meanings.",
        "q_legend": "Change the query",
        "allowed": allowed,
        "example": "This example explains one attention calculation; it is not a trace from a "
        "trained model.",
    }


def explorer_line(held: Held) -> str:
    """Return the line by the held table: what the explorer shows, then the edit rules."""
    if not held.sequence:
        return explorer_note(held)
    return f"The explorer shows {held.explorer_label()}. {explorer_note(held)}"


def explorer_note(held: Held) -> str:
    """Return the note under the explorer: which row it shows and the edit rules."""
    if not held.sequence:
        return (
            "The explorer shows an example of its own: one query over its sources, with no "
            "sequence around it. Its mask is the one row below; Reset example returns to the "
            "worked A/B/C sequence."
        )
    if held.masked:
        blocked = [held.labels[i] for i, ok in enumerate(held.mask[held.row]) if not ok]
        seen = "every source is allowed" if not blocked else f"{', '.join(blocked)} blocked"
        return (
            f"Row {held.row}'s masked output ({seen}). Query edits return to row 0; "
            "value edits are shared. Other rows and the held mask stay unchanged."
        )
    return (
        "All sources are allowed here; this is not a masked sequence output. Query edits "
        "return to row 0; value edits are shared. Other rows and the held mask stay unchanged."
    )
