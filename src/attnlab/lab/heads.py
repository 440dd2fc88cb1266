"""A head's name, one spelling everywhere: ``L18 H6`` written, ``Layer 18, head 6`` spoken.

The written name labels tables, bars, cells and the heads field's examples; the spoken
form is what a title or a screen reader says in full. A learner may type a head with
or without the space (``L18H6``); every name the lab shows has it.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["FORMAT", "head_name", "head_spoken", "heads_named"]

FORMAT = "L<layer> H<head>"  # how the heads field asks for a head


def head_name(layer: int, head: int) -> str:
    """``"L18 H6"``."""
    return f"L{layer} H{head}"


def head_spoken(layer: int, head: int) -> str:
    """``"Layer 18, head 6"``."""
    return f"Layer {layer}, head {head}"


def heads_named(heads: Iterable[tuple[int, int]]) -> str:
    """``"L18 H6, L17 H4"``."""
    return ", ".join(head_name(layer, head) for layer, head in heads)
