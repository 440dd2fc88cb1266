"""The explorer answer's phone strip says what the Share table and the summary say, for any trace."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.answer import explorer_answer
from attnlab.lab.explorer.examples import WORKED

coordinate = st.one_of(st.integers(-3, 3).map(float), st.floats(-50, 50, allow_nan=False))
point = st.tuples(coordinate, coordinate)


def test_the_worked_examples_strip():
    strip = explorer_answer(trace_query(**WORKED.to_dict()))["strip"]
    assert strip == {
        "shares": ["A 14%", "B 58%", "C 28%"], "output": "o = [-0.004, 0.868]",
        "pie": "Shares while dragging", "mix": "Output while dragging",
    }


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 8).flatmap(lambda n: st.tuples(
    point,
    st.lists(point, min_size=n, max_size=n),
    st.lists(point, min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n, max_size=n).filter(any),
    st.one_of(st.none(), st.floats(1e-3, 10.0), st.just(1 / math.sqrt(2))),
)))
def test_the_strip_repeats_the_share_tables_percentages_and_the_output(case):
    q, keys, values, allowed, scale = case
    trace = trace_query(q, keys, values, allowed=allowed, scale=scale)
    answer = explorer_answer(trace)
    strip, sources = answer["strip"], answer["display"]["sources"]
    assert strip["shares"] == [f"{s['label']} {s['percent']}" for s in sources]
    percents = fmt.percents(trace.weights)  # one set, adding up to 100
    for item, label, shown, ok in zip(strip["shares"], trace.labels, percents, trace.allowed):
        assert item == f"{label} {shown if ok else 'blocked'}"
    assert strip["output"] == f"o = {fmt.vector(trace.output)}"
    assert f"Output {strip['output']}." in answer["words"]["summary"]
