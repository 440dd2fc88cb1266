"""The Circuits page's words: every marker of circuits.html filled, the pickers, a text's positions."""

from __future__ import annotations

import re
from pathlib import Path

import attnlab.web
from attnlab.lab.circuits.page import FILLS, circuits_page, model_choices, text_positions
from attnlab.lab.page import shared_fills

PAGE = Path(attnlab.web.__file__).parent / "static" / "circuits.html"


def test_every_marker_of_the_page_has_its_words_and_every_word_a_marker():
    markers = set(re.findall(r"<!-- fill:([a-z_]+) -->", PAGE.read_text(encoding="utf-8")))
    assert markers == set(FILLS) | set(shared_fills())
    served = circuits_page()
    assert served["fills"] == {**shared_fills(), **FILLS}
    assert {"http", "circuits"} <= set(served["words"])
    assert served["words"]["circuits"]["retry"] == "{message} Trying again in {seconds} s…"


def test_the_pickers_name_each_layer_and_head_and_say_what_an_encoder_lacks():
    smol = {"name": "smollm2", "title": "SmolLM2", "decoder": True, "n_layer": 2,
            "kv_groups": [[0, 1], [2, 3]]}  # fmt: skip
    mini = {"name": "minilm", "title": "MiniLM", "decoder": False, "n_layer": 1, "kv_groups": [[0], [1]]}
    d, e = model_choices([smol, mini])
    assert d["layers"] == [{"value": 0, "label": "layer 0"}, {"value": 1, "label": "layer 1"}]
    assert [h["label"] for h in d["heads"]] == [
        "head 0 (KV head 0)", "head 1 (KV head 0)", "head 2 (KV head 1)", "head 3 (KV head 1)"]  # fmt: skip
    assert [h["label"] for h in e["heads"]] == ["head 0", "head 1"]
    assert d["views"] == ["census", "ablation", "patching", "lens", "head"] and d["note"] == ""
    assert e["views"] == ["census", "ablation", "patching", "head"]
    assert e["note"].startswith("MiniLM is an encoder: no next token, so no logit lens and no logit")
    assert [s["score"] for s in d["scores"]] == ["induction", "previous", "first", "duplicate", "breadth"]


def test_a_texts_positions_are_listed_as_the_rows_are_named():
    out = text_positions(model="smollm2", tokens=["The", " cat", "\n"], cap=256, title="SmolLM2")
    assert out["positions"] == [{"value": 0, "label": "0 The", "exact": "The"},
                                {"value": 1, "label": "1 ␣cat", "exact": " cat"},
                                {"value": 2, "label": "2 ⏎", "exact": "\n"}]  # fmt: skip
    assert out["last"] == 2 and out["message"] == "3 of 256 tokens" and out["fits"] is True
    over = text_positions(model="m", tokens=["a"] * 5, cap=4, title="M")
    assert over["fits"] is False
    assert over["message"] == "5 tokens, and M takes at most 4 here: shorten it by 1."
