"""Patching's words: what a patch means, the two runs' metric, a sweep's map and its status (a cancelled
sweep's blank cells included), each claim against the numbers."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab import numbers as fmt
from attnlab.lab.circuits.patching import meaning, pair_view, sweep_view


@st.composite
def sweeps(draw):
    kind = draw(st.sampled_from(["residual", "heads", "mlp"]))
    layers = tuple(range(draw(st.integers(1, 4))))
    columns = (None,) if kind == "mlp" else tuple(range(draw(st.integers(1, 5))))
    shape = (len(layers), len(columns))
    values = np.array(draw(st.lists(st.floats(-10, 10), min_size=shape[0] * shape[1],
                                    max_size=shape[0] * shape[1]))).reshape(shape)  # fmt: skip
    done = draw(st.integers(0, values.size))
    values.ravel()[done:] = np.nan  # a cancelled sweep: the patches after `done` never ran
    clean, corrupt = 4.0, draw(st.sampled_from([-2.0, 4.0]))
    with np.errstate(divide="ignore", invalid="ignore"):
        recovered = (values - corrupt) / (clean - corrupt) if clean != corrupt else np.full(shape, np.nan)
    skipped = np.zeros(shape, dtype=bool)
    site = "pre" if kind == "residual" else None
    return SimpleNamespace(kind=kind, site=site, layers=layers, columns=columns, values=values,
                           recovered=recovered, skipped=skipped, done=done)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(sweeps())
def test_a_sweeps_map_status_and_top_cells_claim_its_numbers(sweep):
    total = sweep.values.size
    cancelled = sweep.done < total
    v = sweep_view(sweep, total=total, cancelled=cancelled, metric="logit_difference",
                   clean_tokens=[f"w{i}" for i in range(5)], kv_heads=[0, 0, 1, 1, 2], position=4,
                   answer_ids=(7, 9), job="j")  # fmt: skip
    assert v["status"]["claims"] == {"done": sweep.done, "total": total, "cancelled": cancelled}
    if cancelled:
        assert v["status"]["text"] == (
            f"Cancelled after {sweep.done} of {total} patches: the {total - sweep.done} not computed are "
            "blank."
        )
    blank = [x is None for row in v["map"]["values"] for x in row]
    assert blank == [not np.isfinite(r) for r in sweep.recovered.ravel()]
    for i, row in enumerate(v["map"]["titles"]):
        for j, title in enumerate(row):
            if np.isnan(sweep.values[i, j]):
                assert title.endswith("not computed (the sweep was cancelled first)")
            elif np.isfinite(sweep.recovered[i, j]):
                assert f"recovered {fmt.rounded(sweep.recovered[i, j], 3)} (" in title
                assert f"exactly {fmt.precise(sweep.values[i, j])})" in title
            pieces = v["map"].get("pieces", [[None] * len(row)] * len(v["map"]["titles"]))[i][j]
            if np.isnan(sweep.values[i, j]):
                assert pieces is None  # nothing to pick: not computed
                continue
            # the words placed under the map once the cell is picked: the fraction and the metric after
            # the patch, each with its program; joined, the cell's title
            assert "".join(p if isinstance(p, str) else p["display"] for p in pieces) == title
            cell = cell_how(sweep, i, j)
            after = (fmt.rounded(sweep.values[i, j], 4) if np.isfinite(sweep.recovered[i, j])
                     else fmt.precise(sweep.values[i, j]), {**cell, "quantity": "value"}, sweep.values[i, j])
            recovered = [(fmt.rounded(sweep.recovered[i, j], 3), cell, sweep.recovered[i, j])]
            marked = [(p["display"], p["how"], p["value"]) for p in pieces if not isinstance(p, str)]
            assert marked == (recovered if np.isfinite(sweep.recovered[i, j]) else []) + [after]
            assert v["map"]["hows"][i][j] == (cell if np.isfinite(sweep.recovered[i, j]) else None)
    finite = [(i, j) for i in range(len(sweep.layers)) for j in range(len(sweep.columns))
              if np.isfinite(sweep.recovered[i, j])]  # fmt: skip
    best = sorted(finite, key=lambda c: (-sweep.recovered[c], c))[:3]
    assert v["top"]["claims"]["top"] == [[sweep.layers[i], sweep.columns[j], float(sweep.recovered[i, j])]
                                         for i, j in best]  # fmt: skip
    assert [(p["display"], p["how"]) for p in v["top"]["pieces"] if not isinstance(p, str)] == [
        (fmt.rounded(sweep.recovered[i, j], 2), cell_how(sweep, i, j)) for i, j in best]


def cell_how(sweep, i: int, j: int) -> dict:
    """A cell's fraction recovered as "How is this computed?" names it
    (the metric at token 4, answers 7 and 9)."""
    target = {"residual": "resid_pre", "heads": "head", "mlp": "mlp"}[sweep.kind]
    column = {} if sweep.columns[j] is None else {"column": sweep.columns[j]}
    return {"kind": "patch", "quantity": "recovered", "target": target, "layer": sweep.layers[i], **column,
            "position": 4, "answers": "7,9"}  # fmt: skip


def test_the_pair_says_both_runs_where_the_prompts_differ_and_what_recovered_means():
    v = pair_view(metric="logit_difference", clean_value=2.857, corrupt_value=-8.704,
                  clean_ids=[1, 2, 3, 4], corrupt_ids=[1, 5, 6, 4],
                  clean_tokens=["The", " E", "iffel", " of"],
                  corrupt_tokens=["The", " Col", "osse", " of"], answers=(" Paris", " Rome"),
                  position=3)  # fmt: skip
    clean, corrupt = ({"kind": "patch", "quantity": q} for q in ("clean", "corrupt"))  # no answers given
    assert v["values"] == {
        "text": "After 3 ␣of: logit(␣Paris) − logit(␣Rome) is 2.857 on the clean prompt and -8.704 on the "
        "corrupted one.",
        "claims": {"clean": 2.857, "corrupt": -8.704, "position": 3},
        "pieces": ["After 3 ␣of: logit(␣Paris) − logit(␣Rome) is ",
                   {"display": "2.857", "how": clean, "value": 2.857}, " on the clean prompt and ",
                   {"display": "-8.704", "how": corrupt, "value": -8.704}, " on the corrupted one."],
    }  # fmt: skip
    assert v["differ_words"]["claims"] == {"positions": [1, 2], "first": 1}
    assert v["differ_words"]["text"] == (
        "The prompts differ at 2 tokens (1 ␣E / ␣Col, 2 iffel / osse). Before token 1 the two runs are the "
        "same bits (causal attention), so a residual patch there recovers exactly 0."
    )
    assert v["recovered"]["claims"] == {"gap": 2.857 + 8.704}
    same = pair_view(metric="cosine", clean_value=1.0, corrupt_value=1.0, clean_ids=[1], corrupt_ids=[1],
                     clean_tokens=["a"], corrupt_tokens=["a"], answers=None, position=None)  # fmt: skip
    assert same["recovered"]["claims"] == {"gap": 0.0}
    assert same["differ_words"] == {"text": "The two prompts are the same tokens.",
                                    "claims": {"positions": [], "first": None}}  # fmt: skip


def test_what_a_patch_means_is_said_for_each_sweep():
    assert meaning("residual", "post", decoder=True)["text"].startswith(
        "A cell (layer l, token p): run the corrupted prompt, but put the clean run's residual stream "
        "leaving block l at token p in its place")
    heads = meaning("heads", None, decoder=True)
    assert "the shared key and value head is left alone, so no other head changes" in heads["text"]
    assert heads["claims"] == {"kind": "heads", "site": None}
    assert "the cosine of the sentence embedding" in meaning("mlp", None, decoder=False)["text"]
