"""``attnlab trace``'s printout: the explorer's words and strings, each result line with its claims."""

from __future__ import annotations

import pytest

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer import terminal
from attnlab.lab.explorer.display import display_strings
from attnlab.lab.explorer.words import explain

KEYS = [[-1, 2], [1, 0], [0, 1]]
VALUES = [[2, 0], [0, 2], [-1, -1]]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"scale": 0.5},
        {"allowed": [True, False, True]},
        {"labels": ["cat", "sat", "mat"], "allowed": [False, True, False]},
    ],
)
def test_the_printout_is_the_explorers_words_and_strings(kwargs):
    trace = trace_query([2, 1], KEYS, VALUES, **kwargs)
    text = terminal.trace_text(trace)
    words, shown = explain(trace), display_strings(trace)
    assert text["summary"] == {"text": words.summary, "claims": words.claims["summary"]}
    assert [p["text"] for p in text["paragraphs"]] == [words.match, words.share, words.mix]
    assert text["softmax"]["claims"] == {"m": trace.m, "z": trace.z}
    assert text["softmax"]["text"] == f"m = {fmt.rounded(trace.m)}; Z = {fmt.rounded(trace.z)}"
    assert text["output"]["claims"] == {"output": list(trace.output)}
    assert text["output"]["text"] == f"output o = {fmt.vector(trace.output)}"
    for row, source in zip(text["rows"], shown["sources"]):
        assert row[0] == source["label"] and row[3] == fmt.rounded(trace.dots[source["index"]])
        assert row[5] == (fmt.rounded(trace.weights[source["index"]]) if source["allowed"] else "blocked")


def test_lines_lay_the_table_out_in_columns():
    trace = trace_query([2, 1], KEYS, VALUES)
    lines = terminal.lines(terminal.trace_text(trace))
    assert lines[0] == explain(trace).summary and lines[1] == ""
    assert lines[2].split() == ["source", "key", "value", "dot", "scaled", "share", "carry", "w·v"]
    assert lines[4].split() == ["B", "[1,", "0]", "[0,", "2]", "2", "1.414", "0.576", "[0,", "1.152]"]
    at = lines[2].index("share")  # every column starts where its header does
    assert [line[at:].split("  ")[0] for line in lines[3:6]] == ["0.14", "0.576", "0.284"]
    assert lines[7] == f"m = 1.414; Z = {fmt.rounded(trace.z)}" and lines[8] == "output o = [-0.004, 0.868]"
