"""A generation step as the page shows it (lab/realmodel/nexttoken.py): the lab prints every p."""

from __future__ import annotations

from attnlab.lab.realmodel.nexttoken import step_display


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
    assert [t["p_display"] for t in shown["top"]] == ["77%", "<1%"]
    assert [t["cell"] for t in shown["top"]] == ["77% (drawn)", "<1%"]
