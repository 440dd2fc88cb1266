"""``Explorer``: the page's one-query explorer (Match, Share, Mix, the words, every number) in a notebook.

Synced inputs ``q``, ``keys``, ``values``, ``labels``, ``allowed`` (True = may
attend) and ``scale`` (``None`` = divide by sqrt(d_k)); the learner's drag and
arrow keys set ``q`` in the kernel, and setting any input from Python redraws.
Each change runs the engine once (``trace_query``) and ships the same answer
``POST /api/trace`` gives the page (``lab.explorer.answer.explorer_answer``) in
``_result``; the view's fixed words (``lab.explorer.page.widget_words``) travel
once, in ``_words``.
A bad input raises the engine's ``FieldError`` (a ``ValueError`` naming the
field, e.g. ``q[0] is NaN; every number must be finite``) and keeps the old value. To
change several inputs that must agree (more sources), use :meth:`Explorer.update`.

Why a wrapper: ipywidgets keeps its list of synced trait names in
``Widget.keys``, so no widget can have a trait named ``keys``. The widget
itself is :class:`ExplorerWidget` (the sources' keys travel as
``source_keys``); :class:`Explorer` displays it and maps ``.keys`` and the
other inputs onto its traits, so reading and setting them works as on any widget.
"""

from __future__ import annotations

import traitlets

from attnlab.engine.single import QueryTrace, trace_query
from attnlab.lab.explorer.answer import explorer_answer
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.explorer.page import widget_words
from attnlab.widgets.base import LabWidget

INPUTS = ("q", "keys", "values", "labels", "allowed", "scale")
TRAIT = {name: ("source_keys" if name == "keys" else name) for name in INPUTS}  # input -> trait name


def _plain(name: str, value):
    """A trait value as JSON-ready lists (tuples and NumPy arrays become lists)."""
    if value is None:
        return None
    if name == "scale":
        return value
    if hasattr(value, "tolist"):
        value = value.tolist()
    if name in ("keys", "values"):
        return [list(row) for row in value]
    return list(value)


class ExplorerWidget(LabWidget):
    """The widget behind :class:`Explorer` (its keys are the trait ``source_keys``)."""

    VIEW = "widgets/explorer.js"
    TITLE = "attnlab · Explorer"
    CSS_FILES = ("lab.css",)

    q = traitlets.List().tag(sync=True)
    source_keys = traitlets.List().tag(sync=True)
    values = traitlets.List().tag(sync=True)
    labels = traitlets.List().tag(sync=True)
    allowed = traitlets.List().tag(sync=True)
    scale = traitlets.Float(allow_none=True, default_value=None).tag(sync=True)
    _result = traitlets.Dict().tag(sync=True)
    _words = traitlets.Dict().tag(sync=True)

    def __init__(self, *, q=None, keys=None, values=None, labels=None, allowed=None, scale=None, **kwargs):
        worked = WORKED.to_dict()
        given = {"q": q, "keys": keys, "values": values, "labels": labels}
        state = {n: _plain(n, given[n] if given[n] is not None else worked[n]) for n in given}
        if keys is not None and labels is None:
            state["labels"] = None  # the engine's A, B, C, ... for the user's own sources
        state["allowed"] = _plain("allowed", allowed)
        state["scale"] = scale
        trace = trace_query(**state)  # raises FieldError naming the field
        traits = {TRAIT[name]: value for name, value in self._filled(state, trace).items()}
        super().__init__(**traits, _result=explorer_answer(trace), _words=widget_words(), **kwargs)

    @staticmethod
    def _filled(state: dict, trace: QueryTrace) -> dict:
        """The inputs with the engine's defaults filled in (labels A, B, C; all allowed)."""
        return {**state, "labels": list(trace.labels), "allowed": list(trace.allowed)}

    def _inputs(self, **changed) -> dict:
        state = {name: getattr(self, TRAIT[name]) for name in INPUTS}
        state.update({name: _plain(name, value) for name, value in changed.items()})
        return state

    @property
    def trace(self) -> QueryTrace:
        """The engine's ``QueryTrace`` for the current inputs."""
        return trace_query(**self._inputs())

    def update(self, **changed) -> None:
        """Set several inputs at once (e.g. ``keys``, ``values`` and ``labels`` for a fourth source).

        Checked together first: on a bad input nothing changes and the
        engine's ``FieldError`` names the field.
        """
        unknown = sorted(set(changed) - set(INPUTS))
        if unknown:
            raise TypeError(f"Explorer.update() got unknown inputs: {', '.join(unknown)}")
        state = self._inputs(**changed)
        n = len(state["keys"])
        for name in ("labels", "allowed"):  # more or fewer sources: the engine's defaults
            if name not in changed and len(state[name]) != n:
                state[name] = None
        trace = trace_query(**state)
        with self.hold_trait_notifications():
            for name, value in self._filled(state, trace).items():
                setattr(self, TRAIT[name], value)

    @traitlets.validate(*TRAIT.values())
    def _check(self, proposal):
        # Each input is checked with the others as they stand (inside update(),
        # with the others' new values): the engine says what is wrong.
        name = {trait: name for name, trait in TRAIT.items()}[proposal["trait"].name]
        value = _plain(name, proposal["value"])
        trace_query(**self._inputs(**{name: value}))
        return value

    @traitlets.observe(*TRAIT.values())
    def _redraw(self, _change) -> None:
        self._result = explorer_answer(self.trace)


class _Input:
    """``Explorer.<name>``: reads and sets the widget's trait for input ``name``."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return getattr(obj.widget, TRAIT[self.name])

    def __set__(self, obj, value) -> None:
        setattr(obj.widget, TRAIT[self.name], value)


class Explorer:
    """One query through attention, drawn by the page's own Match / Share / Mix modules.

    ``Explorer(q=None, keys=None, values=None, labels=None, allowed=None, scale=None)``;
    every input left out is the worked example's (q = [2, 1] over A, B, C).
    """

    q = _Input()
    keys = _Input()
    values = _Input()
    labels = _Input()
    allowed = _Input()
    scale = _Input()

    def __init__(self, q=None, keys=None, values=None, labels=None, allowed=None, scale=None) -> None:
        self.widget = ExplorerWidget(
            q=q, keys=keys, values=values, labels=labels, allowed=allowed, scale=scale
        )

    @property
    def trace(self) -> QueryTrace:
        """The engine's ``QueryTrace`` for the current inputs."""
        return self.widget.trace

    def update(self, **changed) -> None:
        """Set several inputs at once, checked together (see :meth:`ExplorerWidget.update`)."""
        self.widget.update(**changed)

    def observe(self, handler, names=INPUTS) -> None:
        """Call ``handler(change)`` when an input changes (``change["name"]`` is the widget's trait)."""
        names = [names] if isinstance(names, str) else names
        self.widget.observe(handler, names=[TRAIT[n] for n in names])

    def to_html(self, path):
        """Write a standalone HTML snapshot with the numbers frozen (see ``LabWidget.to_html``)."""
        return self.widget.to_html(path)

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def __repr__(self) -> str:
        return f"Explorer(q={self.q!r}, labels={self.labels!r})"
