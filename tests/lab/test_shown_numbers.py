"""Shown numbers add up (issue 32): over random examples, every set of shares the lab shows adds up to
exactly 100, each within a point of its true value; a difference in words is that of the shown numbers;
no probability above 0 shows as 0%; a count agrees with its noun. Plus the issue's own states.

Each set is checked from its texts alone (``sharekit.check_set``). The real models' rows are checked
in ``tests/lab/realmodel/test_claims.py`` (marked ``models``), the bridge's in
``tests/models/test_bridge.py``; the Circuits tables in ``tests/lab/circuits`` (head view, ablation),
and the circuits lab's drops in ``tests/lab/connections/circuits/test_claims.py``.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sharekit import check_set, total

from attnlab.engine.errors import FieldError
from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.block.page import block_page
from attnlab.lab.connections.controls import read
from attnlab.lab.connections.registry import ENTRIES
from attnlab.lab.connections.registry import lab as registry_lab
from attnlab.lab.explorer.answer import explorer_answer
from attnlab.lab.explorer.display import display_strings, row_strings
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.explorer.sequence import STARTING
from attnlab.lab.explorer.words import explain
from attnlab.lab.notebook.export import to_markdown
from attnlab.lab.realmodel.neuron import row_words
from attnlab.lab.realmodel.row import row_view
from attnlab.lab.study import new_study

SETTINGS = settings(max_examples=150, deadline=None)
coordinate = st.floats(-6, 6, allow_nan=False).map(lambda x: round(x, 2))


@st.composite
def traces(draw, most: int = 8, scales=(None, 1.0, 4.0, 0.25)):
    """The explorer's own traces: 1 to ``most`` sources, any 1-to-3-D vectors, mask and scale."""
    n, d = draw(st.integers(1, most)), draw(st.integers(1, 3))
    vec = st.lists(coordinate, min_size=d, max_size=d)
    q = draw(vec)
    keys = draw(st.lists(vec, min_size=n, max_size=n))
    values = draw(st.lists(st.lists(coordinate, min_size=2, max_size=2), min_size=n, max_size=n))
    allowed = draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(any))
    scale = draw(st.sampled_from(scales))
    return trace_query(q, keys, values, allowed=allowed, scale=scale)


def allowed_shares(t, texts: list[str]) -> tuple[list[str], list[float]]:
    return [texts[i] for i in t.allowed_indices], [t.weights[i] for i in t.allowed_indices]


# --- sets of shares ------------------------------------------------------------------------


@SETTINGS
@given(traces())
def test_every_view_of_an_explorer_trace_shows_one_set_that_adds_up_to_100(t):
    d = display_strings(t)
    shown = [s["percent"] for s in d["sources"]]
    check_set(*allowed_shares(t, shown))
    assert [s["share_mark"] for s in d["sources"]] == [f"{a} {p}" for a, p in zip(t.labels, shown)]  # pie
    assert row_strings(t)["weights_text"] == shown  # the held example's table
    assert explorer_answer(t)["strip"]["shares"] == [f"{a} {p}" for a, p in zip(t.labels, shown)]  # phone
    summary = explain(t).claims["summary"]  # the words
    assert summary["shown"] == {t.labels[i]: shown[i] for i in t.allowed_indices}


@pytest.mark.parametrize("n", [4, 8])
def test_four_and_eight_sources_add_up(n):
    # every key on a circle, q between two of them: shares that once summed to 99% or 101%
    keys = [[math.cos(2 * math.pi * i / n), math.sin(2 * math.pi * i / n)] for i in range(n)]
    for q in ([0.0, 0.0], [0.7, 0.2], [3.0, -0.5], [1.3, 1.3]):
        t = trace_query(q, keys, keys)
        check_set([s["percent"] for s in display_strings(t)["sources"]], list(t.weights))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2**31 - 1), st.sampled_from(["pre", "post"]), st.sampled_from(["none", "rope"]))
def test_each_row_of_each_block_head_adds_up_to_100(random_block, seed, norm, positions):
    x, weights = random_block(seed)
    for head in block_page(x, weights, norm=norm, positions=positions)["heads"]:
        for row, allowed, shown in zip(head["weights"], head["allowed"], head["display"]["percent"]):
            check_set([p for p, ok in zip(shown, allowed) if ok], [w for w, ok in zip(row, allowed) if ok])
        for top in head["sentence"]["claims"]["tops"]:  # "B gives A 94%": the row's own text
            assert top["shown"] == head["display"]["percent"][top["row"]][top["top"]]


@SETTINGS
@given(traces(most=12, scales=(1.0, 0.125, 4.0)), st.data())  # a real row's scale is a multiplier
def test_a_real_rows_table_top_five_and_rest_add_up_to_100(t, data):
    # a real model's row is the explorer's trace at any length: its table, its top five and "the rest"
    tokens = [f"t{i}" for i in range(t.n_sources)]
    view = row_view(t, data.draw(st.integers(0, t.n_sources - 1)), tokens)
    shown = [s["share_display"] for s in view["sources"]]
    check_set(*allowed_shares(t, shown))
    words = row_words(t, 0)
    for text in [*_strings(view), *_strings(words)]:  # "meets 1 key", "All 1 key", "Top 1 source"
        assert not ONE_OF_MANY.search(text), text
    share = words["share"]["claims"]
    if share["rest_shown"] is not None:
        assert total([*share["shown"], share["rest_shown"]]) == 100 or share["rest_shown"].startswith("<")


# --- the states -------------------------------------------------------------------


def worked(q):
    return [s["percent"] for s in display_strings(trace_query(q, WORKED.keys, WORKED.values))["sources"]]


def test_q_at_zero_shows_a_third_each_rounded_to_add_up_to_100():
    assert worked([0.0, 0.0]) == ["34%", "33%", "33%"]  # once 33% three times: 99%
    assert "(A 34%, B 33% and C 33%, rounded to add up to 100)" in explain(
        trace_query([0.0, 0.0], WORKED.keys, WORKED.values)
    ).summary


def test_q_at_3_and_minus_half_adds_up():
    assert worked([3.0, -0.5]) == ["1%", "91%", "8%"]  # 0.65 + 91.64 + 7.71 (once 1 + 92 + 8 = 101)


def test_the_held_examples_row_2_and_its_markdown_add_up():
    # 76.79 + 4.54 + 18.67: once "A 77% · B 5% · C 19%" (101%); by largest remainder B's .54 loses to .79, .67
    assert row_strings(STARTING.row_trace(2))["weights_text"] == ["77%", "4%", "19%"]
    markdown = to_markdown(STARTING, new_study())
    assert "| 77%, 4%, 19% |" in markdown and "| 80%, 20%, blocked |" in markdown
    assert "each row's shares to percentages that add up to 100" in markdown


# --- differences, small probabilities, plurals ----------------------------------------------------


@SETTINGS
@given(st.floats(0, 1), st.floats(0, 1), st.integers(0, 3))
def test_a_difference_in_words_is_that_of_the_shown_numbers(a, b, decimals):
    x, y = fmt.percent(a, decimals), fmt.percent(b, decimals)
    if x.startswith(">") or y.startswith(">"):
        with pytest.raises(ValueError):
            fmt.difference(x, y)
        return
    said = fmt.difference(x, y)
    assert Decimal(said) == Decimal(x.removesuffix("%")) - Decimal(y.removesuffix("%"))
    assert said != "-0" and not said.endswith(".")


@SETTINGS
@given(st.floats(0, 1, allow_subnormal=True))
def test_no_probability_above_0_shows_as_0_and_a_small_one_keeps_two_significant_digits(p):
    shown = fmt.percent(p)
    assert (shown == "0%") == (p == 0.0) and (shown == "100%") == (p == 1.0)
    if 0.0 < p < 0.01:  # two significant digits: within half a unit of the second one
        value = float(shown.removesuffix("%"))
        assert abs(value - 100 * p) <= 0.05 * 100 * p * 1.0000001
        assert len(re.sub(r"^0\.0*|e.*$|\.", "", shown.removesuffix("%"))) == 2


@SETTINGS
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12).filter(lambda xs: sum(xs) > 0), st.integers(0, 2))
def test_any_set_adds_up_to_100_at_its_precision(raw, decimals):
    shares = [x / math.fsum(raw) for x in raw]
    check_set(fmt.percents(shares, decimals), shares)


NOUNS = ("token", "key", "source", "coordinate", "entry", "row", "number", "block", "layer", "text", "point")
ONE_PLURAL = re.compile(r"\b1 (" + "|".join("entries" if n == "entry" else n + "s" for n in NOUNS) + r")\b")


@SETTINGS
@given(st.integers(0, 10**7), st.sampled_from(NOUNS))
def test_a_count_agrees_with_its_noun(n, noun):
    many = "entries" if noun == "entry" else noun + "s"
    text = fmt.plural(n, noun, many)
    assert text == f"{n:,} {noun if n == 1 else many}"
    assert not ONE_PLURAL.search(text)


@SETTINGS
@given(traces(most=3))
def test_no_explorer_words_say_1_of_a_plural(t):
    said = [*explain(t).to_dict().values(), *(v["text"] for v in display_strings(t)["labels"].values())]
    for text in said:
        if isinstance(text, str):
            assert not ONE_PLURAL.search(text), text


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        (lambda: trace_query([1.0], [[1.0, 2.0]], [[1.0]]), "keys[0] has 2 coordinates; q has 1"),
        (lambda: trace_query([1.0, 2.0], [[1.0]], [[1.0]]), "keys[0] has 1 coordinate; q has 2"),
        (lambda: trace_query([1.0], [[1.0]], [[1.0]], labels=["A", "B"]),
         "labels has 2 entries; there is 1 source"),
        (lambda: trace_query([1.0], [[1.0], [2.0]], [[1.0], [2.0]], allowed=[True]),
         "allowed has 1 entry; there are 2 sources"),
    ],
)  # fmt: skip
def test_the_engines_refusals_agree_with_their_counts(call, problem):
    with pytest.raises(FieldError) as caught:
        call()
    assert str(caught.value) == problem


# --- every connection lab's answer, at its defaults and at its controls' smallest values ----------

LAB_NOUNS = (
    "tokens|keys|heads|layers|texts|sources|entries|rows|queries|steps|values|words|positions|coordinates|"
    "numbers|experts|candidates|tiles|blocks|points|sentences|patches|times|seconds|lines|columns|files|"
    "bytes|requests|passes|ids|units"
)
ONE_OF_MANY = re.compile(rf"(?<![\d.,])1 ({LAB_NOUNS})\b")


def _strings(x):
    if isinstance(x, str):
        yield x
    elif isinstance(x, dict):
        for v in x.values():
            yield from _strings(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _strings(v)


def _bars(x):
    if isinstance(x, dict):
        if "text" in x and "value" in x and isinstance(x["text"], str):
            yield x
        for v in x.values():
            yield from _bars(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _bars(v)


def _settings(controls):
    """The defaults, then every slider at its smallest value."""
    values = read(controls, {}, "inputs")
    yield values
    low = {c.name: c.lo for c in controls if c.kind in ("whole", "number") and c.lo is not None}
    yield read(controls, low, "inputs")


@pytest.mark.parametrize("name", [e.name for e in ENTRIES])
def test_no_connection_lab_says_1_of_a_plural_or_0_percent_of_something(name):
    lab = registry_lab(name)
    for values in _settings(lab.controls):
        answer = lab.answer_for(values, {})
        for text in _strings(answer):
            assert not ONE_OF_MANY.search(text), text
        for bar in _bars(answer):  # a bar's share or probability reads 0% only when it is 0
            if bar["text"] == "0%":
                assert bar["value"] == 0, bar
