"""One query's trace as ``attnlab trace`` prints it: the page's words around a table.

``trace_text(trace)`` returns the printout's parts: the summary and the Match,
Share and Mix paragraphs (``lab.explorer.words.explain``), the table of sources
(the explorer's display strings, ``lab.explorer.display``), and the two lines of
results, each a shown sentence with its claims (``lab.said``):
``"m = 1.414; Z = 1.735"`` (the largest allowed score and the softmax's stable
denominator) and ``"output o = [-0.004, 0.868]"``. ``lines(text)`` lays them
out, one printed line each.
"""

from __future__ import annotations

from attnlab.engine.single import QueryTrace
from attnlab.lab.explorer.display import display_strings
from attnlab.lab.explorer.words import explain
from attnlab.lab.said import said

HEADER = ["source", "key", "value", "dot", "scaled", "share", "carry w·v"]

# `attnlab trace --help`: the command's line and each option's, by its flag
HELP = {
    "command": "print one query's attention, number by number",
    "--q": "the query, e.g. 2,1 (write --q=-2,1 for a leading minus)",
    "--keys": 'one key per source, e.g. "-1,2 1,0 0,1"',
    "--values": 'one value per source, e.g. "2,0 0,2 -1,-1"',
    "--labels": "comma-separated source labels (default A,B,C,...)",
    "--allowed": "sources the query may attend to: labels (A,C) or 1,1,0",
    "--scale": "score scale, a multiplier (default 1/sqrt(d_k))",
    "--json": "the full-precision trace as JSON",
    "--python": "the generated Python program",
}


def refusal(kind: str, flag: str, text: str = "", labels: tuple[str, ...] = ()) -> str:
    """What ``attnlab trace`` says of an argument it cannot read: ``kind`` is ``number`` (``text``
    is not one), ``vector`` (not comma-separated numbers), ``matrix`` (no vector at all) or
    ``label`` (``text`` names no source of ``labels``)."""
    return {
        "number": f"{flag}: {text!r} is not a number",
        "vector": f"{flag}: {text!r} needs comma-separated numbers such as 2,1",
        "matrix": f"{flag}: give one comma-separated vector per source, e.g. '-1,2 1,0'",
        "label": f"{flag}: {text!r} is not a source label ({', '.join(labels)})",
    }[kind]


def not_utf8(position: int) -> str:
    """The refusal of the command line's argument ``position`` (from 1): bytes that are not UTF-8."""
    return f"argument {position} is not valid UTF-8 text"


def trace_text(trace: QueryTrace) -> dict:
    """The printout's parts: ``summary``, ``header``, ``rows``, ``softmax``, ``output``, ``paragraphs``."""
    words = explain(trace)
    shown = display_strings(trace)
    rows = [
        [s["label"], s["key"], s["value"], s["dot"], s["score"], s["share"], s["carry"]]
        for s in shown["sources"]
    ]
    return {
        "summary": said(words.summary, **words.claims["summary"]),
        "header": list(HEADER),
        "rows": rows,
        "softmax": said(f"m = {shown['m']}; Z = {shown['z']}", m=trace.m, z=trace.z),
        "output": said(f"output o = {shown['output']}", output=list(trace.output)),
        "paragraphs": [said(getattr(words, n), **words.claims[n]) for n in ("match", "share", "mix")],
    }


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """The rows under the header, each column as wide as its widest cell (two spaces between)."""
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in [header, *rows]]


def lines(text: dict) -> list[str]:
    """The printed lines of :func:`trace_text`'s parts, blank lines between the parts."""
    return [
        text["summary"]["text"],
        "",
        *table(text["header"], text["rows"]),
        "",
        text["softmax"]["text"],
        text["output"]["text"],
        "",
        *(p["text"] for p in text["paragraphs"]),
    ]

