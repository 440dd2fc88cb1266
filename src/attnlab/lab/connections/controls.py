"""A connection lab's controls: what the learner may set, read from a link or a request, in the page's words.

Each lab declares its inputs once as :class:`Control`\\ s (a slider of whole
numbers or of numbers, a choice, or a text: one line, or several, one item a
line). :func:`read` turns what arrived (a page link's query, ``?n=64&tile=16``,
or a request's ``inputs`` object) into the lab's values, every missing one at
its default, and refuses the rest with a :class:`ControlError` located at the
field (``("query", "tile")``) whose problem never names it: the page names it with the control's own label
(``Tile size must be at most 64, the sequence length n``). :func:`views`
describes the controls for the page, :func:`link` writes the shareable link.

A control whose largest value follows another control (``hi_from="n"``: the
tile is at most n) says so, and the page sets its slider's maximum from that
control's value, so a slider never offers what the lab refuses. A default may
follow the values read before it (``default=lambda v: min(16, v["n"])``), so a
link naming only ``n`` still reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from attnlab.engine.errors import FieldError, Loc
from attnlab.lab import numbers as fmt
from attnlab.lab.fields import half_character
from attnlab.lab.limits import bound
from attnlab.lab.realmodel.problems import empty_text

Value = int | float | str


class ControlError(FieldError):
    """A control's value the lab refuses, with the control's label: the page's name for the field."""

    def __init__(self, loc: str | Loc, problem: str, *, label: str = "", **refs: Loc) -> None:
        super().__init__(loc, problem, **refs)
        self.label = label

    def rebased(self, old: Loc, new: Loc) -> ControlError:
        moved = super().rebased(old, new)
        moved.label = self.label
        return moved

    def item(self, prefix: Loc = ()) -> dict:
        """The API's error item: ``loc`` under ``prefix`` (``("body",)`` for a request body's field),
        ``field`` the control's name (how the page finds it), ``msg`` in the page's words."""
        return {
            "loc": [*prefix, *self.loc],
            "field": str(self.loc[-1]) if self.loc else "body",
            "msg": f"{self.label} {self.problem}",
            "type": "value_error",
        }


@dataclass(frozen=True)
class Control:
    """One input of a lab.

    ``kind``: ``"whole"`` (a slider of integers), ``"number"`` (a slider of floats),
    ``"choice"`` (one of ``options``, each ``(value, text)``, or a function giving them when a
    request is read: the models on offer) or ``"text"`` (at most
    ``max_chars`` characters, not blank; with ``hi`` it is a list, one item a line, of
    ``lo`` to ``hi`` lines, blank lines left out, and ``lines_from`` names a text control
    it must have as many lines as). ``lo``/``hi`` bound a slider; ``hi_from`` names the
    control whose value (plus ``hi_offset``) is the largest this one may take.
    ``default`` is a value or a function of the values read before it (controls are read
    in order).
    """

    name: str
    label: str
    kind: str
    default: Value | Callable[[dict], Value]
    lo: float | None = None
    hi: float | None = None
    step: float = 1
    hi_from: str | None = None
    hi_offset: int = 0
    options: tuple[tuple[str, str], ...] | Callable[[], tuple[tuple[str, str], ...]] = ()
    hint: str = ""
    max_chars: int = 0
    lines_from: str | None = None

    def choices(self) -> tuple[tuple[str, str], ...]:
        """A choice's options now: ``(value, text)`` each."""
        return self.options() if callable(self.options) else self.options

    def default_for(self, values: dict) -> Value:
        return self.default(values) if callable(self.default) else self.default

    def high(self, values: dict) -> float | None:
        """The largest value allowed now (``hi``, or what ``hi_from`` allows, whichever is smaller)."""
        highs = [self.hi] if self.hi is not None else []
        if self.hi_from is not None:
            highs.append(values[self.hi_from] + self.hi_offset)
        return min(highs) if highs else None


def _number(control: Control, raw: object, loc: Loc) -> int | float:
    def refuse(problem: str) -> ControlError:
        return ControlError(loc, problem, label=control.label)

    whole = control.kind == "whole"
    example = "a whole number, such as 16" if whole else "a number, such as 0.5"
    if isinstance(raw, bool) or raw is None or isinstance(raw, (list, dict)):
        raise refuse(f"must be {example}")
    if isinstance(raw, str):
        text = raw.strip()
        if len(text) > 40:
            raise refuse(f"is too long; it must be {example}")
        try:
            raw = int(text) if whole else float(text)
        except ValueError:
            raise refuse(f"must be {example}") from None
    if whole and isinstance(raw, float):
        if not raw.is_integer():
            raise refuse(f"must be {example}")
        raw = int(raw)
    if not whole:
        raw = float(raw)
        if not math.isfinite(raw):
            raise refuse("must be a finite number, not NaN or infinity")
    return raw


def lines(text: str) -> list[str]:
    """A list control's items: its lines, each stripped, blank ones left out."""
    return [line.strip() for line in text.split("\n") if line.strip()]


def _text(control: Control, raw: object, values: dict, loc: Loc, controls: Mapping[str, Control]) -> str:
    def refuse(problem: str) -> ControlError:
        return ControlError(loc, problem, label=control.label)

    if not isinstance(raw, str):
        raise refuse("must be text, such as a sentence")
    if any("\ud800" <= ch <= "\udfff" for ch in raw):
        raise refuse(half_character())
    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    if len(text) > control.max_chars:
        raise refuse(f"has {len(text):,} characters; it takes at most {control.max_chars:,}")
    if control.hi is None:
        if not text.strip():
            raise refuse(empty_text())
        return text
    items = lines(text)
    n = len(items)
    said_n = f"{n} line{'s' if n != 1 else ''}"
    if n < control.lo:
        raise refuse(f"has {said_n}; write at least {bound(control.lo)}, one on each line")
    if n > control.hi:
        raise refuse(f"has {said_n}; it takes at most {bound(control.hi)}")
    if control.lines_from is not None:
        other = controls[control.lines_from]
        need = len(lines(values[other.name]))
        if n != need:
            what = other.label[:1].lower() + other.label[1:]
            raise refuse(f"has {said_n}; it needs {need}, one for each line of {what}")
    return "\n".join(items)


def _check(control: Control, raw: object, values: dict, loc: Loc, controls: Mapping[str, Control]) -> Value:
    if control.kind == "text":
        return _text(control, raw, values, loc, controls)
    if control.kind == "choice":
        allowed = [value for value, _ in control.choices()]
        if raw not in allowed:
            raise ControlError(loc, f"must be one of {', '.join(allowed)}", label=control.label)
        return raw
    x = _number(control, raw, loc)
    if control.lo is not None and x < control.lo:
        raise ControlError(loc, f"must be at least {bound(control.lo)}", label=control.label)
    if control.hi is not None and x > control.hi:
        raise ControlError(loc, f"must be at most {bound(control.hi)}", label=control.label)
    high = control.high(values)
    if high is not None and x > high:
        other = controls[control.hi_from]
        what = other.label[:1].lower() + other.label[1:]
        side = (
            f"{what} {'plus' if control.hi_offset > 0 else 'minus'} {abs(control.hi_offset)}"
            if control.hi_offset
            else what
        )
        raise ControlError(loc, f"must be at most {bound(high)}, the {side}", label=control.label)
    return x


def read(controls: tuple[Control, ...], given: Mapping[str, object], where: str) -> dict[str, Value]:
    """Return every control's value from ``given`` (missing ones at their defaults), in the controls' order.

    ``where`` locates the errors: ``"query"`` (a page link, values as text) or
    ``"inputs"`` (a request body's object, values as JSON). A name no control has is refused.
    """
    by_name = {c.name: c for c in controls}
    for key in given:
        if key not in by_name:
            raise ControlError(
                (where, str(key)[:40]), "is not something this lab knows; remove it", label=str(key)[:40]
            )
    values: dict[str, Value] = {}
    for c in controls:
        raw = given[c.name] if c.name in given else c.default_for(values)
        values[c.name] = _check(c, raw, values, (where, c.name), by_name)
    return values


def views(controls: tuple[Control, ...], values: dict) -> list[dict]:
    """The controls as the page builds them, each with its value now and the value's text."""
    out = []
    for c in controls:
        view: dict[str, Any] = {"name": c.name, "label": c.label, "kind": c.kind, "hint": c.hint}
        value = values[c.name]
        if c.kind == "choice":
            view["options"] = [{"value": v, "text": t} for v, t in c.choices()]
            view["value_text"] = dict(c.choices())[value]
        elif c.kind == "text":
            view |= {"max_chars": c.max_chars, "lines": int(c.hi) if c.hi is not None else 1}
            view["value_text"] = " / ".join(lines(value)) if c.hi is not None else value
        else:
            view |= {"min": c.lo, "max": c.high(values), "step": c.step, "hi_from": c.hi_from}
            view["hi_offset"] = c.hi_offset
            view["value_text"] = str(value) if c.kind == "whole" else fmt.rounded(value)
        view["value"] = value
        out.append(view)
    return out


def link(route: str, controls: tuple[Control, ...], values: dict) -> str:
    """The lab's shareable link for ``values``, every control named:
    ``/connections/flash?n=64&tile=16&...``."""
    parts = []
    for c in controls:
        value = values[c.name]
        if c.kind == "text":
            parts.append(f"{c.name}={quote(value, safe='')}")
            continue
        parts.append(f"{c.name}={value if c.kind != 'number' else fmt.precise(value)}")
    return route + "?" + "&".join(parts)
