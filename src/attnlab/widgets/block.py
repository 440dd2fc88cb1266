"""``Block``: the transformer-block walk (Embed → Project → Attend → Combine → Add & Norm → MLP → Add & Norm).

Every number and word comes from ``lab.block.page.block_page`` (the same answer
the page's block section gets): the steps with every tensor, its display
strings, full-precision strings and each product's ordered sum, the choices'
labels and the section's fixed words (the view's heading and controls). Synced
inputs: ``norm`` ("pre" | "post"), ``positions`` ("none" | "sinusoidal" |
"rope"), ``heads_on`` (two booleans) and ``step`` (0-based). A bad input
raises the walk's ``FieldError`` (a ``ValueError`` naming the field) and
keeps the old value.
"""

from __future__ import annotations

import traitlets

from attnlab.lab.block.page import block_page
from attnlab.lab.block.words import WIDGET
from attnlab.widgets.base import LabWidget


class Block(LabWidget):
    """The given block example, stepped through with every number."""

    VIEW = "widgets/block.js"
    CSS_FILES = ("lab.css", "block.css")
    TITLE = WIDGET["page_title"]

    norm = traitlets.Unicode("pre").tag(sync=True)
    positions = traitlets.Unicode("none").tag(sync=True)
    heads_on = traitlets.List([True, True]).tag(sync=True)
    step = traitlets.Int(0).tag(sync=True)
    _page = traitlets.Dict().tag(sync=True)

    def __init__(self, *, norm="pre", positions="none", heads_on=(True, True), step: int = 0) -> None:
        page = block_page(norm=norm, positions=positions, heads_on=tuple(heads_on))
        super().__init__(norm=norm, positions=positions, heads_on=list(heads_on), _page=self._slim(page))
        self.step = step

    @staticmethod
    def _slim(page: dict) -> dict:
        """What the view draws: the steps, the summary and the words (the other panels stay on the page)."""
        keep = ("steps", "summary", "output_display", "choices", "words")
        return {k: page[k] for k in keep}

    @property
    def page(self) -> dict:
        """The whole ``block_page`` answer for the current inputs (every number, the Python program too)."""
        return block_page(norm=self.norm, positions=self.positions, heads_on=tuple(self.heads_on))

    @traitlets.validate("norm", "positions", "heads_on")
    def _check(self, proposal):
        args = {"norm": self.norm, "positions": self.positions, "heads_on": list(self.heads_on)}
        args[proposal["trait"].name] = proposal["value"]
        block_page(norm=args["norm"], positions=args["positions"], heads_on=tuple(args["heads_on"]))
        return proposal["value"]

    @traitlets.validate("step")
    def _step_in_range(self, proposal):
        n = len(self._page["steps"])
        value = proposal["value"]
        if isinstance(value, bool) or not 0 <= value < n:
            raise ValueError(f"step must be 0 to {n - 1}; got {value!r}")
        return value

    @traitlets.observe("norm", "positions", "heads_on")
    def _redraw(self, _change) -> None:
        self._page = self._slim(self.page)
        self.step = min(self.step, len(self._page["steps"]) - 1)
