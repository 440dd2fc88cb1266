"""Helpers for the connection labs' tests (``from labtools import ...``; ``conftest.py`` puts this folder
on ``sys.path``): run a lab's generated program, compare numbers, check a shown sentence and answer."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys

import numpy as np


def printed(source: str) -> dict:
    """Run ``source`` in a fresh interpreter; return its ``name = value`` lines as Python values."""
    done = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=120, check=True
    )
    out = {}
    for line in done.stdout.splitlines():
        name, sep, value = line.partition(" = ")
        assert sep, f"an unexpected line: {line!r}"
        out[name] = ast.literal_eval(value)
    return out


def same_numbers(a, b, rel: float = 1e-12) -> bool:
    """Whether two nests of numbers agree to ``rel`` of the largest |number| (integers exactly)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(same_numbers(a[key], b[key], rel) for key in a)
        )
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        return False
    if np.issubdtype(np.asarray(a).dtype, np.integer):
        return bool(np.array_equal(x, y))
    scale = max(1.0, float(np.max(np.abs(y)))) if y.size else 1.0
    return bool(np.all(np.abs(x - y) <= rel * scale))


def assert_printed_data(out: dict, data: dict, rel: float = 1e-12) -> None:
    """A program's lines (``printed``) are an answer's ``data``: the same names in the same order, each
    text (or None) exactly, each number to ``rel``."""
    assert list(out) == list(data)
    for name, value in data.items():
        if isinstance(value, str) or value is None:
            assert out[name] == value, name
        else:
            assert same_numbers(out[name], value, rel), name


PLURAL_ONE = re.compile(
    r"(?<![\d.,])1 (rows|tokens|weights|experts|positions|numbers|keys|tiles|slots|patches|words)\b"
)
WORD_PROBLEMS = ("  ", " .", " ,", "..", "None", "nan", "{", "}")


def assert_page_words(text: str) -> None:
    """A shown sentence: no glued or broken words, no internal names."""
    assert text and text == text.strip(), text
    for bad in WORD_PROBLEMS:
        assert bad not in text, (bad, text)
    assert not PLURAL_ONE.search(text), text


def assert_page_answer(answer: dict) -> None:
    """An answer as the page gets it: plain JSON all through (no NumPy scalar, no NaN), and each of its
    sentences clean page words."""
    json.dumps(answer, allow_nan=False)
    for w in answer["words"]:
        assert_page_words(w["text"])


def page_claims(answer: dict) -> list[dict]:
    """The claims of ``answer``'s sentences, in order, once the answer is checked as the page gets it."""
    assert_page_answer(answer)
    return [w["claims"] for w in answer["words"]]
