"""Export the visit: JSON (importable), a Markdown report and a Jupyter notebook.

- :func:`to_json` writes the held example, the engine's numbers for it and the
  study history; :func:`from_json` reads such a file back, validating the
  example (the numbers in the file are ignored and recomputed).
- :func:`to_markdown` is the same as a readable report.
- :func:`to_notebook` builds an ``.ipynb`` with ``nbformat`` whose cells
  recompute the page's numbers in plain Python with the engine's arithmetic
  (ordered sums from 0.0, ``math.exp``, ``math.sqrt``), so running it prints
  the page's numbers exactly; its last cell prints them as JSON.

The key/value plots are the page's own SVGs, serialised by static/js/notebook/export.js.
"""

from __future__ import annotations

import json
import re
from importlib import metadata
from typing import TYPE_CHECKING

from attnlab.engine.errors import FieldError
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.program import to_python
from attnlab.lab.explorer.sequence import Held, held_from_dict
from attnlab.lab.explorer.texts import explorer_label
from attnlab.lab.explorer.view import sequence_view
from attnlab.lab.notebook.history import history, study_from_dict
from attnlab.lab.said import said

if TYPE_CHECKING:  # nbformat (with jsonschema) is imported only when a notebook is exported
    import nbformat

FORMAT = "attnlab-notebook"
VERSION = 1
MAX_IMPORT_BYTES = 64_000
MAX_DEPTH = 32  # an export nests 5 levels (document > results > rows > row > scores)


def results(held: Held) -> dict:
    """Return the engine's numbers for ``held`` at full precision (what the page shows)."""
    view = sequence_view(held)
    t = view["explorer"]["trace"]
    return {
        "explorer": {
            "label": view["explorer"]["label"]["text"],
            "weights": t["weights"],
            "scores": t["scores"],
            "output": t["output"],
        },
        "rows": [
            {"scores": s, "weights": w, "output": o}
            for s, w, o in zip(view["scores"], view["weights"], view["outputs"])
        ],
    }


def to_json(held: Held, study: dict) -> dict:
    """Return the export document (a JSON object) for ``held`` and the visit's ``study``."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_by": f"attnlab {metadata.version('attnlab')}",
        "example": held.to_dict(),
        "results": results(held),
        "history": history(study),
        "study": study,  # the attempts as data, so an import restores the history
    }


def from_json(text: str | bytes) -> Held:
    """Read an exported document back into a :class:`Held` (see :func:`parse`)."""
    return from_document(parse(text))


def read(text: str | bytes) -> tuple[Held, dict | None]:
    """Read an export's example and its study (``None`` in an export made before studies travelled).

    The study is validated as the page sends it (``FieldError`` at ``("study", ...)``).
    """
    doc = parse(text)
    held = from_document(doc)
    return held, (study_from_dict(doc["study"]) if "study" in doc else None)


def parse(text: str | bytes) -> object:
    """Parse an exported document's text, refusing what no export can be.

    Raises ``FieldError`` at ``("text",)`` when the text is too long, nests
    deeper than ``MAX_DEPTH`` or is not JSON; :func:`from_document` then checks
    the document's fields.
    """
    if len(text) > MAX_IMPORT_BYTES:
        raise FieldError("text", f"is {len(text)} bytes long; an export is at most {MAX_IMPORT_BYTES}")
    # Checked before parsing: json.loads recurses once per level and would raise
    # RecursionError (not a message a person can act on) near 1,000 levels.
    depth = json_depth(text)
    if depth > MAX_DEPTH:
        raise FieldError("text", f"nests {depth} levels deep; an export nests at most {MAX_DEPTH}")
    try:
        doc = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise FieldError("text", f"is not JSON ({err})") from None
    except ValueError:  # Python refuses to read an integer of more than 4,300 digits
        raise FieldError("text", "holds a number too long to read; no export writes one") from None
    except RecursionError:  # pragma: no cover - json_depth refuses such text first
        raise FieldError("text", "nests too deeply to read") from None
    return doc


# A string (an unclosed one runs to the end, so a match never fails and the scan stays linear)
# or a bracket; strings are skipped so that "[[[" inside a label does not count.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


def refusal(err: FieldError) -> str:
    """Why a file was not imported, as the problem of the import's text: "was not imported: it nests
    5000 levels deep; ..." or "was not imported: its example › values › 2 › 1 must be at most
    1,000,000" (places in the file counted from 1). The page names the field ("The file")."""

    def place(loc) -> str:
        if tuple(loc) in (("text",), ()):
            return "it"
        return "its " + " › ".join(str(p + 1) if isinstance(p, int) else str(p) for p in loc)

    return f"was not imported: {err.words(place)}"


def imported(name: str | None, has_study: bool) -> dict:
    """What the page says once file ``name`` is imported: its example, and its study when it had one."""
    restored = " and the study history is restored" if has_study else ""
    return said(
        f"Imported {name or 'the file'}: the held example now shows its numbers{restored}.",
        name=name, study_restored=has_study,
    )


class ImportRefused(FieldError):
    """An import that cannot be read, at ``text`` (the problem says why)."""

    type = "import_refused"


def import_answer(text: str | bytes, name: str | None = None) -> dict:
    """Read an exported file's ``text`` back: its sequence view, and its ``study`` and ``history``
    when it carries one, with ``message`` (:func:`imported`). A file that cannot be read is refused
    at ``text`` (:class:`ImportRefused`): wherever in the file, for the request it is the text."""
    try:
        held, study = read(text)
    except FieldError as err:
        raise ImportRefused("text", refusal(err)) from None
    view = sequence_view(held)
    if study is not None:
        view = {**view, "study": study, "history": history(study)}
    return {**view, "message": imported(name, study is not None)}


def json_depth(text: str | bytes) -> int:
    """Return how deeply ``text``'s arrays and objects nest, without parsing it.

    Linear time and no recursion, so it is safe on any input.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    depth = deepest = 0
    for token in _TOKEN.findall(text):
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth -= 1
    return deepest


def from_document(doc: object) -> Held:
    """Validate an already-parsed export document and return its example.

    Raises ``FieldError`` located in the document: ``("format",)``,
    ``("version",)`` or the example's field under ``("example", ...)``.
    """
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        loc = ("format",) if isinstance(doc, dict) else ()
        raise FieldError(loc, f"is not an attnlab export (format must be {FORMAT!r})")
    if doc.get("version") != VERSION:
        raise FieldError("version", f"is {doc.get('version')!r:.20}; this attnlab reads {VERSION}")
    try:
        return held_from_dict(doc.get("example"))
    except FieldError as err:
        raise err.within("example") from None


# --- Markdown ---------------------------------------------------------------------


def _md(text: str) -> str:
    """Escape Markdown punctuation in a label so it prints literally."""
    return "".join("\\" + ch if ch in "\\`*_{}[]()#+-.!|<>" else ch for ch in text)


def _code(text: str) -> str:
    """``text`` as a Markdown code span that no backtick inside it can close."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def to_markdown(held: Held, study: dict) -> str:
    """Return a readable report: the held example, its numbers and the study history."""
    view = sequence_view(held)
    labels = [_md(label) for label in held.labels]
    lines = [
        "# Guided attention notebook · study report",
        "",
        f"Held example {_code(held.id)} · {fmt.plural(len(held.queries), 'query', 'queries')} · "
        f"{fmt.plural(len(held.labels), 'source')}. "
        "Given vectors, not learned meanings. Displayed numbers are rounded to three decimals, and each "
        "row's shares to percentages that add up to 100.",
        "",
        "## Inputs",
        "",
        "| Token | Query q | Key k | Value v |",
        "|---|---|---|---|",
    ]
    for r, label in enumerate(labels):
        query = fmt.vector(held.queries[r]) if r < len(held.queries) else "—"
        lines.append(
            f"| {label} | {query} | {fmt.vector(held.keys[r])} "
            f"| {fmt.vector(held.values[r])} |"
        )
    lines += ["", "## Mask (✓ may attend, ✗ blocked)", ""]
    lines.append("| Row | " + " | ".join(labels) + " |")
    lines.append("|---|" + "---|" * len(labels))
    for r, row in enumerate(held.mask):
        cells = " | ".join("✓" if ok else "✗" for ok in row)
        lines.append(f"| {r} ({labels[r]}) | {cells} |")
    lines += ["", "## Rows: scaled scores, shares and outputs", ""]
    lines.append("| Row | Scores | Shares | Output |")
    lines.append("|---|---|---|---|")
    for row in view["rows"]:
        lines.append(
            f"| {row['row']} ({_md(row['label'])}) | {', '.join(row['scores_text'])} "
            f"| {', '.join(row['weights_text'])} | {row['output_text']} |"
        )
    ex = view["explorer"]
    lines += [
        "",
        f"## Explorer: row {held.row} ({labels[held.row]}) · "
        + ("masked row" if held.masked else "unmasked projection"),
        "",
        f"- Shares: {fmt.vector(ex['trace']['weights'])}",
        f"- Output: {fmt.vector(ex['trace']['output'])}",
        "",
        "## Study history for this visit",
        "",
        "Each attempt lists its checks (right or not yet), the hints opened and any answer "
        "shown; these are no scores.",
        "",
    ]
    groups = history(study)
    if not groups:
        lines.append("No help used and no attempts yet.")
    for g in groups:
        lines.append(f"### {_md(g['heading'])}")
        lines.append("")
        lines += [f"- {_md(c['label'])}" for c in g["checks"]]
        lines += [f"- {_md(h)}" for h in g["help"]]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# --- Jupyter notebook -------------------------------------------------------------

_ATTEND = '''\
from math import exp, sqrt
import json


def ordered_sum(terms):
    """Add left to right from 0.0, as attnlab's engine does."""
    total = 0.0
    for term in terms:
        total += term
    return total


def attend(q, keys, values, allowed, scale=None):
    """One query over every source; allowed[i] True means it may attend to source i.

    scale multiplies each q·k; None divides it by sqrt(d_k) instead."""
    d_k = len(q)  # key dimension, NOT number of sources
    dots = [ordered_sum(qj * kj for qj, kj in zip(q, k)) for k in keys]
    scores = [d / sqrt(d_k) for d in dots] if scale is None else [d * scale for d in dots]
    m = max(s for s, ok in zip(scores, allowed) if ok)
    exps = [exp(s - m) if ok else 0.0 for s, ok in zip(scores, allowed)]
    z = ordered_sum(e for e, ok in zip(exps, allowed) if ok)
    weights = [e / z if ok else 0.0 for e, ok in zip(exps, allowed)]
    carries = [[w * x for x in v] if ok else [0.0] * len(v)
               for w, v, ok in zip(weights, values, allowed)]
    output = [ordered_sum(c[j] for c, ok in zip(carries, allowed) if ok)
              for j in range(len(values[0]))]
    return {"scores": scores, "weights": weights, "output": output}
'''


def _floats(xs) -> str:
    return "[" + ", ".join(repr(float(x)) for x in xs) + "]"


def to_notebook(held: Held) -> nbformat.NotebookNode:
    """Return a notebook whose cells reproduce the page's numbers for ``held``."""
    trace = held.explorer_trace()
    inputs = "\n".join(
        [
            "labels = [" + ", ".join(repr(label) for label in held.labels) + "]",
            "queries = [" + ", ".join(_floats(q) for q in held.queries) + "]  # row r's query",
            "seq_keys = [" + ", ".join(_floats(k) for k in held.keys) + "]",
            "seq_values = [" + ", ".join(_floats(v) for v in held.values) + "]",
            "mask = [" + ", ".join("[" + ", ".join(repr(ok) for ok in row) + "]" for row in held.mask)
            + "]  # True = may attend",
            f"explorer_row, explorer_masked = {held.row}, {held.masked or not held.sequence}",
            f"scale = {held.scale!r}  # None: divide q·k by sqrt(d_k)",
        ]
    )
    rows = (
        "rows = [attend(queries[r], seq_keys, seq_values, mask[r], scale) for r in range(len(queries))]\n"
        "for r, row in enumerate(rows):\n"
        "    shares = ', '.join(f'{labels[i]} {w:.3f}' if mask[r][i] else f'{labels[i]} blocked'\n"
        "                       for i, w in enumerate(row['weights']))\n"
        "    print(f'row {r} ({labels[r]}):', shares, '| output', "
        "[round(x, 3) for x in row['output']])"
    )
    final = (
        "allowed_explorer = mask[explorer_row] if explorer_masked else [True] * len(seq_keys)\n"
        "explorer = attend(queries[explorer_row], seq_keys, seq_values, allowed_explorer, scale)\n"
        "print(json.dumps({'explorer': explorer, 'rows': rows}))"
    )
    return new_notebook(
        [
            (
                "markdown",
                "# Guided attention notebook · worked study\n\n"
                f"Held example {_code(held.id)}: {fmt.plural(len(held.labels), 'source')} with a key "
                f"and a value, and {fmt.plural(len(held.queries), 'query', 'queries')}. "
                "Given vectors, not learned meanings. Every number below is recomputed with "
                "plain Python floats and left-to-right sums from 0.0, the arithmetic of attnlab's "
                "engine, so it matches the page exactly.",
            ),
            (
                "markdown",
                f"## The explorer: {_md(explorer_label(held)['text'])}\n\n"
                "The same program as the page's *Read the same calculation in Python* panel.",
            ),
            ("code", to_python(trace)),
            (
                "markdown",
                "## The held sequence\n\nEach row r is token r's query over every source's key and "
                "value; the mask (True = may attend) blocks sources for that row.",
            ),
            ("code", _ATTEND),
            ("code", inputs),
            ("code", rows),
            ("markdown", "## Every number at full precision (JSON)"),
            ("code", final),
        ]
    )


def new_notebook(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    """Return a Python 3 notebook (nbformat v4) of ``("markdown" | "code", source)`` cells."""
    # Imported here, not at module level: nbformat pulls in jsonschema (tens of ms),
    # which the server must not pay at start-up for a button few learners press.
    from nbformat import v4

    new_cell = {"markdown": v4.new_markdown_cell, "code": v4.new_code_cell}
    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [new_cell[kind](source) for kind, source in cells]
    return nb


def notebook_json(nb: nbformat.NotebookNode) -> str:
    """Return ``nb`` as ``.ipynb`` JSON text, validated by nbformat."""
    import nbformat

    nbformat.validate(nb)
    return nbformat.writes(nb)


def notebook_text(held: Held) -> str:
    """Return the notebook as ``.ipynb`` JSON text (validated by nbformat)."""
    return notebook_json(to_notebook(held))
