"""The page's one state answered: the held example, its edits, and everything the page draws.

``state_answer(held, edits)`` applies the edits (a drag's q, a value, a mask
cell, the row shown, Reset) to the held example, the page's only example, and
answers with the held table, the explorer and the stepper in one dict: one
request per state, and no view asks for a second. ``example_answer()`` is the
page's first answer, the worked A/B/C sequence's.
"""

from __future__ import annotations

from functools import cache

from attnlab.engine.errors import FieldError
from attnlab.lab.explorer.answer import explorer_answer
from attnlab.lab.explorer.sequence import STARTING, Held, apply_edit
from attnlab.lab.explorer.stepper import stepper
from attnlab.lab.explorer.view import sequence_view


def state_answer(held: Held, edits: list[dict] = ()) -> dict:
    """Apply ``edits`` in order to the held example and answer with everything both views draw.

    ``{"sequence": sequence_view(new held), "explorer": explorer_answer(explorer row's trace),
    "stepper": stepper(explorer row's trace)}``: the notebook's held table, summaries and
    explorer row label come from ``sequence``; the explorer's trace, display strings, words,
    comparison, Python, geometry and challenge from ``explorer``; the stepper's four steps
    from ``stepper``. One request per state, and no view asks for a second.
    """
    new = held
    for i, edit in enumerate(edits):
        try:
            new = apply_edit(new, edit)
        except FieldError as err:  # located at edit.q[1]: say which of the edits
            raise err.rebased(("edit",), ("edits", i)) from None
    trace = new.explorer_trace()
    return {"sequence": sequence_view(new), "explorer": explorer_answer(trace), "stepper": stepper(trace)}


@cache
def example_answer() -> dict:
    """Return the worked A/B/C sequence's state answer (its explorer row is q = [2, 1]).

    The page starts from this one answer; the worked example is declared once
    (``lab.explorer.examples``) and reaches the page only here, as
    ``sequence.example``: the page's Reset and "Load the worked example" are edits.
    """
    return state_answer(STARTING)
