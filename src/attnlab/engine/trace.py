"""Named intermediates of a computation, so a view can draw any of them.

A :class:`Trace` maps names to arrays in the order they were computed.
Nested steps use dotted names: a block's trace holds ``"attn.q"``,
``"attn.weights"``, ``"mlp.hidden"`` and so on; ``trace.child("attn")``
returns the sub-trace with the prefix removed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from attnlab.engine._arrays import shape_of


class Trace(Mapping):
    """Read-only, ordered ``name -> array`` mapping of a computation's steps."""

    __slots__ = ("_entries",)

    def __init__(self, *, entries: tuple[tuple[str, Any], ...] = ()) -> None:
        names = [name for name, _ in entries]
        if len(set(names)) != len(names):
            raise ValueError(f"trace names repeat: {names}")
        self._entries = dict(entries)

    def __getitem__(self, name: str) -> Any:
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(f"no step {name!r} in this trace; it has {list(self)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}: {s}" for n, s in self.shapes().items())
        return f"Trace({inner})"

    def shape(self, name: str) -> tuple[int, ...]:
        """Return the shape of step ``name``."""
        return shape_of(self[name])

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Return ``{name: shape}`` for every step, in computation order."""
        return {name: shape_of(value) for name, value in self._entries.items()}

    def child(self, prefix: str) -> Trace:
        """Return the steps named ``prefix.*`` with the prefix removed."""
        head = prefix + "."
        return Trace(
            entries=tuple((n[len(head) :], v) for n, v in self._entries.items() if n.startswith(head))
        )


class TraceBuilder:
    """Collect steps while computing; ``build()`` freezes them into a :class:`Trace`.

    A disabled builder (``TraceBuilder(enabled=False)``) ignores every call, so
    the computing code records unconditionally and pays nothing when no trace
    was asked for.
    """

    __slots__ = ("_entries", "enabled")

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self._entries: list[tuple[str, Any]] = []

    def add(self, name: str, value: Any) -> None:
        if self.enabled:
            self._entries.append((name, value))

    def extend(self, prefix: str, trace: Trace | None) -> None:
        if self.enabled and trace is not None:
            self._entries.extend((f"{prefix}.{n}", v) for n, v in trace.items())

    def build(self) -> Trace | None:
        return Trace(entries=tuple(self._entries)) if self.enabled else None
