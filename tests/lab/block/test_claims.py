"""Every sentence the block section shows is true of its numbers: each claim checked (hypothesis).

The inputs range over both norms, every position scheme, every heads on/off
combination, RoPE demonstration offsets and edited inputs within the block's
limits (|number| <= MAX_MAGNITUDE), some with weights zeroed so that a head or
a table really changes nothing. Each claim is recomputed here independently of
the lab (NumPy, float64); a head's kind by the real models' stated definitions
(``lab.realmodel.kinds``: its scores recomputed here, then the rule). Each shown
string, the section's fixed words included, is checked for the page's words: no
glued or broken sentences, no internal names.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab import numbers as fmt
from attnlab.lab.block import compare as block_compare
from attnlab.lab.block import practice as block_practice
from attnlab.lab.block.data import (
    EPS,
    LABELS,
    MAX_MAGNITUDE,
    NORMS,
    POSITIONS,
    example,
    given_weights,
    given_x,
)
from attnlab.lab.block.page import block_page
from attnlab.lab.block.walk import walk
from attnlab.lab.realmodel import kinds
from attnlab.widgets.block import Block

SETTINGS = settings(max_examples=60, deadline=None)
CHANGED = 1e-12
ZEROS = ("none", "head 1 values", "head 2 rows of W_O", "all of W_O", "every W_Q", "all inputs")


def _inputs(seed: int, magnitude: float, zero: str) -> tuple[list, dict]:
    rng = np.random.default_rng(seed)
    clip = lambda a: np.clip(a * magnitude, -MAX_MAGNITUDE, MAX_MAGNITUDE).tolist()  # noqa: E731
    w = given_weights()
    for h in w["heads"]:
        for n in ("w_q", "w_k", "w_v"):
            h[n] = clip(rng.normal(size=(4, 2)))
    for n, shape in (("w_o", (4, 4)), ("w_1", (4, 8)), ("w_2", (8, 4))):
        w[n] = clip(rng.normal(size=shape))
    w["b_1"], w["b_2"] = clip(rng.normal(size=8)), clip(rng.normal(size=4))
    for n in ("norm_1", "norm_2"):
        w[n] = {"gamma": clip(rng.normal(size=4)), "beta": clip(rng.normal(size=4))}
    x = clip(rng.normal(size=(3, 4)))
    if zero == "head 1 values":
        w["heads"][0]["w_v"] = [[0.0, 0.0] for _ in range(4)]
    elif zero == "head 2 rows of W_O":
        w["w_o"][2], w["w_o"][3] = [0.0] * 4, [0.0] * 4
    elif zero == "all of W_O":
        w["w_o"] = [[0.0] * 4 for _ in range(4)]
    elif zero == "every W_Q":
        for h in w["heads"]:
            h["w_q"] = [[0.0, 0.0] for _ in range(4)]
    elif zero == "all inputs":
        x = [[0.0] * 4 for _ in range(3)]
    return x, w


blocks = st.builds(
    lambda given, seed, magnitude, zero: (
        (given_x(), given_weights()) if given else _inputs(seed, magnitude, zero)
    ),
    st.booleans(),
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.01, 0.5, 1.0, 3.0, 30.0, MAX_MAGNITUDE]),
    st.sampled_from(ZEROS),
)
options = st.tuples(
    st.sampled_from(NORMS),
    st.sampled_from(POSITIONS),
    st.sampled_from(list(itertools.product([True, False], repeat=2))),
)


def a(m) -> np.ndarray:
    return np.array(m, dtype=np.float64)


def close(got, want, scale, rel: float = 1e-12) -> bool:
    """|got - want| within ``rel`` of the sizes that went into ``want`` (``scale``)."""
    return bool(np.all(np.abs(a(got) - a(want)) <= rel * a(scale) + 1e-300))


def layer_norm(z, gamma, beta):
    z = a(z)
    mean = z.mean(axis=1, keepdims=True)
    var = ((z - mean) ** 2).mean(axis=1, keepdims=True)
    std = np.sqrt(var + EPS)
    return mean, var, std, (z - mean) / std * a(gamma) + a(beta)


def rotate(v, angle):
    c, s = math.cos(angle), math.sin(angle)
    return [v[0] * c - v[1] * s, v[1] * c + v[0] * s]


# --- the checks, one per kind of claim ------------------------------------------------


def check_caption(w, step_id: str, claims: dict) -> None:
    t, ws = w.tensors, w.weights
    for x, y in claims.get("equal", []):
        assert t[x] == t[y], (step_id, x, y)
    for x, y, z in claims.get("sum", []):
        assert t[x] == (a(t[y]) + a(t[z])).tolist(), (step_id, x)
    if "sinusoidal" in claims:
        pe = t[claims["sinusoidal"]["tensor"]]
        for p, row in enumerate(pe):
            for i, f in enumerate(claims["sinusoidal"]["frequencies"]):
                assert math.isclose(row[2 * i], math.sin(p * f), abs_tol=1e-15)
                assert math.isclose(row[2 * i + 1], math.cos(p * f), abs_tol=1e-15)
    for name, source in claims.get("layer_norm", []):
        mean, var, std, out = layer_norm(t[source], ws[name]["gamma"], ws[name]["beta"])
        size = np.abs(a(t[source])).max(axis=1, keepdims=True) + 1e-300
        assert close(t[f"{name}.mean"], mean, size), (step_id, name)
        assert close(t[f"{name}.std"], std, size), (step_id, name)
        scale = np.abs(a(ws[name]["gamma"])) * (size / std + 1) + np.abs(a(ws[name]["beta"]))
        assert close(t[f"{name}.output"], out, scale, rel=1e-9), (step_id, name)
    if "projects" in claims:
        z = a(t[claims["projects"]])
        for h, hw in enumerate(ws["heads"]):
            for n in ("q", "k", "v"):
                m = a(hw[f"w_{n}"])
                assert close(t[f"head{h + 1}.{n}"], z @ m, np.abs(z) @ np.abs(m)), (step_id, h, n)
                assert list(a(t[f"head{h + 1}.{n}"]).shape) == claims["shape"]
    if claims.get("rotated_by_position"):
        for h in (1, 2):
            for p in range(3):
                for n in ("q", "k"):
                    v = t[f"head{h}.{n}"][p]
                    assert close(t[f"head{h}.{n}_rotated"][p], rotate(v, p), np.abs(v).sum())
    if "head" in claims:  # an Attend step: Match (q·k × scale), Share (causal softmax), Mix
        h = claims["head"] + 1
        q = a(t[f"head{h}.q_rotated" if w.positions == "rope" else f"head{h}.q"])
        k = a(t[f"head{h}.k_rotated" if w.positions == "rope" else f"head{h}.k"])
        v = a(t[f"head{h}.v"])
        assert close(t[f"head{h}.dots"], q @ k.T, np.abs(q) @ np.abs(k).T)
        dots = a(t[f"head{h}.dots"])
        assert close(t[f"head{h}.scores"], dots * claims["scale"], np.abs(dots), rel=1e-15)
        wts = a(t[f"head{h}.weights"])
        for r in range(3):
            assert claims["causal"] and all(wts[r, i] == 0.0 for i in range(r + 1, 3))
            assert math.isclose(wts[r, : r + 1].sum(), 1.0, abs_tol=1e-12)
        assert close(t[f"head{h}.output"], wts @ v, wts @ np.abs(v) + 1e-300, rel=1e-12)
    if "writes_into" in claims:
        w_o = a(ws["w_o"])
        for h, cols in enumerate(claims["writes_into"]):
            assert cols == np.flatnonzero(np.any(w_o[2 * h : 2 * h + 2] != 0.0, axis=0)).tolist()
        concat = a(t["concat"])
        for h in range(2):
            block = concat[:, 2 * h : 2 * h + 2]
            if h in claims["zeros"]:
                assert not w.heads_on[h] and np.all(block == 0.0)
            else:
                assert w.heads_on[h] and block.tolist() == t[f"head{h + 1}.output"]
    if "mlp_reads" in claims:
        z, w1 = a(t[claims["mlp_reads"]]), a(ws["w_1"])
        want = z @ w1 + a(ws["b_1"])
        assert close(t["mlp.hidden"], want, np.abs(z) @ np.abs(w1) + np.abs(a(ws["b_1"])))
    if claims.get("gelu") == "exact":
        hidden = a(t["mlp.hidden"])
        erf = np.vectorize(math.erf)
        assert close(t["mlp.activated"], 0.5 * hidden * (1 + erf(hidden / math.sqrt(2))), np.abs(hidden))
    if claims.get("row_wise"):  # each token's row alone gives its row of the MLP's output
        for r in range(3):
            act = a(t["mlp.activated"][r])
            want = act @ a(ws["w_2"]) + a(ws["b_2"])
            scale = np.abs(act) @ np.abs(a(ws["w_2"])) + np.abs(a(ws["b_2"]))
            assert close(t["mlp.output"][r], want, scale)


def top_shares(weights) -> list[tuple[int, int]]:
    """(row, the first allowed token with the largest share) for rows B and C."""
    return [(r, int(np.argmax(a(weights[r][: r + 1])))) for r in range(1, 3)]


def kind_scores(weights) -> dict:
    """The real models' scores of a 3 x 3 causal head, recomputed here: rows B and C are the queries."""
    w = a(weights)
    entropy = lambda row: -sum(p * math.log(p) for p in row if p > 0.0)  # noqa: E731
    return {
        "previous": (w[1, 0] + w[2, 1]) / 2,
        "first": (w[1, 0] + w[2, 0]) / 2,
        "self": (w[1, 1] + w[2, 2]) / 2,
        "breadth": (entropy(w[1, :2]) / math.log(2) + entropy(w[2, :3]) / math.log(3)) / 2,
    }


def named_kind(scores: dict) -> str:
    """The stated rule (docs, ``lab.realmodel.kinds``): the pattern furthest past its threshold, then the
    first token, then broad or focused by breadth. No token repeats, so no induction or duplicate-token."""
    limit = kinds.THRESHOLDS
    reached = [(k, scores[n] / limit[k]) for k, n in (("previous-token", "previous"), ("self", "self"))]
    reached = [(k, r) for k, r in reached if r >= 1.0]
    if reached:
        return max(reached, key=lambda kr: kr[1])[0]  # max keeps the first of equals: previous-token
    if scores["first"] >= limit["first-token"]:
        return "first-token"
    return "broad" if scores["breadth"] >= limit["broad"] else "focused"


def check_head(w, h: int, head: dict) -> None:
    said, weights = head["sentence"], head["weights"]
    c = said["claims"]
    tops = top_shares(weights)
    assert [(x["row"], x["top"]) for x in c["tops"]] == tops
    for x in c["tops"]:
        assert x["share"] == weights[x["row"]][x["top"]] == max(weights[x["row"]][: x["row"] + 1])
        assert x["shown"] == fmt.percents(weights[x["row"]])[x["top"]]  # the row is one set, adding to 100
        assert f"{LABELS[x['row']]} gives {LABELS[x['top']]} {x['shown']}" in said["text"]
    # the kind, by the real models' definitions: each score recomputed, then the rule
    want = kind_scores(weights)
    assert c["scores"]["induction"] is None and c["scores"]["duplicate"] is None  # A, B, C repeat no token
    for name, value in want.items():
        assert abs(c["scores"][name] - value) <= 1e-12, (name, c["scores"][name], value)
    assert c["kind"] == named_kind(c["scores"]) == head["kind"] and head["kind_scores"] == c["scores"]
    assert c["score"] == c["scores"][kinds.SCORE_OF[c["kind"]]]
    assert c["threshold"] == kinds.THRESHOLDS.get(c["kind"], kinds.THRESHOLDS["broad"])
    assert said["text"].startswith(f"Head {h + 1} is {kinds.kind_phrase(c['kind'])}: ")
    if c["kind"] in ("broad", "focused"):
        assert f"breadth {fmt.rounded(c['score'], 2)}" in said["text"]
        assert (c["score"] >= c["threshold"]) == (c["kind"] == "broad")
    else:
        assert f"on average {fmt.percent(c['score'])} of B's and C's attention" in said["text"]
        assert f"named at {fmt.percent(c['threshold'])} or more" in said["text"]
        assert c["score"] >= c["threshold"]
    assert c["on"] == w.heads_on[h] == head["on"]
    off_words = "writes zeros before W_O" in said["text"]
    assert off_words == (not head["on"])
    if off_words:
        assert all(row[2 * h : 2 * h + 2] == [0.0, 0.0] for row in w.tensors["concat"])


def check_ablation(w, entry: dict) -> None:
    h = entry["head"]
    with_h, without_h = list(w.heads_on), list(w.heads_on)
    with_h[h], without_h[h] = True, False
    on = a(walk(w.x, w.weights, norm=w.norm, positions=w.positions, heads_on=tuple(with_h)).output)
    off = a(walk(w.x, w.weights, norm=w.norm, positions=w.positions, heads_on=tuple(without_h)).output)
    biggest = float(np.abs(off - on).max())
    c = entry["sentence"]["claims"]
    text = entry["sentence"]["text"]
    assert c["baseline_heads_on"] == with_h and entry["output"] == off.tolist()
    assert c["max_change"] == biggest == entry["max_change"]
    # "changes no output number" <=> max |change| <= 1e-12 against the head on
    assert (c["unchanged"] == "output") == (biggest <= CHANGED)
    assert ("changes no output number" in text) == (biggest <= CHANGED)
    assert ("is off now" in text) == (not w.heads_on[h])
    if biggest > CHANGED:
        amount = fmt.rounded(biggest) if fmt.rounded(biggest) != "0" else fmt.precise(biggest)
        assert f"by up to {amount} " in text
    assert entry["table"]["values"] == entry["change"] and entry["table"]["label"] == entry["table_label"]


def check_summary(w, page: dict) -> None:
    c, text = page["summary"]["claims"], page["summary"]["text"]
    assert c["norm"] == w.norm and c["positions"] == w.positions
    assert c["kinds"] == [h["kind"] for h in page["heads"]] and c["heads_on"] == list(w.heads_on)
    for h, (kind, on) in enumerate(zip(c["kinds"], c["heads_on"])):
        assert f"Head {h + 1}: {kinds.SHORT[kind] if on else 'off'}" in text
    assert c["output_rows"] == [fmt.vector(r) for r in w.output]
    for row in c["output_rows"]:
        assert row in text
    assert text.startswith("Pre-norm" if w.norm == "pre" else "Post-norm")


def check_norm_compare(w, cmp: dict, labels: dict) -> None:
    c, text = cmp["summary"]["claims"], cmp["summary"]["text"]
    o = walk(w.x, w.weights, norm=c["other"], positions=w.positions, heads_on=w.heads_on)
    assert c["other"] != w.norm
    shared = [n for n in w.tensors if n in o.tensors and a(w.tensors[n]).shape == a(o.tensors[n]).shape]
    moved = [n for n in shared if np.abs(a(w.tensors[n]) - a(o.tensors[n])).max() > CHANGED]
    assert c["changed"] == moved and c["unchanged"] == [n for n in shared if n not in moved]
    assert c["first_changed"] == (moved[0] if moved else None)
    from_first = bool(moved) and moved == shared[shared.index(moved[0]) :]
    assert c["from_first_on"] == from_first
    assert ("every number from" in text) == from_first
    assert (f"of the {len(shared)} tables" in text) == bool(moved)
    if moved:
        assert labels[moved[0]] in text
        for n in c["unchanged"]:
            assert labels[n] in text
    walks = {w.norm: w, o.norm: o}
    for norm, (name, source) in c["normalises"].items():
        ws = walks[norm]
        gamma, beta = ws.weights[name]["gamma"], ws.weights[name]["beta"]
        _, _, std, out = layer_norm(ws.tensors[source], gamma, beta)
        size = np.abs(a(ws.tensors[source])).max(axis=1, keepdims=True) + 1e-300
        scale = np.abs(a(gamma)) * (size / std + 1) + np.abs(a(beta))
        assert close(ws.tensors[f"{name}.output"], out, scale, rel=1e-9)
    for norm, source in c["heads_read"].items():
        ws = walks[norm]
        z, m = a(ws.tensors[source]), a(ws.weights["heads"][0]["w_q"])
        assert close(ws.tensors["head1.q"], z @ m, np.abs(z) @ np.abs(m))


def check_rope(w, rope: dict) -> None:
    status = rope["status"]
    assert status["claims"]["active"] == (w.positions == "rope") == ("head1.q_rotated" in w.tensors)
    assert status["text"].startswith("RoPE is on" if rope["active"] else "RoPE is off")
    for head in rope["rotations"]:
        for row in head:
            c = row["note"]["claims"]
            assert c["position"] == row["position"] and c["angle"] == float(row["position"])
            scale = np.abs(row["q"]).sum() + 1e-300
            assert close(row["q_rotated"], rotate(row["q"], c["angle"]), scale)
            assert (
                f"q = {fmt.vector(row['q'])} turns to {fmt.vector(row['q_rotated'])}" in row["note"]["text"]
            )
    demo = rope["demo"]
    c, text = demo["sentence"]["claims"], demo["sentence"]["text"]
    q, k = demo["q"], demo["k"]
    size = math.hypot(*q) * math.hypot(*k)
    scores = {}
    for p, r in c["positions"] + [c["other"]["positions"]]:
        scores[(p, r)] = float(np.dot(rotate(q, p), rotate(k, r))) / math.sqrt(2)
    same = [scores[(p, r)] for p, r in c["positions"]]
    assert all(p - r == c["offset"] for p, r in c["positions"])
    assert all(abs(s - c["score"]) <= 1e-12 * size + 1e-300 for s in same)
    assert abs(scores[tuple(c["other"]["positions"])] - c["other"]["score"]) <= 1e-12 * size + 1e-300
    # "RoPE's score depends only on the offset": equal but for float rounding
    assert c["spread"] <= 1e-12 * size + 1e-300 and c["exact"] == (c["spread"] == 0.0)
    assert ("exactly equal" in text) == c["exact"]
    pairs = [p for p in demo["pairs"] if p["offset"] == c["offset"]]
    assert sorted({p["display"] for p in pairs}) == sorted(c["shown"])
    if len(c["shown"]) == 1:
        assert f"score {c['shown'][0]} every time (" in text
    else:
        assert f"score {c['shown'][0]} to {c['shown'][-1]} (" in text and "every time (" not in text


# --- the page's words ---------------------------------------------------------------

GLUED = re.compile(r"[a-zA-Z)%'\]][.!?;:][A-Za-z(]")  # "off.It", "W_O:head"
INTERNAL = [
    re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b"),  # norm_1, q_rotated, top_k, b_1
    re.compile(r"\b[a-z]+[0-9]*\.[a-z]"),  # head1.q, mlp.hidden, norm_1.var
    re.compile(r"\w\[\d+\]"),  # x[0][0]
]


def sentences(page: dict) -> list[dict]:
    """Every {"text", "claims"} sentence of the page answer."""
    out = [
        page["summary"],
        page["norm_compare"]["summary"],
        page["rope"]["status"],
        page["rope"]["demo"]["sentence"],
    ]
    out += [s["caption"] for s in page["steps"] + page["norm_compare"]["steps"]]
    out += [h["sentence"] for h in page["heads"]] + [e["sentence"] for e in page["ablation"]]
    out += [row["note"] for head in page["rope"]["rotations"] for row in head]
    words = page["words"]
    out += [words["play"]["moving"], words["norm_compare"]["hint"], words["edit"]["reset_hint"]]
    return out


def fixed_words(value) -> list[str]:
    """Every string of the section's words table (a sentence's text, not its claims)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        if set(value) == {"text", "claims"}:
            return [value["text"]]
        # a download's file name has dots in it (checked in check_fixed_words); its button is words
        return [s for k, v in value.items() if k not in ("file", "done") for s in fixed_words(v)]
    return [s for v in value for s in fixed_words(v)]


def check_fixed_words(page: dict) -> None:
    """The words table's sentences that depend on numbers say them: the pace, the tolerance, Reset."""
    words = page["words"]
    pace = words["play"]["moving"]
    for c in page["playback"]["captions"]:
        assert c["end_s"] - c["start_s"] == pace["claims"]["step_s"]
    assert f"every {fmt.rounded(pace['claims']['step_s'])} seconds" in pace["text"]
    hint = words["norm_compare"]["hint"]
    assert hint["claims"]["tolerance"] == CHANGED and f"within {fmt.precise(CHANGED)}" in hint["text"]
    reset = words["edit"]["reset_hint"]["claims"]
    ex = example()
    assert all(reset[k] == ex[k] for k in ("norm", "positions", "heads_on"))
    assert reset["given"] == ["x", "weights"]
    assert words["parts"]["practice"]["title"] == block_practice.page_data()["title"]
    for e in words["python"]["exports"]:
        assert e["file"].endswith({"ipynb": ".ipynb", "markdown": ".md"}[e["kind"]])
        assert e["done"] == f"Downloaded {e['file']}."


def shown_strings(page: dict) -> list[str]:
    """Every string the block section shows (sentences, labels, headings, table lines)."""
    out = [s["text"] for s in sentences(page)]
    for step in page["steps"] + page["norm_compare"]["steps"]:
        out += [step["title"], step["heading"], step["link"], step["side_heading"]]
        for t in step["tensors"]:
            out += [
                t["label"] + t["formula_shown"],
                *t["rows"],
                *t["cols"],
                *(c for r in t["sums"] for c in r),
            ]
    for h in page["heads"]:
        out += [h["name"], h["title"], h["switch_label"], h["map_label"], *h["open_labels"]]
    for e in page["ablation"]:
        out += [e["table_label"], *(c for r in e["table"]["sums"] for c in r)]
    out += [label for choices in page["choices"].values() for _, label in choices]
    rope = page["rope"]
    out += [rope["demo"]["caption"], *rope["demo"]["columns"], *rope["heads"]]
    out += [row["option"] for head in rope["rotations"] for row in head]
    out += [c["shown"] for c in page["playback"]["captions"]]
    out += fixed_words(page["words"]) + fixed_words(block_practice.page_data()["words"])
    return out


def check_words(page: dict) -> None:
    for said in sentences(page):
        text = said["text"]
        # one sentence is one sentence: it starts as a sentence and ends as one (not broken in two pieces)
        assert text[0].isupper() or text[0] in "√", text
        assert text.endswith("."), text
    for s in shown_strings(page):
        assert s == s.strip() and "  " not in s, repr(s)
        assert not GLUED.search(s), s
        for pattern in INTERNAL:
            assert not pattern.search(s), (pattern.pattern, s)


# --- the properties ---------------------------------------------------------------------


def check_page(x, weights, norm, positions, heads_on) -> dict:
    page = block_page(x, weights, norm=norm, positions=positions, heads_on=heads_on)
    w = walk(x, weights, norm=norm, positions=positions, heads_on=heads_on)
    for step in page["steps"]:
        check_caption(w, step["id"], step["caption"]["claims"])
    o = walk(x, weights, norm=page["norm_compare"]["other"], positions=positions, heads_on=heads_on)
    for step in page["norm_compare"]["steps"]:
        check_caption(o, step["id"], step["caption"]["claims"])
    for h, head in enumerate(page["heads"]):
        check_head(w, h, head)
    for entry in page["ablation"]:
        check_ablation(w, entry)
    check_summary(w, page)
    labels = {t["name"]: t["label"] for s in page["steps"] for t in s["tensors"]}
    check_norm_compare(w, page["norm_compare"], labels)
    check_rope(w, page["rope"])
    check_fixed_words(page)
    check_words(page)
    return page


@SETTINGS
@given(blocks, options)
def test_every_claim_of_the_block_section_holds(block, opts):
    x, weights = block
    norm, positions, heads_on = opts
    check_page(x, weights, norm, positions, heads_on)


@SETTINGS
@given(blocks, st.lists(st.integers(0, 100), min_size=1, max_size=6, unique=True))
def test_ropes_offset_sentence_holds_at_any_shifts(block, shifts):
    x, weights = block
    w = walk(x, weights, positions="rope")
    check_rope(w, block_compare.rope(w, shifts=tuple(shifts)))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("positions", POSITIONS)
@pytest.mark.parametrize("heads_on", list(itertools.product([True, False], repeat=2)))
def test_every_toggle_of_the_given_block(norm, positions, heads_on):
    check_page(None, None, norm, positions, heads_on)


def test_a_head_that_writes_nothing_changes_no_output_number_on_or_off():
    x, weights = _inputs(7, 1.0, "head 1 values")
    for heads_on in itertools.product([True, False], repeat=2):
        entry = check_page(x, weights, "pre", "none", heads_on)["ablation"][0]
        assert entry["sentence"]["claims"]["unchanged"] == "output" and entry["max_change"] == 0.0
        assert "changes no output number" in entry["sentence"]["text"]


def test_the_widget_shows_the_pages_strings():
    b = Block(norm="post", positions="rope", heads_on=(False, True))
    page = block_page(norm="post", positions="rope", heads_on=(False, True))
    assert b._page["steps"] == page["steps"] and b._page["summary"] == page["summary"]
    assert b._page["words"] == page["words"] and b._page["choices"] == page["choices"]
