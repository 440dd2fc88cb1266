"""Every sentence the explorer shows carries its claims, and every claim holds for the numbers.

Own examples of 1 to 8 sources, any scale (the engine takes any positive finite
scale: from 1e-9 to 1e6 here, extremes included), masks (some sources blocked;
none allowed is refused) and ties; the held example's rows and edits for the
sentences about the row the explorer shows. Each claim is checked against the
trace's numbers, recomputed here where that is cheap, and each sentence is
checked to say what its claims say (the rounded figures in it).
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.errors import FieldError
from attnlab.engine.single import QueryTrace, ordered_sum, trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.challenge import THRESHOLD, check
from attnlab.lab.explorer.compare import TOLERANCE, compare
from attnlab.lab.explorer.display import display_strings, grid_notes, labels
from attnlab.lab.explorer.geometry import geometry
from attnlab.lab.explorer.stepper import steps
from attnlab.lab.explorer.words import explain

# small integers give ties; the floats give everything else
coordinate = st.one_of(st.integers(-3, 3).map(float), st.floats(-50, 50, allow_nan=False))
point = st.tuples(coordinate, coordinate)
scale = st.one_of(
    st.none(),
    st.floats(1e-9, 1e6),
    st.sampled_from([1e-9, 1e-4, 0.5, 1.0, 1 / math.sqrt(2), 1e6]),
)


# exact checks, no timing: a slow machine must not fail them
claims_settings = settings(max_examples=150, deadline=None)


@st.composite
def examples(draw) -> QueryTrace:
    n = draw(st.integers(1, 8))
    keys = draw(st.lists(point, min_size=n, max_size=n))
    values = draw(st.lists(point, min_size=n, max_size=n))
    allowed = draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(any))
    return trace_query(draw(point), keys, values, allowed=allowed, scale=draw(scale))


# --- plain words and whole sentences ------------------------------------------------

STRAY_START = re.compile(r"^[=;:,.)\]·\-–—]")
GLUED = re.compile(r"[a-z%)\]][.!?][A-Z]")  # "numbers.The next": two sentences glued together
INTERNAL = re.compile(
    r"[a-z]\[\d+\]\[\d+\]"  # x[0][0]
    r"|\b[a-z]{2,}_[a-z0-9]+\b|\b[a-z]_[a-z]{2,}\b"  # top_k, norm_1, worked_labels (d_k is notation)
    r"|\b[a-z_]+\.[a-z_]{2,}\b"  # query.top_k, norm_1.var
)


def assert_plain(text: str, *, sentence: bool = True) -> None:
    assert text == text.strip() and "  " not in text, repr(text)
    assert not STRAY_START.match(text), f"starts with stray punctuation: {text!r}"
    assert not GLUED.search(text), f"two sentences glued together: {text!r}"
    assert not INTERNAL.search(text), f"an internal name: {text!r}"
    if sentence:
        assert text[-1] in ".?", f"a sentence split across pieces: {text!r}"


def shown_strings(t: QueryTrace) -> list[tuple[str, bool]]:
    """(text, is a whole sentence) for every string the explorer and the stepper show for ``t``."""
    words = explain(t)
    said = labels(t)
    state = check(t)
    out = [(words.summary, True), (words.match, True), (words.share, True), (words.mix, True)]
    out += [(state.goal, True), (state.status, True)]
    out += [(v["text"], k in SENTENCES) for k, v in said.items() if k != "score_code"]
    out += [(v["text"], True) for v in grid_notes(t, geometry(t)).values()]
    for step in steps(t):
        out += [(step["question"], True), (step["explanation"], True), (step["notation"], True)]
        out += [(step["title"], False), (step["table"]["caption"], False)]
    return out


SENTENCES = {"scale_note", "mix_hint", "shapes", "python_expected", "handle"}


@claims_settings
@given(examples())
def test_every_shown_string_is_plain_and_whole(t):
    for text, sentence in shown_strings(t):
        assert_plain(text, sentence=sentence)


# --- the summary --------------------------------------------------------------------


def allowed_scores(t: QueryTrace) -> dict[str, float]:
    return {t.labels[i]: t.scores[i] for i in t.allowed_indices}


@claims_settings
@given(examples())
def test_summary_claims_hold(t):
    words = explain(t)
    c = words.claims["summary"]
    weight = dict(zip(t.labels, t.weights))
    assert c["allowed"] == [t.labels[i] for i in t.allowed_indices]
    assert c["blocked"] == [t.labels[i] for i in t.blocked]
    assert c["output"] == list(t.output)
    assert words.summary.endswith(f"Output o = {fmt.vector(t.output)}.")
    for label in c["blocked"]:
        assert weight[label] == 0.0 and label in words.summary
    assert ("blocked by the mask" in words.summary) == bool(c["blocked"])
    if "only" in c:
        (i,) = t.allowed_indices
        assert c["only"] == t.labels[i] and t.weights[i] == 1.0
        assert list(t.output) == list(t.values[i])  # "the output is its value"
        return
    scores = allowed_scores(t)
    top = max(scores.values())
    assert c["top_score"] == top
    assert c["top"] == [label for label in sorted(scores, key=lambda x: -scores[x]) if scores[label] == top]
    assert f"(score {fmt.rounded(top)})" in words.summary
    assert c["shares"] == {label: weight[label] for label in c["shares"]}
    assert set(c["shares"]) == set(scores)
    for a in c["top"]:  # equal scores take equal shares
        assert weight[a] == weight[c["top"][0]]
    listed = [scores[label] for label in c["order"]]
    assert listed == sorted(listed, reverse=True) and top not in listed
    assert c["equal"] == (len(c["top"]) == len(scores))
    shown = dict(zip(t.labels, fmt.percents(t.weights)))  # the set as the explorer shows it
    assert c["shown"] == {label: shown[label] for label in c["allowed"]}
    tied = [shown[label] for label in c["top"]]
    split = ", ".join(f"{label} {shown[label]}" for label in c["top"][:-1])
    split = f"({split} and {c['top'][-1]} {tied[-1]}, rounded to add up to 100)"
    if c["equal"]:
        assert "share the attention equally" in words.summary
        assert (f"({tied[0]} each)" if len(set(tied)) == 1 else split) in words.summary
    elif len(tied) == 1:
        assert f"takes {tied[0]} of the attention" in words.summary
    else:
        assert (f"{tied[0]} of the attention each" if len(set(tied)) == 1 else split) in words.summary
    for label in c["order"]:
        assert f"{label} gets {shown[label]}" in words.summary
    assert c["underflowed"] == [t.labels[i] for i in t.allowed_indices if t.weights[i] == 0.0]
    assert ("underflow" in words.summary) == bool(c["underflowed"])


# --- Match, Share, Mix --------------------------------------------------------------


def applied(scale: dict, dot: float) -> float:
    return dot / scale["by"] if scale["op"] == "divide" else dot * scale["by"]


@claims_settings
@given(examples())
def test_match_claims_hold(t):
    words = explain(t)
    c = words.claims["match"]
    assert c["dots"] == [ordered_sum(a * b for a, b in zip(t.q, k)) for k in t.keys]
    assert c["scores"] == [applied(c["scale"], d) for d in c["dots"]] == list(t.scores)
    if t.scale is None:
        assert c["scale"] == {"op": "divide", "by": math.sqrt(t.d_k), "d_k": t.d_k, "shown": f"√{t.d_k}"}
        assert f"Divide by √{t.d_k}, the square root of the key width," in words.match
    else:
        assert c["scale"]["op"] == "multiply" and c["scale"]["by"] == t.scale
        assert f"Multiply by the scale {fmt.significant(t.scale)} to get" in words.match
        assert "Divide" not in words.match
    assert f"to get {fmt.vector(t.scores)}." in words.match
    assert f"Their dot products are {fmt.vector(t.dots)}." in words.match
    assert c["blocked"] == [t.labels[i] for i in t.blocked]


@claims_settings
@given(examples())
def test_share_claims_hold(t):
    words = explain(t)
    c = words.claims["share"]
    assert c["weights"] == list(t.weights)
    assert abs(math.fsum(t.weights) - c["sum"]) <= 1e-12 * len(t.weights)
    assert all(t.weights[i] == 0.0 for i in t.blocked)
    allowed = t.allowed_indices
    if c["monotone"]:  # "a higher score never gets a smaller share"
        assert "never gets a smaller share" in words.share
        for i in allowed:
            for j in allowed:
                if t.scores[i] > t.scores[j]:
                    assert t.weights[i] >= t.weights[j]
    else:
        (i,) = allowed
        assert c["single"] == t.labels[i] and t.weights[i] == 1.0
        assert "that source takes all the weight" in words.share
    assert c["underflowed"] == [t.labels[i] for i in allowed if t.weights[i] == 0.0]
    assert f"are {fmt.vector(t.weights)}." in words.share


@claims_settings
@given(examples(), st.lists(point, min_size=8, max_size=8))
def test_mix_claims_hold(t, other_values):
    words = explain(t)
    c = words.claims["mix"]
    assert c["output"] == list(t.output)
    assert f"The output is {fmt.vector(t.output)}." in words.mix
    assert c["weights_ignore_values"] is True  # the values do not move the weights
    moved = trace_query(t.q, t.keys, other_values[: t.n_sources], allowed=t.allowed, scale=t.scale)
    assert moved.weights == t.weights


# --- the labels: the scale's one meaning, the hull -------------------------------------


@claims_settings
@given(examples())
def test_every_scale_label_says_what_is_computed(t):
    said = labels(t)
    for name in ("score_header", "score_title", "score_formula", "score_code", "scale_note"):
        c = said[name]["claims"]["scale"]
        assert [applied(c, d) for d in t.dots] == list(t.scores), name
        text = said[name]["text"]
        if t.scale is None:
            assert c["op"] == "divide" and ("×" not in text and "multipl" not in text), text
        else:
            assert c["op"] == "multiply" and "/" not in text.replace("/ sqrt", ""), text
            assert "divides" not in text and "√" not in text, text
    if t.scale is None:
        assert said["score_header"]["text"] == f"Score q·k / √{t.d_k}"
        assert said["score_title"]["text"] == f"Scaled scores · s = q·k / √{t.d_k}"
    else:
        assert said["score_header"]["text"] == f"Score q·k × {fmt.significant(t.scale)}"
        assert said["score_title"]["text"] == f"Scaled scores · s = q·k × {fmt.significant(t.scale)}"
        # the factor shown is the factor applied, to its shown digits: never "× 0" for a small scale
        shown = said["score_header"]["claims"]["scale"]["shown"]
        assert math.isclose(float(shown), t.scale, rel_tol=5e-3, abs_tol=5e-4) and float(shown) > 0


def inside(point, hull, tol) -> bool:
    """Is ``point`` in the closed convex polygon ``hull`` (counter-clockwise), within ``tol``?"""
    if len(hull) == 1:
        return math.dist(point, hull[0]) <= tol
    if len(hull) == 2:
        (ax, ay), (bx, by) = hull
        px, py = point
        dx, dy = bx - ax, by - ay
        if dx * dx + dy * dy == 0.0:  # two ends closer than a float can square: the segment is a point
            return min(math.dist(point, hull[0]), math.dist(point, hull[1])) <= tol
        f = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
        return math.dist(point, (ax + f * dx, ay + f * dy)) <= tol
    for (ax, ay), (bx, by) in zip(hull, hull[1:] + hull[:1]):
        edge = math.hypot(bx - ax, by - ay)
        if (bx - ax) * (point[1] - ay) - (by - ay) * (point[0] - ax) < -tol * edge:
            return False
    return True


@claims_settings
@given(examples())
def test_the_mix_hint_names_the_shape_the_output_stays_in(t):
    hint = labels(t)["mix_hint"]
    c, text = hint["claims"], hint["text"]
    n = len(t.allowed_indices)
    assert c["allowed"] == n and c["output"] == list(t.output)
    assert ("triangle" in text) == (c["shape"] == "triangle")
    if c["shape"] == "triangle":
        assert n == 3 and len(c["hull"]) == 3
    expected = {1: "point", 2: "segment"}.get(len(c["hull"]), "triangle" if n == 3 else "hull")
    assert c["shape"] == ("point" if n == 1 else "same-point" if len(c["hull"]) == 1 else expected)
    assert ("convex hull (the shaded shape)" in text) == (c["shape"] == "hull")
    scale_of = max([1.0, *(abs(x) for v in t.values for x in v)])
    assert inside(t.output, c["hull"], 1e-9 * scale_of), (t.output, c["hull"])


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (1, "With one allowed value, the output is that value itself."),
        (2, "The output can never leave the segment between the two allowed values."),
        (3, "The output can never leave the shaded triangle of the three allowed values."),
        (4, "The output can never leave the convex hull (the shaded shape) of the allowed values."),
        (8, "The output can never leave the convex hull (the shaded shape) of the allowed values."),
    ],
)
def test_the_triangle_is_named_only_for_three_sources(n, words):
    # values on a circle: no three on one line, so the hull has every value as a corner
    values = [(math.cos(2 * math.pi * i / n) * 2, math.sin(2 * math.pi * i / n) * 2) for i in range(n)]
    keys = [(float(i), 1.0) for i in range(n)]
    t = trace_query((0.5, 0.5), keys, values)
    assert words in labels(t)["mix_hint"]["text"]
    assert ("triangle" in steps(t)[3]["explanation"]) == (n == 3)


@claims_settings
@given(examples())
def test_the_challenge_claims_hold(t):
    state = check(t)
    c = state.claims
    if t.n_sources < 2:
        assert not state.available and c == {"sources": t.n_sources, "target": None}
        return
    assert c["target"] == t.labels[1]
    if not t.allowed[1]:
        assert c["blocked"] is True and not state.met
        return
    assert c["share"] == t.weights[1] and c["threshold"] == THRESHOLD
    assert c["met"] == state.met == (t.weights[1] > THRESHOLD)
    shown = fmt.percents(t.weights)[1]  # the share as the pie and the table show it
    assert f"{t.labels[1]} takes {shown}" in state.status
    assert state.status.startswith("Done:" if state.met else "Not yet:")


@claims_settings
@given(examples())
def test_the_stepper_claims_hold(t):
    for step in steps(t):
        c = step["claims"]
        assert [applied(c["scale"], d) for d in t.dots] == list(t.scores)
        assert c["labels"] == list(t.labels)
    match, mix = steps(t)[1], steps(t)[3]
    if t.scale is None:
        assert match["table"]["caption"] == f"Dot products and scaled scores (s = q·k / √{t.d_k})"
        assert "Dividing by √d_k" in match["explanation"]
    else:
        shown = fmt.significant(t.scale)
        assert match["table"]["caption"] == f"Dot products and scaled scores (s = q·k × {shown})"
        assert match["notation"].startswith(f"sᵢ = (q · kᵢ) × {fmt.significant(t.scale)}")
    assert ("triangle" in mix["explanation"]) == (mix["claims"]["shape"] == "triangle")


def test_a_mask_that_allows_nothing_is_refused_before_any_words():
    with pytest.raises(FieldError, match="at least 1 source must be allowed"):
        trace_query((1.0, 0.0), [(1.0, 0.0), (0.0, 1.0)], [(1.0, 0.0), (0.0, 1.0)], allowed=[False, False])


def test_the_worked_example_scale_labels():
    keys, values = [[-1, 2], [1, 0], [0, 1]], [[2, 0], [0, 2], [-1, -1]]
    half = labels(trace_query([2, 1], keys, values, scale=0.5))
    assert half["score_header"]["text"] == "Score q·k × 0.5"
    assert half["score_title"]["text"] == "Scaled scores · s = q·k × 0.5"
    assert half["score_formula"]["text"] == "sᵢ = (q · kᵢ) × 0.5"
    assert half["scale_note"]["text"] == "The scale here multiplies each dot product by 0.5."
    default = labels(trace_query([2, 1], keys, values))
    assert default["score_header"]["text"] == "Score q·k / √2"
    assert default["score_formula"]["text"] == "sᵢ = (q · kᵢ) / √2"
    # 1/√2 given as a number multiplies: the label says so, and rounds it
    given_root = labels(trace_query([2, 1], keys, values, scale=1 / math.sqrt(2)))
    assert given_root["score_header"]["text"] == "Score q·k × 0.707"


def test_a_tiny_or_a_huge_scale_is_shown_as_the_factor_it_is():
    keys, values = [[-1, 2], [1, 0], [0, 1]], [[2, 0], [0, 2], [-1, -1]]
    tiny = trace_query([2, 1], keys, values, scale=1e-9)
    assert labels(tiny)["score_header"]["text"] == "Score q·k × 1e-09"  # never "× 0"
    assert "Multiply by the scale 1e-09 to get" in explain(tiny).match
    huge = trace_query([2, 1], keys, values, scale=1e6)
    assert labels(huge)["score_title"]["text"] == "Scaled scores · s = q·k × 1000000"
    assert labels(trace_query([2, 1], keys, values, scale=0.0005))["scale_note"]["text"] == (
        "The scale here multiplies each dot product by 0.0005."
    )


def test_the_practice_words_are_plain_and_whole():
    from attnlab.lab.explorer.sequence import STARTING
    from attnlab.lab.notebook import practice

    for c in practice.challenges():
        assert_plain(c["title"], sentence=False)
        assert_plain(c["prompt"])
        for hint in c["hints"]:
            assert_plain(hint)
        form = c["response"]
        response = None if form is None else (
            form["options"][0]["id"] if form["type"] == "choice" else [0.0] * form["size"]
        )
        checked = practice.check(c["id"], STARTING, response)  # feedback: {"text", "claims"} sentences
        assert_plain(checked["words"]["text"])
        assert_plain(checked["verdict"]["text"])
        assert_plain(practice.answer(c["id"], STARTING)["text"])


# --- the other labels: caption, eyebrow, the share strip, shapes, notation, Python, the handle ------


@claims_settings
@given(examples())
def test_the_framing_labels_claims_hold(t):
    said = labels(t)
    caption, eyebrow = said["caption"], said["eyebrow"]
    assert caption["claims"]["q"] == list(t.q)
    assert caption["text"].startswith(f"q = {fmt.vector(t.q)} · ")
    assert eyebrow["claims"]["sources"] == t.n_sources
    counted = eyebrow["text"].split(" · ")[1]
    assert counted.endswith("source" if t.n_sources == 1 else "sources")
    share = said["share_title"]
    assert share["claims"]["order"] == list(t.labels)
    assert f"in {', '.join(t.labels)} order" in share["text"]
    assert abs(share["claims"]["total"] - 1.0) <= 1e-12 * t.n_sources  # "the full strip is 1"
    shapes = said["shapes"]
    assert (shapes["claims"]["d_k"], shapes["claims"]["d_v"]) == (len(t.q), len(t.values[0]))
    assert f"d_k = {len(t.q)} coordinates" in shapes["text"] and f"d_v = {len(t.values[0])}" in shapes["text"]
    notation = said["notation"]
    if notation["claims"]["keys"] is not None:
        assert notation["claims"]["keys"] == [list(k) for k in t.keys]
        for label, k in zip(t.labels, t.keys):
            assert f"k_{label} = {fmt.vector(k).replace('-', fmt.MINUS)}" in notation["text"]
    python = said["python_expected"]
    assert python["claims"]["output"] == list(t.output)
    assert f"output: {fmt.vector(t.output)} " in python["text"]
    handle = said["handle"]
    assert handle["claims"]["q"] == list(t.q) and handle["text"].startswith(f"Query q at {fmt.vector(t.q)}.")
    steps = display_strings(t)["query_steps"]  # the steps the page's arrow keys take are the ones it says
    assert (handle["claims"]["step"], handle["claims"]["big_step"]) == (steps["step"], steps["big"])
    said_steps = f"move it by {fmt.rounded(steps['step'])}, with Shift by {fmt.rounded(steps['big'])}."
    assert said_steps in handle["text"]


@claims_settings
@given(examples())
def test_the_pictures_names_and_grid_notes_hold(t):
    shapes = geometry(t)
    d = display_strings(t, shapes)
    for i, src in enumerate(d["sources"]):
        assert src["value_mark"] == f"v{t.labels[i]}" + ("" if t.allowed[i] else " (blocked)")
        shown = fmt.percents(t.weights)[i] if t.allowed[i] else "blocked"
        assert src["share_mark"] == f"{t.labels[i]} {shown}"
        assert src["score_mark"] == f"{t.labels[i]} {fmt.rounded(t.scores[i])}"
    for plane in ("key", "value"):
        off = shapes[f"{plane}_off"]
        assert len(d["off"][plane]["marks"]) == len(off)
        assert bool(d["off"][plane]["note"]) == bool(off)
        note = d["labels"][f"{plane}_grid"]
        view = shapes[f"{plane}_view"]
        if view is not None:
            assert note["claims"]["step"] == view["step"]
            assert f"Each grid interval is {fmt.rounded(view['step'])} coordinate unit" in note["text"]


@claims_settings
@given(examples(), point)
def test_the_comparison_summary_says_which_numbers_changed(t, q):
    other = trace_query(q, t.keys, t.values, allowed=t.allowed, scale=t.scale)
    summary = compare(t, other).summary
    c = summary["claims"]

    def moved(xs, ys):
        return any(abs(a - b) > TOLERANCE for a, b in zip(xs, ys))

    assert c["scores"] == moved(t.scores, other.scores)
    assert c["shares"] == moved(t.weights, other.weights)
    assert c["output"] == moved(t.output, other.output)
    word = {True: "changed", False: "same"}
    assert summary["text"] == (
        f"Scores {word[c['scores']]}; shares {word[c['shares']]}; output {word[c['output']]}."
    )


# --- the held example: which row the explorer shows, and the held table ---------------------------


@st.composite
def helds(draw):
    """The worked sequence after a few edits (a row shown masked or not, mask cells, a query),
    or an example of one query with a mask."""
    from attnlab.lab.explorer import sequence as seq

    if draw(st.booleans()):
        held = seq.STARTING
        for _ in range(draw(st.integers(0, 4))):
            r, i = draw(st.integers(0, 2)), draw(st.integers(0, 2))
            kind = draw(st.sampled_from(["mask", "select", "query"]))
            try:
                if kind == "mask":
                    held = seq.set_mask_cell(held, r, i, draw(st.booleans()))
                elif kind == "select":
                    held = seq.select_row(held, r, draw(st.booleans()))
                else:
                    held = seq.edit_query(held, list(draw(point)))
            except FieldError:
                pass  # a mask change that would empty a row is refused: the held example stays
        return held
    n = draw(st.integers(1, 8))
    labels_ = draw(st.lists(st.sampled_from("ABCDEFGHXYZ"), min_size=n, max_size=n, unique=True))
    allowed = draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(any))
    return seq.held_from_dict({
        "id": "own", "labels": labels_, "queries": [list(draw(point))],
        "keys": [list(draw(point)) for _ in range(n)], "values": [list(draw(point)) for _ in range(n)],
        "mask": [allowed], "masked": True, "scale": draw(scale),
    })


@claims_settings
@given(helds(), point)
def test_the_sentences_about_the_row_shown_hold(held, q):
    from attnlab.lab.explorer.sequence import edit_query
    from attnlab.lab.explorer.texts import (
        explorer_heading,
        explorer_label,
        explorer_line,
        explorer_note,
        explorer_texts,
    )

    t = held.explorer_trace()
    allowed = [held.labels[i] for i in t.allowed_indices]
    blocked = [held.labels[i] for i in t.blocked]
    texts = explorer_texts(held)
    for key, said in texts.items():
        assert_plain(said["text"], sentence=key != "q_legend")
        c = said["claims"]
        if "masked" in c:  # what the explorer traces: its mask row, or every source
            assert c["masked"] == (held.masked or not held.sequence)
        if "allowed" in c:
            assert (c["allowed"], c["blocked"]) == (allowed, blocked)
            for label in blocked:
                assert label in said["text"]
        if "query_edit" in c:  # where a query edit takes the explorer
            moved = edit_query(held, list(q))
            assert c["query_edit"] == {"row": moved.row, "masked": moved.masked}
    if held.sequence and not held.masked:
        assert f"every source ({', '.join(held.labels)})" in texts["row"]["text"]
    note = explorer_note(held)
    assert_plain(note["text"])
    moved = edit_query(held, list(q))
    assert note["claims"]["query_edit"] == {"row": moved.row, "masked": moved.masked}
    if "blocked" in note["claims"]:
        assert note["claims"]["blocked"] == blocked
    label = explorer_label(held)
    if held.sequence:
        assert label["claims"] == {"sequence": True, "row": held.row, "label": held.labels[held.row],
                                   "masked": held.masked}
        assert label["text"] == f"Row {held.row} ({held.labels[held.row]}) · " + (
            "masked row" if held.masked else "unmasked projection")
    else:
        n = len(held.labels)
        assert label["claims"]["sources"] == n
        assert label["text"].endswith(f"over {n} source" + ("" if n == 1 else "s"))
    assert explorer_heading(held)["text"] == label["text"] + "."
    assert_plain(explorer_line(held)["text"])


@claims_settings
@given(helds())
def test_the_held_tables_words_hold(held):
    from attnlab.lab.explorer.examples import WORKED
    from attnlab.lab.explorer.view import sequence_view

    view = sequence_view(held)
    caption = view["caption"]
    sc = caption["claims"]["scale"]
    for r, row in enumerate(view["rows"]):
        t = held.row_trace(r)
        assert [applied(sc, d) for d in t.dots] == list(t.scores)  # the caption's scale is the scores'
        assert row["query_text"] == f"q = {fmt.vector(held.queries[r])}"
        assert row["score_marks"] == [
            f"s {fmt.rounded(s)}" if ok else None for s, ok in zip(t.scores, held.mask[r])
        ]
        summary = row["summary"]
        assert summary["claims"]["row"] == r and summary["text"].startswith(f"Row {r}: ")
        assert summary["claims"]["output"] == list(t.output)
        blocked = [label for label, ok in zip(held.labels, held.mask[r]) if not ok]
        assert summary["claims"]["blocked"] == blocked
    assert ("×" in caption["text"]) == (held.scale is not None)
    title = view["title"]
    assert (title["claims"]["queries"], title["claims"]["sources"]) == (len(held.queries), len(held.labels))
    fit = view["worked_fit"]
    assert (fit["sequence"] is None) == held.sequence
    assert (fit["labels"] is None) == (list(held.labels) == list(WORKED.labels))
    assert (fit["keys"] is None) == (list(map(list, held.keys)) == list(map(list, WORKED.keys)))
    if fit["labels"] is not None:
        assert fit["labels"]["claims"]["yours"] == list(held.labels)
        assert f"yours are {', '.join(held.labels)}." in fit["labels"]["text"]
