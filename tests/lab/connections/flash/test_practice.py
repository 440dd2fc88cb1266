"""The flash lab's challenges, checked on the learner's input: met, not yet, and the words' claims."""

from __future__ import annotations

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.flash import CONTROLS, LAB
from attnlab.lab.connections.flash.walk import walk


def check(cid: str, response=None, **given) -> dict:
    return LAB.check(cid, read(CONTROLS, given, "inputs"), response)


def test_tile_sizes_is_met_by_rounding_and_names_the_measured_change():
    met = check("tile-sizes", "rounding", n=40, tile=8, row=3)
    assert met["met"] and met["verdict"]["text"] == "✓ Goal met."
    claims = met["words"]["claims"]
    assert claims["tiles"] == [8, 1] and 0 <= claims["change"] <= 1e-15
    not_yet = check("tile-sizes", "keys", n=40, tile=8, row=3)
    assert not not_yet["met"] and not_yet["words"]["claims"]["change"] == claims["change"]


def test_no_rescale_follows_the_rows_largest_score():
    """Row 31 of 32 (causal: it sees every key): a first tile that holds its largest score never
    rescales, while its block still walks at least two tiles (tile <= row)."""
    w = walk(n=32, tile=4, row=31, keys=32, window=8, seed=0)
    largest = int(w.causal.weights[31].argmax())
    met = check("no-rescale", n=32, tile=largest + 1, row=31)  # the first tile holds the largest score
    assert met["met"] == (largest + 1 <= 31) and met["words"]["claims"]["rescaled_at"] == []
    if largest >= 1:
        low = check("no-rescale", n=32, tile=1, row=31)
        assert not low["met"] and low["words"]["claims"]["rescaled_at"]
    single = check("no-rescale", n=8, tile=8)
    assert not single["met"] and "single tile (it is the only one there is)" in single["words"]["text"]


def test_a_row_whose_block_walks_one_tile_is_told_the_causal_mask_skips_the_rest():
    skipped = check("no-rescale", n=32, tile=8, row=3)
    assert not skipped["met"] and skipped["words"]["claims"]["tiles"] == 1
    assert "row 3 walks a single tile (the causal mask skips the other 3 for its block)" in (
        skipped["words"]["text"]
    )


def test_window_four():
    assert check("window-four", n=16, window=4)["met"]
    fewer = check("window-four", n=16, window=6)
    assert (
        not fewer["met"]
        and fewer["words"]["claims"]["unchanged_rows"] == 6
        and "fewer" in fewer["words"]["text"]
    )
    assert not check("window-four", n=4, window=4)["met"]
