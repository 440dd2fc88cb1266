"""A generation step as the page shows it (lab/realmodel/nexttoken.py): the lab prints every p."""

from __future__ import annotations

import numpy as np

from attnlab.lab.realmodel.nexttoken import cut_words, next_token, step_display, view_words
from attnlab.models.sampling import Sampling


def test_a_step_prints_each_p_and_makes_its_tokens_visible():
    # the worker sends numbers only (models/work.py's step_of): no display strings
    step = {
        "index": 0, "id": 7, "token": " Paris", "logit": 9.5, "p": 0.7712,
        "top": [{"id": 7, "token": " Paris", "logit": 9.5, "p": 0.7712},
                {"id": 9, "token": "\n", "logit": 2.0, "p": 0.004}],
    }  # fmt: skip
    shown = step_display(step)
    assert (shown["label"], shown["exact"], shown["p_display"]) == ("␣Paris", " Paris", "77%")
    assert shown["drawn"] == "drawn with p 77%"
    # a small p keeps two significant digits (once "<1%")
    assert [t["p_display"] for t in shown["top"]] == ["77%", "0.40%"]
    assert [t["cell"] for t in shown["top"]] == ["77% (drawn)", "0.40%"]


def test_at_top_k_1_one_token_is_kept_and_the_verb_agrees():
    # the "1 tokens are kept" (next token at top-k 1)
    row = np.array([3.0, 1.0, 0.5, -2.0])
    view = next_token(row, Sampling(temperature=1.0, top_k=1), decode=lambda i: f"t{i}", top=4, actual=1,
                      context="0 ␣a")  # fmt: skip
    kept = view["words"]["kept"]
    assert kept["claims"]["kept"] == 1
    assert kept["text"].startswith("1 token is kept, holding ")
    top_k = view["removed"][1]["words"]
    assert top_k["claims"]["count"] == 3 and "removed 3 tokens holding" in top_k["text"]
    one = cut_words("top_k", 2, count=1, mass=0.004, off=False)["text"]
    assert one.startswith("Top-k 2 removed 1 token holding 0.40% of the tempered probability")
    words = view_words(context="0 ␣a", vocab=4, kept=2, kept_mass=0.9, shown=1, actual=None)
    assert (words["kept"]["text"], words["caption"], words["more"]) == (
        "2 tokens are kept, holding 90% of the model's own probability.", "The likeliest next token",
        "0 more tokens",
    )
