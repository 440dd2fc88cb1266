"""The lines of `attnlab heads`, `logits` and `generate` (lab/realmodel/command.py)."""

from __future__ import annotations

import numpy as np

from attnlab.lab.realmodel.command import (
    LOGITS_HEADER,
    finished,
    head_rows,
    heads_heading,
    layer_rows,
    logits_row,
    token_name,
)
from attnlab.models.traces import ModelTrace


def test_a_token_is_named_as_the_page_shows_it_with_its_index():
    assert token_name(0, "[CLS]") == "0:[CLS]"
    assert token_name(3, " sat") == "3:␣sat" and token_name(4, "\n") == "4:⏎" and token_name(5, "\t") == "5:⇥"
    assert token_name(7, " understanding") == "7:␣unders…"  # the label cut to 8 characters


def _trace() -> ModelTrace:
    w = np.array([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.5, 0.125, 0.375]], dtype=np.float32)
    return ModelTrace(model="toy", tokens=["The", " cat", "\n"], ids=[0, 1, 2],
                      allowed=np.tril(np.ones((3, 3), dtype=bool)), weights=w[None, None], scale=0.5,
                      kv_groups=[[0]])  # fmt: skip


def test_a_heads_table_prints_every_share_the_blocked_ones_as_dots_and_the_top_source():
    heading, rows = head_rows(_trace(), 0, 0)
    assert heading.startswith("head 0 of 0..0: ")
    assert rows == [
        ["query \\ key", "0:The", "1:␣cat", "2:⏎", "top source"],
        ["0:The", "1", ".", ".", "0:The 100%"],
        ["1:␣cat", "0.25", "0.75", ".", "1:␣cat 75%"],
        ["2:⏎", "0.5", "0.12", "0.38", "0:The 50%"],
    ]
    table, note = layer_rows(_trace(), 0)
    assert table[0][:2] == ["head", "kind (score)"] and "first = mean share on token 0 (0:The)" in note


def test_the_other_lines():
    assert heads_heading(title="all-MiniLM-L6-v2", n_tokens=9, layer=2, n_layer=6) == (
        "all-MiniLM-L6-v2: 9 tokens, layer 2 of 0..5"
    )
    entry = {"rank": 1, "token_label": "␣Paris", "id": 7042, "logit_display": "17.2",
             "p_model_display": "61%", "p_display": "83%"}  # fmt: skip
    assert dict(zip(LOGITS_HEADER, logits_row(entry))) == {
        "rank": "1", "token": "␣Paris", "id": "7042", "logit": "17.2", "p (model)": "61%", "p": "83%"
    }  # fmt: skip
    assert finished(None) == "[length]" and finished("end_of_turn") == "[end_of_turn]"
