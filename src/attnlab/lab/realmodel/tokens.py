"""How a real token is shown: whitespace and unprintable characters made visible.

A real token can be a space, a line break, a tab or a control character; shown
as it is, it is a blank chip ("Top 5 sources:  76%"). :func:`token_label` gives
every surface one visible label and keeps the exact text for the hover title:

- ``" "`` → ``␣``, ``"\\n"`` → ``⏎``, ``"\\t"`` → ``⇥``;
- any other character ``str.isprintable`` refuses (controls, format marks such
  as U+200F, separators other than the space) → ``⟨U+XXXX⟩``;
- a label that would start with a combining mark gets a ``◌`` to sit on;
- the empty string → ``⟨empty⟩``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from attnlab.engine.single import MAX_LABEL_LENGTH

_VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥"}
EMPTY = "⟨empty⟩"
BASE = "◌"  # U+25CC, the dotted circle a lone combining mark is drawn on
SHORT = 14  # characters of a label on a picture's axis: longer ones end in "…"


def _char(ch: str) -> str:
    if ch in _VISIBLE:
        return _VISIBLE[ch]
    if not ch.isprintable():
        return f"⟨U+{ord(ch):04X}⟩"
    return ch


def token_label(text: str) -> dict[str, str]:
    """``{"label": what a chip shows, "exact": the token's text}`` for one token."""
    if text == "":
        return {"label": EMPTY, "exact": text}
    label = "".join(_char(ch) for ch in text)
    if unicodedata.combining(label[0]):
        label = BASE + label
    return {"label": label, "exact": text}


def token_labels(texts: Iterable[str]) -> list[dict[str, str]]:
    """:func:`token_label` of each text, in order."""
    return [token_label(t) for t in texts]


def row_label(index: int, text: str) -> str:
    """A token's unique row label for the explorer's row: ``"3 ␣cat"``, ``"4 ⏎"`` (32 characters at most)."""
    return f"{index} {token_label(text)['label']}"[:MAX_LABEL_LENGTH]


def short_label(label: str, width: int = SHORT) -> str:
    """``label`` cut to ``width`` characters, the last of them "…" when it is longer."""
    return label if len(label) <= width else label[: width - 1] + "…"


def trace_tokens(tokens: list[str], labels: list[str]) -> list[dict]:
    """Each token of a trace as the page lists it: its row label (``"4 ⏎"``), the label cut for a
    picture's axis (``short``), its exact text (the hover title) and the next-token picker's text."""
    return [{"index": i, "label": label, "short": short_label(label), "exact": t, "after": f"after {label}"}
            for i, (t, label) in enumerate(zip(tokens, labels))]  # fmt: skip
