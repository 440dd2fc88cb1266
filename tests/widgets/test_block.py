"""Block: the block walk's steps with every number, from lab.block_page; inputs checked, old value kept."""

from __future__ import annotations

import pytest

from attnlab.lab.block.page import block_page
from attnlab.widgets import Block


def test_the_walk_is_block_pages_steps():
    b = Block()
    page = block_page()
    assert b._page["steps"] == page["steps"]
    assert [s["title"] for s in b._page["steps"]][:2] == ["Embed", "Project"]
    assert b._page["summary"] == page["summary"]


def test_changing_the_norm_placement_recomputes_every_number():
    b = Block()
    b.step = 7
    b.norm = "post"
    want = block_page(norm="post")
    assert b._page["steps"] == want["steps"] and b.page["output"] == want["output"]
    assert b.page["output"] != block_page()["output"]
    assert b.step == 7


def test_bad_inputs_are_refused_and_the_old_value_kept():
    b = Block(positions="rope")
    with pytest.raises(ValueError, match="norm"):
        b.norm = "sideways"
    assert b.norm == "pre"
    with pytest.raises(ValueError, match="step must be 0 to 7; got 8"):
        b.step = 8
    assert b.step == 0
    assert b._page["steps"] == block_page(positions="rope")["steps"]


def test_the_views_words_are_the_labs():
    b = Block(norm="post")
    page = block_page(norm="post")
    assert b._page["words"] == page["words"] and b._page["choices"] == page["choices"]
    assert b._page["words"]["widget"]["title"] == "One transformer block, step by step"
    assert Block.TITLE == page["words"]["widget"]["page_title"]  # the snapshot page's title
