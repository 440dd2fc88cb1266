"""What a connection lab asks of a model, and what comes back: plain data the model worker and the lab share.

:class:`Ask` names a run (``"kv"``, ``"speculate"``, ...), a model and its arguments (plain,
hashable: equal asks are one job); :class:`Measured` is its answer (done with data, waiting at a
place in the line, or failed). The lab makes asks from a lab's controls and words what comes back
(:mod:`attnlab.lab.connections.live`); the models answer them (:mod:`attnlab.models.labs.runs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def _frozen(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return tuple(_frozen(v) for v in x)
    return x


@dataclass(frozen=True)
class Ask:
    """Model work: run ``run`` with ``model`` on ``arguments`` (name, value pairs: plain, hashable).

    ``field`` is the control whose text the model reads, where a refusal of that
    text is shown (``""``: none).
    """

    run: str
    model: str
    arguments: tuple[tuple[str, Any], ...] = ()
    field: str = ""

    @property
    def args(self) -> dict[str, Any]:
        return dict(self.arguments)


def ask(run: str, model: str, *, field: str = "", **arguments: Any) -> Ask:
    """An :class:`Ask`; lists among ``arguments`` become tuples (so equal asks are equal)."""
    return Ask(run, model, tuple(sorted((k, _frozen(v)) for k, v in arguments.items())), field)


@dataclass(frozen=True)
class Measured:
    """What came back for one :class:`Ask` (see the module docstring)."""

    status: str  # "done", "waiting" or "failed"
    data: Any = None
    stage: str = ""  # waiting: "queued", "loading" or "running"
    place: int | None = None  # waiting: 0 = at the model now, n = n-th in line
    done: int = 0
    total: int = 0
    unit: str = ""  # what done and total count: "layer", "trace" or "step"
    title: str = ""  # the model's title, as the page names it
    message: str = ""  # failed: why, a sentence in the lab's words (a waiting run: a busy line's words)
    problem: str = ""  # failed: what is wrong with the model itself, said after its title
