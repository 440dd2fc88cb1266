"""Token labels: whitespace and unprintable characters shown visibly, the exact text kept."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab.realmodel.query import query_row, row_labels
from attnlab.lab.realmodel.tokens import row_label, short_label, token_label, token_labels, trace_tokens
from attnlab.models.traces import ModelTrace


@pytest.mark.parametrize(
    "text, label",
    [
        (" Paris", "␣Paris"),
        (" ", "␣"),
        ("\n", "⏎"),
        ("\n\n", "⏎⏎"),
        ("\t", "⇥"),
        ("\x07", "⟨U+0007⟩"),
        ("\r\n", "⟨U+000D⟩⏎"),
        ("\u200f", "⟨U+200F⟩"),
        ("\u00a0", "⟨U+00A0⟩"),
        ("\u0301", "◌\u0301"),
        ("", "⟨empty⟩"),
        ("cat", "cat"),
        ("😀", "😀"),
        ("שלום", "שלום"),
    ],
)
def test_a_token_label_shows_whitespace_and_controls_visibly(text, label):
    assert token_label(text) == {"label": label, "exact": text}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12))
def test_every_label_is_printable_non_blank_and_keeps_the_exact_text(text):
    made = token_label(text)
    assert made["exact"] == text
    assert made["label"].isprintable() and made["label"].strip() == made["label"] != ""
    assert token_labels([text, text]) == [made, made]


def _trace(tokens: list[str]) -> ModelTrace:
    n, d = len(tokens), 4
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 1, n, d)).astype(np.float32) for _ in "qkv")
    allowed = np.tril(np.ones((n, n), bool))
    w = np.where(allowed, 1.0, 0.0) / allowed.sum(-1, keepdims=True)
    return ModelTrace(
        model="smollm2", tokens=tokens, ids=list(range(n)), weights=w[None, None].astype(np.float32),
        allowed=allowed, scale=0.5, kv_groups=[[0]], q=q, k=k, v=v,
    )  # fmt: skip


def test_a_traces_labels_are_visible_and_every_query_after_a_line_break_opens():
    tokens = ["The", " cat", "\n", "\t", " ", "\x07", "sat"]
    trace = _trace(tokens)
    assert row_labels(trace) == ["0 The", "1 ␣cat", "2 ⏎", "3 ⇥", "4 ␣", "5 ⟨U+0007⟩", "6 sat"]
    for query in range(len(tokens)):
        row = query_row(trace, 0, 0, query)
        assert row.labels == tuple(row_labels(trace))


def test_a_traces_tokens_carry_their_label_its_short_form_and_their_exact_text():
    tokens = [" cat", "\n", " extraordinarily"]
    labels = [row_label(i, t) for i, t in enumerate(tokens)]
    shown = trace_tokens(tokens, labels)
    assert [t["label"] for t in shown] == ["0 ␣cat", "1 ⏎", "2 ␣extraordinarily"]
    assert [t["short"] for t in shown] == ["0 ␣cat", "1 ⏎", "2 ␣extraordin…"]  # 14 characters at most
    assert [t["exact"] for t in shown] == tokens and shown[1]["after"] == "after 1 ⏎"
    assert short_label("abc", 3) == "abc" and short_label("abcd", 3) == "ab…"
