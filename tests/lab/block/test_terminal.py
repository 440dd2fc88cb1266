"""``attnlab block``'s printout: the page's own strings, line by line, and ``--json`` by paper names."""

from __future__ import annotations

import itertools
import re

import pytest

from attnlab.lab import numbers as fmt
from attnlab.lab.block import terminal
from attnlab.lab.block.data import NORMS, POSITIONS, given_weights
from attnlab.lab.block.page import block_page
from attnlab.lab.block.walk import walk


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("positions", POSITIONS)
@pytest.mark.parametrize("heads_on", list(itertools.product([True, False], repeat=2)))
def test_every_line_is_the_pages_string(norm, positions, heads_on):
    page = block_page(norm=norm, positions=positions, heads_on=heads_on)
    lines = terminal.lines(page)
    stripped = [line.strip() for line in lines]
    said = [page["summary"], page["norm_compare"]["summary"], page["rope"]["status"]]
    said += [page["rope"]["demo"]["sentence"]]
    said += [s["caption"] for s in page["steps"]] + [h["sentence"] for h in page["heads"]]
    said += [a["sentence"] for a in page["ablation"]]
    for s in said:
        assert s["text"] in stripped
    assert [line for line in lines if line.startswith("Step ")] == [s["heading"] for s in page["steps"]]
    for step in page["steps"]:
        for t in step["tensors"]:
            assert f"{t['label']}{t['formula_shown']}" in stripped
            for label, row in zip(t["rows"], t["display"]):
                assert f"{label}  [{', '.join(row)}]" in stripped
    at = lines.index(terminal.OUTPUT_HEADING)
    assert lines[at + 1 :] == [f"  {r}  {fmt.precise_vector(v)}" for r, v in zip("ABC", walk(
        norm=norm, positions=positions, heads_on=heads_on).output)]
    # no tensor's JSON name (norm_1.var, head1.q, mlp.hidden) in what a person reads
    assert not any(re.search(r"\b(norm_[12]|head[12]|mlp|residual_[12])\.", line) for line in lines)


def test_json_names_the_weights_as_the_paper_does():
    w = walk(positions="rope", heads_on=(True, False))
    data = terminal.to_json(w)
    weights = given_weights()
    assert data["w_q"] == [h["w_q"] for h in weights["heads"]] and data["w_o"] == weights["w_o"]
    assert data["norm_1"] == {**weights["norm_1"], "eps": 1e-5}
    assert data["intermediates"] == w.tensors and data["output"] == w.output
    assert data["heads_on"] == [True, False] and data["positions"] == "rope"
