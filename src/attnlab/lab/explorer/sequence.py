"""The held example: the page's one example, its mask and its edit rules.

It has S sources (1 to ``MAX_SOURCES``), each with a key and a value (2
coordinates each), and either a *sequence* around them (T = S queries, one per
token: the A/B/C sequence the page starts with) or *one query* (T = 1: an
example of the learner's own, or a transformer head's row). Row r is query r
attending over every source's key and value. Shapes: ``queries`` is T x d_k,
``keys`` S x d_k, ``values`` S x d_v and ``mask`` T x S, d_k = d_v = 2 (the
planes are 2-D). ``scale`` multiplies the dot products (None: divide by sqrt(d_k)).

Mask polarity: ``mask[r][i] is True`` means row r may attend to source i. The
starting mask is causal (top-left: row r sees sources 0..r). Every row must
keep at least one allowed source; a change that would empty a row is refused
with :class:`MaskRefused` and the previous mask is kept.

The explorer shows one row: either row r *masked* (its mask row as
``allowed``) or the *unmasked projection* (every source allowed, which is not
the masked sequence output). An example of one query always shows its one row
with its mask. The page's edit rules, implemented by :func:`apply_edit`:

- a query edit in the explorer changes row 0's query and returns the explorer
  to row 0's unmasked projection (an example of one query keeps its mask);
- a value edit is shared by every row (values belong to sources, not rows);
- other rows' queries and the held mask stay unchanged by both;
- Reset restores only row 0's query and the first value's x coordinate; an
  example of one query is replaced by the worked A/B/C sequence.

A whole new example (the worked one, an import, an example of one's own) is
not an edit: it is a new held example, validated by :func:`held_from_dict`.

Every number comes from :func:`attnlab.engine.trace_query`; what the page draws
for the held example is ``lab.explorer.view``, its words ``lab.explorer.texts``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from numbers import Real

from attnlab.engine.errors import FieldError, Loc
from attnlab.engine.single import QueryTrace, trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.examples import WORKED_SEQUENCE
from attnlab.lab.limits import MAX_MAGNITUDE, MAX_SOURCES, bound

WIDTH = 2

Vector = tuple[float, ...]


class MaskRefused(FieldError):
    """A mask change that would leave a row with nothing allowed (located at ``allowed``)."""

    type = "mask_refused"


@dataclass(frozen=True, kw_only=True)
class Held:
    """The held example and which row the explorer shows.

    ``row`` is the explorer's row; ``masked`` False means the unmasked
    projection (all sources allowed), True the masked row. ``queries`` has one
    row per source (a sequence) or a single row (one query, always shown with
    its mask row). ``scale`` multiplies q·k (None: divide by sqrt(d_k)).
    """

    id: str
    labels: tuple[str, ...]
    queries: tuple[Vector, ...]
    keys: tuple[Vector, ...]
    values: tuple[Vector, ...]
    mask: tuple[tuple[bool, ...], ...]
    row: int = 0
    masked: bool = False
    scale: float | None = None

    @property
    def sequence(self) -> bool:
        """True when the sources have a sequence around them (one query per token)."""
        return len(self.queries) > 1

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "labels": list(self.labels),
            "queries": [list(q) for q in self.queries],
            "keys": [list(k) for k in self.keys],
            "values": [list(v) for v in self.values],
            "mask": [list(r) for r in self.mask],
            "row": self.row,
            "masked": self.masked,
            "scale": self.scale,
        }

    def row_trace(self, r: int) -> QueryTrace:
        """Return row ``r`` masked: its query over every source, ``allowed`` = mask row."""
        return trace_query(
            self.queries[r], self.keys, self.values, labels=self.labels, allowed=self.mask[r],
            scale=self.scale,
        )

    def explorer_trace(self) -> QueryTrace:
        """Return what the explorer shows: the masked row or the unmasked projection."""
        allowed = self.mask[self.row] if self.masked or not self.sequence else None
        return trace_query(
            self.queries[self.row], self.keys, self.values, labels=self.labels, allowed=allowed,
            scale=self.scale,
        )


# --- validation -------------------------------------------------------------
# Errors are FieldErrors located at the held example's fields (``("keys", 2, 1)``);
# the edit functions locate at their own arguments and apply_edit adds ``edit``.


def _number(x: object, loc: Loc) -> float:
    if isinstance(x, bool) or not isinstance(x, Real):
        raise FieldError(loc, f"must be a number, not {type(x).__name__}")
    value = float(x)
    if not math.isfinite(value):
        raise FieldError(loc, f"is {value!r}; every number must be finite")
    if abs(value) > MAX_MAGNITUDE:
        limit = MAX_MAGNITUDE if value > 0 else -MAX_MAGNITUDE
        raise FieldError(loc, f"must be {'at most' if value > 0 else 'at least'} {bound(limit)}")
    return value


def _vector(x: object, loc: Loc, width: int, kind=_number) -> tuple:
    if not isinstance(x, (list, tuple)):
        raise FieldError(loc, f"must be a list, not {type(x).__name__}")
    if len(x) != width:
        raise FieldError(loc, f"has {fmt.plural(len(x), 'entry', 'entries')}; it needs {width}")
    return tuple(kind(c, (*loc, j)) for j, c in enumerate(x))


def _rows(x: object, field: str, n: int, width: int, kind=_number) -> tuple:
    if not isinstance(x, (list, tuple)):
        raise FieldError(field, f"must be a list of {n} rows, not {type(x).__name__}")
    if len(x) != n:
        raise FieldError(field, f"has {fmt.plural(len(x), 'row')}; the held example has {n}")
    return tuple(_vector(row, (field, i), width, kind) for i, row in enumerate(x))


def _queries(x: object, n: int) -> tuple:
    """One query (an example of its own) or one per source (a sequence)."""
    if isinstance(x, (list, tuple)) and len(x) == 1:
        return _rows(x, "queries", 1, WIDTH)
    if isinstance(x, (list, tuple)) and len(x) != n:
        raise FieldError(
            "queries", f"has {fmt.plural(len(x), 'row')}; the held example has {fmt.plural(n, 'source')}, "
            f"so it takes 1 query or one per source ({n})"
        )
    return _rows(x, "queries", n, WIDTH)


def _scale(x: object) -> float | None:
    if x is None:
        return None
    value = _number(x, ("scale",))
    if not value > 0:
        raise FieldError("scale", f"is {value!r}; it must be more than 0")
    return value


def _flag(x: object, loc: Loc | str) -> bool:
    if not isinstance(x, bool):
        loc = (loc,) if isinstance(loc, str) else loc
        raise FieldError(loc, f"must be true or false, not {x!r:.40}")
    return x


def _check_mask(held: Held) -> None:
    for r, row in enumerate(held.mask):
        if not any(row):
            raise FieldError(
                ("mask", r),
                f"allows no source in {_row_name(held, r)}; a row needs at least one, "
                "since with nothing allowed there is nothing to share",
            )


def _check_rows(held: Held) -> Held:
    """Trace every row, masked and unmasked: scores or outputs that overflow are refused here.

    The engine locates an error at its own argument; row r's ``q`` is
    ``queries[r]`` and its ``allowed`` is ``mask[r]`` here.
    """
    for r in range(len(held.queries)):
        try:
            held.row_trace(r)
            trace_query(held.queries[r], held.keys, held.values, scale=held.scale)
        except FieldError as err:
            head = {"q": ("queries", r), "allowed": ("mask", r)}.get(err.loc[0], err.loc[:1])
            raise err.rebased(err.loc[:1], head) from None
    return held


def held_from_dict(data: object) -> Held:
    """Validate plain data (e.g. an imported file) into a :class:`Held`.

    Raises ``FieldError`` located at the first offending field (``()`` when
    ``data`` is not an object at all).
    """
    if not isinstance(data, dict):
        raise FieldError((), f"must be an object, not {type(data).__name__}")
    for field in ("labels", "queries", "keys", "values", "mask"):
        if field not in data:
            raise FieldError(field, "is missing; an exported example always has it.")
    ident = data.get("id", "custom")
    if not isinstance(ident, str) or not 0 < len(ident) <= 64 or not ident.isprintable():
        raise FieldError("id", "must be a printable string of 1 to 64 characters")
    labels = data["labels"]
    if not isinstance(labels, (list, tuple)) or not 1 <= len(labels) <= MAX_SOURCES:
        raise FieldError("labels", f"must be a list of 1 to {MAX_SOURCES} strings")
    n = len(labels)
    # The engine's label rules (printable, distinct, at most 32 characters), located at labels[i].
    trace_query([0.0], [[0.0]] * n, [[0.0]] * n, labels=labels)
    queries = _queries(data["queries"], n)
    held = Held(
        id=ident,
        labels=tuple(labels),
        queries=queries,
        keys=_rows(data["keys"], "keys", n, WIDTH),
        values=_rows(data["values"], "values", n, WIDTH),
        mask=_rows(data["mask"], "mask", len(queries), n, kind=_flag),
        row=data.get("row", 0),
        masked=data.get("masked", False),
        scale=_scale(data.get("scale")),
    )
    if isinstance(held.row, bool) or not isinstance(held.row, int):
        raise FieldError("row", "must be a whole number")
    if not 0 <= held.row < len(queries):
        raise FieldError("row", f"is {held.row}; it must be 0 to {len(queries) - 1}")
    _flag(held.masked, "masked")
    _check_mask(held)
    return _check_rows(held)


STARTING = held_from_dict(WORKED_SEQUENCE.to_dict())
"""The A/B/C sequence as the page starts it (causal mask, explorer on row 0)."""


# --- the edit rules ----------------------------------------------------------


def edit_query(held: Held, q: object) -> Held:
    """Set row 0's query and return the explorer to row 0's unmasked projection."""
    q_ = _vector(q, ("q",), WIDTH)
    new = (q_,) + held.queries[1:]
    return _check_rows(replace(held, queries=new, row=0, masked=held.masked and not held.sequence))


def edit_value(held: Held, source: object, coord: object, x: object) -> Held:
    """Set ``values[source][coord]``; shared by every row, nothing else changes."""
    i = _index(source, "source", len(held.labels))
    j = _index(coord, "coord", WIDTH)
    v = list(held.values[i])
    v[j] = _number(x, ("x",))
    values = held.values[:i] + (tuple(v),) + held.values[i + 1 :]
    return _check_rows(replace(held, values=values))


def set_values(held: Held, values: object) -> Held:
    """Replace every value at once (the explorer's value fields); nothing else changes."""
    return _check_rows(replace(held, values=_rows(values, "values", len(held.labels), WIDTH)))


def set_mask_cell(held: Held, row: object, source: object, allowed: object) -> Held:
    """Allow or block one cell; refuse (``MaskRefused``) a change that empties a row."""
    r = _index(row, "row", len(held.queries))
    i = _index(source, "source", len(held.labels))
    ok = _flag(allowed, "allowed")
    cells = list(held.mask[r])
    cells[i] = ok
    if not any(cells):
        raise MaskRefused(
            "allowed",
            f"Blocking {held.labels[i]} would leave {_row_name(held, r)} with no "
            "allowed source, so there would be nothing to share. The mask is unchanged."
        )
    mask = held.mask[:r] + (tuple(cells),) + held.mask[r + 1 :]
    return replace(held, mask=mask)


def select_row(held: Held, row: object, masked: object = True) -> Held:
    """Show row ``row`` in the explorer, masked (default) or as the unmasked projection."""
    return replace(held, row=_index(row, "row", len(held.queries)), masked=_flag(masked, "masked"))


def reset(held: Held) -> Held:
    """Restore row 0's query and the first value's x coordinate only.

    Everything else held (other rows' queries, the other value coordinates,
    keys, labels, the mask) stays as it is; the explorer returns to row 0's
    unmasked projection because the query changed. An example of one query
    (no sequence around it) is replaced by the worked A/B/C sequence.
    """
    if not held.sequence:
        return STARTING
    v0 = (STARTING.values[0][0],) + held.values[0][1:]
    return _check_rows(
        replace(
            held,
            queries=(STARTING.queries[0],) + held.queries[1:],
            values=(v0,) + held.values[1:],
            row=0,
            masked=False,
        )
    )


def _row_name(held: Held, r: int) -> str:
    """``row 0 (A)`` in a sequence; ``the query`` in an example of one query."""
    return f"row {r} ({held.labels[r]})" if held.sequence else "the query"


EDITS = ("query", "value", "values", "mask", "select", "reset")


def apply_edit(held: Held, edit: dict) -> Held:
    """Apply one edit given as data: ``{"kind": "query", "q": [x, y]}`` and so on.

    Kinds: ``query`` (q), ``value`` (source, coord, x), ``values`` (values),
    ``mask`` (row, source, allowed), ``select`` (row, masked), ``reset``.
    """
    kind = edit.get("kind")
    try:
        if kind == "query":
            return edit_query(held, edit.get("q"))
        if kind == "value":
            return edit_value(held, edit.get("source"), edit.get("coord"), edit.get("x"))
        if kind == "values":
            return set_values(held, edit.get("values"))
        if kind == "mask":
            return set_mask_cell(held, edit.get("row"), edit.get("source"), edit.get("allowed"))
        if kind == "select":
            return select_row(held, edit.get("row"), edit.get("masked", True))
        if kind == "reset":
            return reset(held)
    except FieldError as err:  # located at the edit's own fields: edit.q[1], edit.allowed
        raise err.within("edit") from None
    raise FieldError(("edit", "kind"), f"is {kind!r:.40}; it must be one of {', '.join(EDITS)}")


def _index(x: object, field: str, n: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise FieldError(field, f"must be a whole number, not {x!r:.40}")
    if not 0 <= x < n:
        raise FieldError(field, f"is {x}; it must be 0 to {n - 1}")
    return x


__all__ = [
    "EDITS",
    "STARTING",
    "Held",
    "MaskRefused",
    "apply_edit",
    "edit_query",
    "edit_value",
    "held_from_dict",
    "reset",
    "select_row",
    "set_mask_cell",
    "set_values",
]
