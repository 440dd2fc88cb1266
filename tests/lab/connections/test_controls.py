"""A lab's controls: read from a link or a body, defaults, bounds that follow another control, the words."""

from __future__ import annotations

import pytest

from attnlab.lab.connections.controls import Control, ControlError, link, read, views

CONTROLS = (
    Control("n", "Sequence length n", "whole", 64, lo=4, hi=256),
    Control("tile", "Tile size", "whole", lambda v: min(16, v["n"]), lo=1, hi_from="n"),
    Control("row", "Query row", "whole", 0, lo=0, hi_from="n", hi_offset=-1),
    Control("scale", "Sharpness", "number", 1.0, lo=0.1, hi=5.0, step=0.1),
    Control("prompt", "Text", "choice", "a", options=(("a", "a red ball"), ("b", "a blue sky"))),
)


def test_defaults_follow_the_values_read_before_them():
    assert read(CONTROLS, {}, "query") == {"n": 64, "tile": 16, "row": 0, "scale": 1.0, "prompt": "a"}
    assert read(CONTROLS, {"n": "8"}, "query")["tile"] == 8


def test_a_link_and_a_body_read_alike():
    from_link = read(CONTROLS, {"n": "32", "tile": "4", "scale": "0.5", "prompt": "b"}, "query")
    from_body = read(CONTROLS, {"n": 32, "tile": 4.0, "scale": 0.5, "prompt": "b"}, "inputs")
    assert from_link == from_body == {"n": 32, "tile": 4, "row": 0, "scale": 0.5, "prompt": "b"}


@pytest.mark.parametrize(
    "given,where,loc,msg",
    [
        ({"n": "3"}, "query", ("query", "n"), "Sequence length n must be at least 4"),
        ({"n": 257}, "inputs", ("inputs", "n"), "Sequence length n must be at most 256"),
        ({"n": "x"}, "query", ("query", "n"), "Sequence length n must be a whole number, such as 16"),
        ({"n": 2.5}, "inputs", ("inputs", "n"), "Sequence length n must be a whole number, such as 16"),
        ({"n": True}, "inputs", ("inputs", "n"), "Sequence length n must be a whole number, such as 16"),
        (
            {"n": 8, "tile": 9},
            "inputs",
            ("inputs", "tile"),
            "Tile size must be at most 8, the sequence length n",
        ),
        (
            {"n": 8, "row": 8},
            "query",
            ("query", "row"),
            "Query row must be at most 7, the sequence length n minus 1",
        ),
        (
            {"scale": "nan"},
            "query",
            ("query", "scale"),
            "Sharpness must be a finite number, not NaN or infinity",
        ),
        ({"prompt": "c"}, "query", ("query", "prompt"), "Text must be one of a, b"),
        ({"bogus": 1}, "query", ("query", "bogus"), "bogus is not something this lab knows; remove it"),
    ],
)
def test_refusals_name_the_field_in_the_controls_words(given, where, loc, msg):
    with pytest.raises(ControlError) as err:
        read(CONTROLS, given, where)
    assert err.value.loc == loc
    assert err.value.item(("body",)) == {
        "loc": ["body", *loc],
        "field": loc[1],
        "msg": msg,
        "type": "value_error",
    }
    assert not err.value.problem.startswith(err.value.label)  # the problem never names its own field


def test_views_and_link():
    values = read(CONTROLS, {"n": "32", "scale": "0.25"}, "query")
    shown = views(CONTROLS, values)
    assert [c["name"] for c in shown] == ["n", "tile", "row", "scale", "prompt"]
    assert shown[1] | {} == {
        "name": "tile",
        "label": "Tile size",
        "kind": "whole",
        "hint": "",
        "min": 1,
        "max": 32,
        "step": 1,
        "hi_from": "n",
        "hi_offset": 0,
        "value_text": "16",
        "value": 16,
    }
    assert shown[2]["max"] == 31 and shown[3]["value_text"] == "0.25"
    assert shown[4]["options"] == [{"value": "a", "text": "a red ball"}, {"value": "b", "text": "a blue sky"}]
    assert shown[4]["value_text"] == "a red ball"
    assert link("/connections/x", CONTROLS, values) == "/connections/x?n=32&tile=16&row=0&scale=0.25&prompt=a"
    assert (
        read(
            CONTROLS,
            dict(p.split("=") for p in link("/x", CONTROLS, values).split("?")[1].split("&")),
            "query",
        )
        == values
    )


TEXTS = (
    Control("sentences", "Sentences", "text", "a cat\na dog", lo=2, hi=4, max_chars=60),
    Control("matches", "Their matches", "text", "a kitten\na puppy", lo=2, hi=4, max_chars=60,
            lines_from="sentences"),
    Control("prompt", "Prompt", "text", "Hello", max_chars=20),
)  # fmt: skip


def test_a_text_and_a_list_of_lines():
    values = read(TEXTS, {"sentences": " one \r\n\n two \n three", "matches": "1\n2\n3"}, "inputs")
    assert values == {"sentences": "one\ntwo\nthree", "matches": "1\n2\n3", "prompt": "Hello"}
    shown = views(TEXTS, values)
    assert shown[0]["value_text"] == "one / two / three" and shown[0]["lines"] == 4
    assert shown[2] | {} == {
        "name": "prompt", "label": "Prompt", "kind": "text", "hint": "", "max_chars": 20, "lines": 1,
        "value_text": "Hello", "value": "Hello",
    }  # fmt: skip
    assert read(TEXTS, {"prompt": " spaced "}, "inputs")["prompt"] == " spaced "  # a text is kept as typed


def test_a_texts_link_reads_back_the_same_values():
    from urllib.parse import parse_qsl

    values = read(TEXTS, {"sentences": "a & b\nc=d?", "matches": "x\ny", "prompt": "50% #1"}, "inputs")
    shared = link("/x", TEXTS, values)
    assert shared == "/x?sentences=a%20%26%20b%0Ac%3Dd%3F&matches=x%0Ay&prompt=50%25%20%231"
    assert read(TEXTS, dict(parse_qsl(shared.split("?", 1)[1])), "query") == values


@pytest.mark.parametrize(
    "given,loc,msg",
    [
        ({"prompt": "   "}, "prompt", "Prompt is empty: type a sentence to look at"),
        ({"prompt": 5}, "prompt", "Prompt must be text, such as a sentence"),
        ({"prompt": "x" * 21}, "prompt", "Prompt has 21 characters; it takes at most 20"),
        ({"prompt": "a\ud800"}, "prompt",
         "Prompt holds half of a character (a lone surrogate): paste the text again"),
        ({"sentences": "only one"}, "sentences", "Sentences has 1 line; write at least 2, one on each line"),
        ({"sentences": "1\n2\n3\n4\n5"}, "sentences", "Sentences has 5 lines; it takes at most 4"),
        ({"sentences": "1\n2\n3"}, "matches",
         "Their matches has 2 lines; it needs 3, one for each line of sentences"),
    ],
)  # fmt: skip
def test_a_refused_text_names_its_control(given, loc, msg):
    with pytest.raises(ControlError) as err:
        read(TEXTS, given, "inputs")
    assert err.value.loc == ("inputs", loc) and err.value.item()["msg"] == msg
