"""The flash lab's sentences, each built beside its numbers with the claims it makes (``lab.said``)."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.flash.walk import BYTES_16, EXACT, PAGE_N, UNCHANGED, FlashWalk
from attnlab.lab.connections.pictures import power_text
from attnlab.lab.said import said


def _keys(a: int, b: int) -> str:
    return f"key {a}" if a == b else f"keys {a}–{b}"


def _tiles(a: int, b: int) -> str:
    return f"key tile {a}" if a == b else f"key tiles {a}–{b}"


def walked(w: FlashWalk) -> dict:
    """Where the walk is: the row's block, the tiles it walks under the causal mask and the state after
    the tile just finished. Claims the block, ``tile`` (1-based), ``tiles`` walked, ``skipped``,
    ``all_tiles``, the tile's ``keys`` [start, stop), ``masked`` (its keys after the row), m, l, output."""
    t = w.shown
    step = w.steps[t]
    i0, i1 = w.block
    if w.skipped:
        reach = (
            f"Under the causal mask its block walks {_tiles(1, w.tiles)} of {w.all_tiles} and skips "
            f"{_tiles(w.tiles + 1, w.all_tiles)}: every key there comes after every row of the block."
        )
    elif w.all_tiles == 1:
        reach = "Its block walks the one key tile there is, under the causal mask."
    else:
        reach = f"Under the causal mask its block walks every key tile, 1–{w.all_tiles}."
    masked = w.masked_in_tile
    inside = ""
    if masked:
        hidden = str(masked[0]) if masked[1] - masked[0] == 1 else f"{masked[0]}–{masked[1] - 1}"
        inside = f", of which {hidden} {'is' if masked[1] - masked[0] == 1 else 'are'} masked for row {w.row}"
    m_shown, l_shown = fmt.rounded(w.m(t)), fmt.rounded(w.l(t))
    return said(
        f"Row {w.row} is in the query block of rows {i0}–{i1 - 1}. {reach} After key tile {t + 1} "
        f"({_keys(step.k_start, step.k_stop - 1)}{inside}), its running maximum is m = {m_shown}, its "
        f"running sum is l = {l_shown} and its output so far, O / l, is {fmt.vector(w.so_far(t))}.",
        row=w.row,
        block=[i0, i1],
        causal=True,
        tile=t + 1,
        tiles=w.tiles,
        all_tiles=w.all_tiles,
        skipped=w.skipped,
        keys=[step.k_start, step.k_stop],
        masked=masked,
        m=w.m(t),
        l=w.l(t),
        output=w.so_far(t),
    )


def rescaled(w: FlashWalk) -> dict:
    t = w.shown
    if t == 0:
        return said(
            "The first tile starts the row: m is its largest score, l the sum of its exponentials, "
            "and nothing earlier needs rescaling.",
            tile=1,
            rescaled=False,
        )
    before, after = w.m(t - 1), w.m(t)
    if after > before:
        return said(
            f"Tile {t + 1} raised the maximum from {fmt.rounded(before)} to {fmt.rounded(after)}, so the sum "
            f"and the output kept so far were multiplied by e^(m − m′) = {fmt.rounded(w.factor(t))} before "
            "this tile's terms were added.",
            tile=t + 1,
            rescaled=True,
            m_before=before,
            m_after=after,
            factor=w.factor(t),
        )
    return said(
        f"Tile {t + 1} did not raise the maximum ({fmt.rounded(after)}), so nothing kept so far was "
        "rescaled: the factor e^(m − m′) is 1.",
        tile=t + 1,
        rescaled=False,
        m_before=before,
        m_after=after,
        factor=w.factor(t),
    )


def exact(w: FlashWalk) -> dict:
    """The walk's end against plain causal attention: like with like (claims ``causal``)."""
    diff, same = w.difference(), w.identical()
    claims = {"difference": diff, "bound": EXACT, "identical": same, "within": diff <= EXACT, "causal": True}
    done = "After the block's last tile, dividing by l once gives plain causal attention's rows for the block"
    if same:
        return said(f"{done} bit for bit.", **claims)
    if diff <= EXACT:
        return said(
            f"{done} to within {fmt.scientific(EXACT, 1)} of the largest value (largest difference "
            f"{fmt.scientific(diff)}): the same maths under the same mask, not the same bits, because the "
            "sums are taken in another order.",
            **claims,
        )
    return said(
        f"{done} up to a difference of {fmt.scientific(diff)} of the largest value, more than "
        f"{fmt.scientific(EXACT, 1)}: the sums are taken in another order.",
        **claims,
    )


def memory(w: FlashWalk) -> dict:
    full = w.n * w.n
    return said(
        f"Plain attention holds the {w.n} × {w.n} matrix of weights, masked or not: {full:,} numbers per "
        "head. The tiled pass "
        f"holds one {w.tile} × {w.tile} tile of scores at a time, with m, l and O for its {w.tile} "
        f"row{'s' if w.tile != 1 else ''}: "
        f"{w.held():,} numbers.",
        n=w.n,
        matrix_numbers=full,
        tile=w.tile,
        held_numbers=w.held(),
    )


def page_figure() -> dict:
    numbers = PAGE_N * PAGE_N
    gigabytes = numbers * BYTES_16 / 1e9
    return said(
        f"At n = {PAGE_N:,} the matrix is {power_text(10)} numbers per head, {fmt.rounded(gigabytes)} GB in "
        "16-bit precision (2 bytes a number); the tiled pass never holds it.",
        n=PAGE_N,
        numbers=numbers,
        bytes_each=BYTES_16,
        gigabytes=gigabytes,
    )


def window(w: FlashWalk) -> dict:
    changes = w.window_changes()
    changed = [i for i, c in enumerate(changes) if c > UNCHANGED]
    row_change = changes[w.row]
    first = max(0, w.row - w.window + 1)
    claims = {
        "window": w.window,
        "row": w.row,
        "row_change": row_change,
        "unchanged_rows": w.n - len(changed),
        "changed_rows": len(changed),
        "largest": max(changes),
        "threshold": UNCHANGED,
        "row_sees": [first, w.row + 1],
    }
    if w.row >= w.window:
        moved = fmt.rounded(row_change) if fmt.rounded(row_change) != "0" else fmt.scientific(row_change)
        row_words = (
            f"row {w.row} sees {_keys(first, w.row)} instead of {_keys(0, w.row)}, and its output moves by "
            f"up to {moved}"
        )
    else:
        row_words = (
            f"row {w.row} still sees every key it saw before ({_keys(0, w.row)}), so its output is unchanged"
        )
    if not changed:
        total = "No row's output changes: the window holds every earlier key."
    else:
        kept = w.n - len(changed)
        total = (
            f"{kept} of {w.n} rows {'is' if kept == 1 else 'are'} unchanged and {len(changed)} "
            f"change{'s' if len(changed) == 1 else ''}, by up to "
            f"{fmt.rounded(max(changes))}: a window computes something else, where tiling computed the same."
        )
    keys = f"{w.window} key" if w.window == 1 else f"{w.window} keys"
    claims["causal"] = True
    return said(
        f"With a window of {keys}, against plain causal attention (both causal, like the walk), {row_words}. "
        f"{total}",
        **claims,
    )


def sentences(w: FlashWalk) -> list[dict]:
    return [walked(w), rescaled(w), exact(w), memory(w), page_figure(), window(w)]
