"""Explorer: the worked example by default, synced inputs that redraw, errors that keep the old value."""

from __future__ import annotations

import math

import pytest

from attnlab.engine.errors import FieldError
from attnlab.engine.single import trace_query
from attnlab.lab.explorer.examples import WORKED
from attnlab.widgets import Explorer
from attnlab.widgets.explorer import ExplorerWidget


def test_defaults_to_the_worked_example():
    w = Explorer()
    assert w.q == [2.0, 1.0] and w.labels == ["A", "B", "C"] and w.allowed == [True, True, True]
    assert w.keys == [list(k) for k in WORKED.keys]
    assert w.trace == trace_query(**WORKED.to_dict())
    result = w.widget._result
    assert result["display"]["output"] == "[-0.004, 0.868]"  # what the page shows
    assert result["trace"]["output"] == list(w.trace.output)
    assert "Output o = [-0.004, 0.868]" in result["words"]["summary"]


def test_setting_q_from_python_traces_again_and_redraws():
    w = Explorer()
    w.q = [0, 1]
    want = trace_query(q=[0, 1], keys=WORKED.keys, values=WORKED.values)
    assert w.trace.weights == want.weights
    assert w.widget._result["trace"]["weights"] == list(want.weights)
    assert w.widget._result["display"]["q"] == "[0, 1]"


def test_a_q_from_the_browser_reaches_python():
    # ipywidgets applies a browser update through set_state, as for a drag
    w = Explorer()
    w.widget.set_state({"q": [2, 1.2]})
    assert w.q == [2, 1.2]
    assert w.trace.q == (2.0, 1.2)
    assert w.widget._result["display"]["q"] == "[2, 1.2]"


@pytest.mark.parametrize(
    ("value", "message"),
    [([math.nan, 1.0], "q[0] is NaN"), ([1.0, math.inf], "q[1]"), ([1.0, 2.0, 3.0], "q has 3")],
)
def test_a_bad_q_is_refused_naming_the_field_and_the_old_q_is_kept(value, message):
    w = Explorer()
    before = w.widget._result
    with pytest.raises(FieldError, match=message.replace("[", r"\[").replace("]", r"\]")) as info:
        w.q = value
    assert isinstance(info.value, ValueError)
    assert w.q == [2.0, 1.0] and w.widget._result == before


def test_inputs_that_must_agree_change_together_with_update():
    w = Explorer()
    with pytest.raises(FieldError, match="keys has 4"):
        w.keys = [[1, 0], [0, 1], [1, 1], [2, 0]]
    assert len(w.keys) == 3
    w.update(keys=[[1, 0], [0, 1], [1, 1], [2, 0]], values=[[1, 0], [0, 1], [1, 1], [3, 3]])
    assert w.labels == ["A", "B", "C", "D"] and w.allowed == [True] * 4
    assert w.trace.output == trace_query(q=[2, 1], keys=w.keys, values=w.values).output
    with pytest.raises(FieldError, match="values"):
        w.update(values=[[1, 0]])
    assert len(w.values) == 4
    with pytest.raises(TypeError, match="colour"):
        w.update(colour="red")


def test_mask_and_scale_are_inputs_too():
    w = Explorer(allowed=[True, False, True], scale=0.5)
    want = trace_query(**{**WORKED.to_dict(), "allowed": [True, False, True], "scale": 0.5})
    assert w.trace == want and w.trace.weights[1] == 0.0
    with pytest.raises(FieldError, match="allowed"):
        Explorer(allowed=[False, False, False])


def test_the_widget_cannot_have_a_trait_named_keys_so_the_wrapper_maps_it():
    w = Explorer(keys=[[1, 0], [0, 1]], values=[[1, 1], [2, 2]])
    assert isinstance(w.widget, ExplorerWidget)
    assert w.widget.source_keys == [[1, 0], [0, 1]] == w.keys
    assert "source_keys" in w.widget.keys  # ipywidgets' own list of synced traits, untouched
    assert w.labels == ["A", "B"]
    seen = []
    w.observe(lambda change: seen.append(change["name"]), "keys")
    w.keys = [[0, 1], [1, 0]]
    assert seen == ["source_keys"]
    bundle = w._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == w.widget.model_id


def test_the_views_fixed_words_are_the_labs_sent_once():
    from attnlab.lab.explorer.page import widget_words

    w = Explorer()
    assert w.widget._words == widget_words()
    first = {"number": "1", "title": "Match: how far does q reach along each key?"}
    assert w.widget._words["steps"][0] == first
    # the number-dependent ones come with each answer: the caption the view places
    caption = w.widget._result["display"]["labels"]["caption"]["text"]
    assert caption == "q = [2, 1] · Compare the query with each key."
