"""The explorer's sentences that depend on which held row it shows, each with its claims.

The held example (``attnlab.lab.explorer.sequence``) shows one row in the explorer:
row r *masked* (its mask row decides what it may attend to) or row 0's
*unmasked projection* (every source allowed), or the one row of an example of
one query. These sentences say which, so no fixed text on the page claims
"unmasked" for a masked row; each is ``{"text", "claims"}`` (``lab.said``) and
``tests/lab/explorer/test_claims.py`` checks the claims against the held example
and the edit rules. :func:`worked_fit` says how the held example differs from
the worked A/B/C sequence that the practice challenges are written for.
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.explorer.sequence import Held
from attnlab.lab.said import said


def _allowed(held: Held) -> list[str]:
    return [label for label, ok in zip(held.labels, held.mask[held.row]) if ok]


def _blocked(held: Held) -> list[str]:
    return [label for label, ok in zip(held.labels, held.mask[held.row]) if not ok]


def _sources(n: int) -> str:
    return fmt.plural(n, "source")


def _query_edit(held: Held) -> dict:
    """Where a query edit takes the explorer: row 0, unmasked in a sequence (one query keeps its mask)."""
    return {"row": 0, "masked": held.masked and not held.sequence}


def explorer_label(held: Held) -> dict:
    """What the explorer shows: ``Row 0 (A) · unmasked projection``, ``Row 1 (B) · masked row``
    or, for one query, ``Your own example · one query over 4 sources``."""
    if not held.sequence:
        n = len(held.labels)
        return said(f"Your own example · one query over {_sources(n)}", sequence=False, sources=n)
    kind = "masked row" if held.masked else "unmasked projection"
    return said(
        f"Row {held.row} ({held.labels[held.row]}) · {kind}",
        sequence=True, row=held.row, label=held.labels[held.row], masked=held.masked,
    )


def explorer_heading(held: Held) -> dict:
    """The explorer's row label as the page shows it above the explorer: the label, as a sentence."""
    label = explorer_label(held)
    return said(label["text"] + ".", **label["claims"])


def explorer_texts(held: Held) -> dict[str, dict]:
    """Return the explorer's sentences that depend on the row it shows.

    Keys: ``row`` (what the row label means, for a newcomer), ``given`` (under the
    explorer's title), ``q_legend`` (the legend of the query fields), ``allowed``
    (which sources the row may attend to) and ``example`` (what kind of
    calculation the words describe). Claims: ``row``, ``masked`` (what the
    explorer traces), ``allowed`` and ``blocked`` (labels), and for the legend
    where a query edit takes the explorer (``query_edit``: its row and whether
    it is masked), which :func:`attnlab.lab.explorer.sequence.edit_query` does.
    """
    if not held.sequence:
        return _one_query_texts(held)
    r, name = held.row, held.labels[held.row]
    facts = {"row": r, "label": name, "masked": held.masked}
    if not held.masked:
        every = ", ".join(held.labels)
        return {
            "row": said(
                f"This is token {name}'s query in the held sequence below, unmasked: it may "
                f"attend to every source ({every}).",
                **facts, allowed=list(held.labels), blocked=[],
            ),
            "given": said("Given vectors for one unmasked head, not learned word meanings.", **facts),
            "q_legend": said("Change the query · one unmasked row", query_edit={"row": 0, "masked": False}),
            "allowed": said(
                "All sources are allowed here; this is not a masked sequence output.",
                **facts, allowed=list(held.labels), blocked=[],
            ),
            "example": said(
                "This hand-authored, unmasked example explains one attention calculation; "
                "it is not a trace from a trained model.",
                **facts,
            ),
        }
    blocked = _blocked(held)
    seen = "its mask row allows every source" if not blocked else f"{', '.join(blocked)} blocked"
    sources = {"allowed": _allowed(held), "blocked": blocked}
    return {
        "row": said(
            f"This is token {name}'s query in the held sequence below, masked: the mask "
            f"decides what it may attend to ({seen}).",
            **facts, **sources,
        ),
        "given": said(
            f"Given vectors for one masked row of a head (row {r}, {name}), not learned word meanings.",
            **facts,
        ),
        "q_legend": said(
            "Change the query · returns the explorer to row 0, unmasked",
            query_edit={"row": 0, "masked": False},
        ),
        "allowed": said(f"This is row {r}'s masked sequence output: {seen}.", **facts, **sources),
        "example": said(
            f"This hand-authored example explains row {r}'s masked attention calculation; "
            "it is not a trace from a trained model.",
            **facts,
        ),
    }


def _one_query_texts(held: Held) -> dict[str, dict]:
    """The same sentences for an example of one query (no sequence around it)."""
    blocked = _blocked(held)
    allowed = (
        "All sources are allowed here." if not blocked
        else f"{', '.join(blocked)} {'is' if len(blocked) == 1 else 'are'} blocked by its mask."
    )
    facts = {"sequence": False, "masked": True}
    return {
        "row": said(
            "This is an example of its own: one query with no sequence around it; "
            "Reset example returns to the worked A/B/C sequence.",
            **facts, reset="worked",
        ),
        "given": said("Given vectors for one query, not learned word meanings.", **facts),
        "q_legend": said("Change the query", query_edit=_query_edit(held)),
        "allowed": said(allowed, **facts, allowed=_allowed(held), blocked=blocked),
        "example": said(
            "This example explains one attention calculation; it is not a trace from a trained model.",
            **facts,
        ),
    }


def explorer_line(held: Held) -> dict:
    """Return the line by the held table: what the explorer shows, then the edit rules."""
    note = explorer_note(held)
    if not held.sequence:
        return note
    label = explorer_label(held)
    return said(f"The explorer shows {label['text']}. {note['text']}", **(note["claims"] | label["claims"]))


def explorer_note(held: Held) -> dict:
    """Return the note under the explorer: which row it shows and the edit rules.

    Claims: ``blocked`` (the row's blocked sources), ``query_edit`` (where a query
    edit takes the explorer) and ``values_shared`` (a value edit changes every row).
    """
    rules = {"query_edit": _query_edit(held), "values_shared": True}
    if not held.sequence:
        return said(
            "The explorer shows an example of its own: one query over its sources, with no "
            "sequence around it. Its mask is the one row below; Reset example returns to the "
            "worked A/B/C sequence.",
            sequence=False, reset="worked", **rules,
        )
    if held.masked:
        blocked = _blocked(held)
        seen = "every source is allowed" if not blocked else f"{', '.join(blocked)} blocked"
        return said(
            f"Row {held.row}'s masked output ({seen}). Query edits return to row 0; "
            "value edits are shared. Other rows and the held mask stay unchanged.",
            row=held.row, masked=True, blocked=blocked, **rules,
        )
    return said(
        "All sources are allowed here; this is not a masked sequence output. Query edits "
        "return to row 0; value edits are shared. Other rows and the held mask stay unchanged.",
        row=held.row, masked=False, blocked=[], **rules,
    )


def worked_fit(held: Held) -> dict[str, dict | None]:
    """How ``held`` differs from the worked A/B/C sequence, one sentence per difference (None: no difference).

    ``sequence`` (an example of one query), ``labels`` (other source names) and
    ``keys`` (other keys). The practice challenges are written for the worked
    example: ``lab.notebook.practice.misfit`` says these same sentences, and the
    page shows them by a challenge that needs them.
    """
    worked_labels, worked_keys = list(WORKED.labels), [list(k) for k in WORKED.keys]
    sequence = None
    if not held.sequence:  # an example of one query, even one whose sources are named A, B, C
        sequence = said(
            "This challenge is written for the worked A/B/C sequence; the explorer shows an "
            "example of one query of its own.",
            sequence=False,
        )
    labels = None
    if list(held.labels) != worked_labels:
        labels = said(
            f"This challenge is written for the worked example's sources {', '.join(worked_labels)}; "
            f"yours are {', '.join(held.labels)}.",
            worked=worked_labels, yours=list(held.labels),
        )
    keys = None
    if [list(k) for k in held.keys] != worked_keys:
        shown = ", ".join(fmt.vector(k) for k in worked_keys)
        keys = said(
            f"This challenge needs the worked example's keys ({shown}); with other keys it may have "
            "no solution.",
            worked=worked_keys, yours=[list(k) for k in held.keys],
        )
    return {"sequence": sequence, "labels": labels, "keys": keys}
