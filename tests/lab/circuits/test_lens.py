"""The logit lens's words: the block where the answer first leads, named, against the ranks."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab import numbers as fmt
from attnlab.lab.circuits.lens import lens_view, rank_words


@st.composite
def lenses(draw):
    n = draw(st.integers(1, 8))
    ranks = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    ranks[-1] = 0  # the answer is the top token after the last block, by definition
    is_top = [r == 0 for r in ranks]
    first = is_top.index(True)
    settled = n - 1
    while settled > 0 and is_top[settled - 1]:
        settled -= 1
    follow = draw(st.booleans())
    p = np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
    return SimpleNamespace(position=1, top_ids=np.tile(np.arange(5), (n, 1)), top_p=np.full((n, 5), 0.2),
                           answer=0, token=3 if follow else 0, token_p=p, token_rank=np.array(ranks),
                           first_top1=first, settled=settled)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(lenses())
def test_the_lens_names_the_first_block_where_the_answer_leads(lens):
    texts = {i: f" t{i}" for i in range(5)}
    v = lens_view(lens, tokens=["a", " b"], texts=texts, job="j")
    c = v["named"]["claims"]
    assert c == {"answer": "␣t0", "first_top1": lens.first_top1, "settled": lens.settled}
    assert f"first becomes the top token after block {lens.first_top1} " in v["named"]["text"]
    if lens.settled != lens.first_top1:
        assert f"stays on top from block {lens.settled} on" in v["named"]["text"]
    for layer, row in enumerate(v["layers"]):
        assert row["is_top"] == (lens.token_rank[layer] == 0)
        assert row["token_p"] == lens.token_p[layer]
        assert row["token_p_display"] == fmt.percent(lens.token_p[layer])
        assert row["rank_display"] == rank_words(int(lens.token_rank[layer]))
    assert (v["followed"] is None) == (lens.token == lens.answer)


def test_ranks_and_small_probabilities_print_whole():
    assert [rank_words(r) for r in (0, 1, 2, 10, 13672)] == ["1st", "2nd", "3rd", "11th", "13,673rd"]
    # one function for every probability the lab shows (lab/numbers.py): two significant digits below 1%
    assert fmt.percent(0.000012) == "0.0012%" and fmt.percent(0.5) == "50%" and fmt.percent(0.0) == "0%"
