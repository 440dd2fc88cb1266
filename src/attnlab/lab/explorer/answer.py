"""Everything the page draws for one explorer trace, in one dict.

The web API (``POST /api/trace``, the explorer part of ``POST /api/state``) and
the notebook widgets answer with this same dict, so a number on the page and in
a widget comes from one function. Every string the explorer's pictures place is
in it (``display``, ``strip``), so a widget draws them as the page does.
"""

from __future__ import annotations

from attnlab.engine.single import QueryTrace
from attnlab.lab.explorer.challenge import check
from attnlab.lab.explorer.display import comparison as display_comparison
from attnlab.lab.explorer.display import display_strings
from attnlab.lab.explorer.geometry import geometry
from attnlab.lab.explorer.program import to_python
from attnlab.lab.explorer.words import explain


def strip_strings(display: dict) -> dict:
    """The phone strip's items: each source's share as the Share table writes it, the output,
    and the names of its two pictures (for the page's tests; the strip repeats the panels)."""
    return {
        "shares": [f"{src['label']} {src['percent']}" for src in display["sources"]],
        "output": f"o = {display['output']}",
        "pie": "Shares while dragging",
        "mix": "Output while dragging",
    }


def explorer_answer(trace: QueryTrace) -> dict:
    """Return the full answer for one trace (the shape of the API's ``TraceResponse``)."""
    comparison, reference = display_comparison(trace)
    shapes = geometry(trace, reference=reference)
    display = display_strings(trace, shapes)
    return {
        "trace": trace.to_dict(),
        "display": display,
        "strip": strip_strings(display),
        "words": explain(trace).to_dict(),
        "compare": comparison,
        "python": to_python(trace),
        "geometry": shapes,
        "challenge": check(trace).to_dict(),
    }
