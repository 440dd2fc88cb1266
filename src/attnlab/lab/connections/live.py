"""A connection lab's model part: the numbers it asks a real model for, and what came back.

The lab never imports ``models``. A lab with a model part (its ``LAB.ask``) names
what its values call for as :class:`Ask`\\ s (the run, the model, plain
arguments); whoever serves the lab runs them and passes the results back in
(:func:`measured`, with the serving side's ``measure(ask) -> Measured``: the
web routes use ``models.labs.runs.measure`` on the server's job line, the CLI
runs them in its own process). The lab's ``answer``, ``program`` and ``check``
then read ``measured[run]``:

- ``done``: ``data`` holds the run's numbers (plain JSON values);
- ``waiting``: a job is queued, loading its model or running (``stage``,
  ``place``, ``done`` of ``total``); the page asks again (:func:`live`);
- ``failed``: ``message`` says why, in the lab's words.

A run absent from ``measured`` was not passed in (a lab function called on its
own): the lab draws what it can without it and says so.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.engine.errors import FieldError
from attnlab.lab.connections import registry
from attnlab.lab.connections.controls import ControlError, read
from attnlab.lab.realmodel.status import place_words
from attnlab.lab.said import said
from attnlab.models.labs.asks import Ask, Measured, ask  # noqa: F401 - the labs name them here

POLL_MS = 700  # how soon the page asks again while a run is waiting
UNITS = {"layer": ("layer", "layers"), "trace": ("text", "texts"), "step": ("step", "steps"),
         "token": ("token", "tokens")}  # fmt: skip





Measure = Callable[[Ask], Measured]


def measured(name: str, given: dict, where: str, measure: Measure) -> dict[str, Measured]:
    """Run lab ``name``'s asks for input ``given`` through ``measure``: ``{run: Measured}``.

    A lab without a model part gives ``{}``. A ``FieldError`` about the text a run
    reads (``("text",)``: too many tokens, say) is refused at the control that holds
    that text, in its own label; an input the controls refuse is refused as
    ``lab_page`` refuses it.
    """
    lab = registry.lab(name)
    if lab.ask is None:
        return {}
    values = read(lab.controls, given, where)
    out: dict[str, Measured] = {}
    for a in lab.ask(values):
        try:
            out[a.run] = measure(a)
        except FieldError as error:
            if not a.field:
                raise
            label = next(c.label for c in lab.controls if c.name == a.field)
            raise ControlError((where, a.field), error.problem, label=label) from None
    return out


def waiting(found: dict[str, Measured]) -> bool:
    return any(m.status == "waiting" for m in found.values())


def live(found: dict[str, Measured], asked: tuple[Ask, ...]) -> dict | None:
    """What the page needs to know about the model part: ``None`` for a lab without one, else its
    ``status`` ("off": nothing asked; "absent": nothing passed in; "waiting", "failed", "done") and
    whether to ask again in ``poll_ms``."""
    if not asked:
        return {"status": "off", "poll_ms": None}
    states = [found[a.run].status if a.run in found else "absent" for a in asked]
    for status in ("failed", "absent", "waiting"):
        if status in states:
            return {"status": status, "poll_ms": POLL_MS if status == "waiting" else None}
    return {"status": "done", "poll_ms": None}


def status_words(m: Measured | None, doing: str) -> dict:
    """The sentence the page shows for a run not done yet: ``doing`` says what the run does
    ("SmolLM2 generates after your prompt"), then where it stands."""
    if m is None:
        return said(
            f"{doing}: this runs where the lab is served (attnlab serve); called on its own, the lab has "
            "no model to ask.",
            status="absent",
        )
    if m.status == "failed":
        why = f"{m.title} {m.problem}." if m.problem else m.message
        return said(f"{doing}: it could not run. {why}", status="failed", message=why)
    if m.stage == "loading":
        where = f"loading {m.title} (once per server)…"
    elif m.stage == "running":
        unit = UNITS.get(m.unit, ("", ""))[m.total != 1]
        where = f"running, {m.done} of {m.total} {unit} done…".replace("  ", " ") if m.total else "running…"
    elif m.message:
        where = m.message
    elif m.place == 0:
        where = "starting…"
    else:
        where = f"waiting, {place_words(m.place)}…" if m.place else "waiting…"
    return said(f"{doing}: {where}", status=m.status, stage=m.stage, done=m.done, total=m.total)
