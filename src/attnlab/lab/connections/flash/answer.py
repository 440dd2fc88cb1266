"""The flash lab's answer for one input: its pictures, sentences, every number, and the numbers as data."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.flash import words
from attnlab.lab.connections.flash.walk import BYTES_16, PAGE_N, FlashWalk, walk


def _tiles_picture(w: FlashWalk) -> dict:
    shares = w.tile_shares()
    t = w.shown
    cols = [f"{j0}–{min(w.n, j0 + w.tile) - 1}" if w.tile > 1 else str(j0) for j0 in range(0, w.n, w.tile)]
    texts = [fmt.percents(shares)] if w.all_tiles <= 16 else None  # the row's tiles: adding up to 100
    done = "tile 1 is" if t == 0 else f"tiles 1–{t + 1} are"
    skipped = (
        f"; the causal mask skips {'tile' if w.skipped == 1 else 'tiles'} {w.tiles + 1}"
        f"{'' if w.skipped == 1 else f'–{w.all_tiles}'}"
        if w.skipped
        else ""
    )
    return pic.heatmap(
        "tiles",
        "Key tiles walked by row " + str(w.row),
        f"Row {w.row}'s query block walks the keys tile by tile, left to right, under the causal mask: "
        f"{done} done of the {w.tiles} it walks{skipped}. Hatched tiles are not walked (yet). Ink shows the "
        f"share of row {w.row}'s causal attention each tile holds in the end; the outlined tile is the one "
        "just finished.",
        [f"row {w.row}"],
        cols,
        [shares],
        blocked=[[j > t for j in range(w.all_tiles)]],
        texts=texts,
        marks=[pic.mark("box", t, rows=(0, 1))],
    )


def _running(w: FlashWalk, name: str, title: str, cls: str, values: list[float]) -> dict:
    xs = list(range(1, w.tiles + 1))
    lo, hi = min(values), max(values)
    return pic.lines(
        name,
        title,
        f"{title} of row {w.row} after each key tile; the marker is the tile just finished (tile "
        f"{w.shown + 1}).",
        pic.axis("key tile", 1, max(2, w.tiles)),
        pic.axis(title, lo, hi if hi > lo else lo + 1.0),
        [{"name": title, "cls": cls, "xs": xs, "ys": values}],
        marker=w.shown + 1,
        marker_text=f"tile {w.shown + 1}",
    )


def _output_picture(w: FlashWalk) -> dict:
    so_far, final = w.so_far(w.shown), [float(x) for x in w.causal.output[w.row]]
    items = []
    for j in range(len(final)):
        items.append(
            {
                "label": f"O / l, coordinate {j + 1}",
                "value": so_far[j],
                "text": fmt.rounded(so_far[j]),
                "cls": "now",
            }
        )
        items.append(
            {
                "label": f"causal attention, coordinate {j + 1}",
                "value": final[j],
                "text": fmt.rounded(final[j]),
                "cls": "full",
            }
        )
    return pic.bars(
        "output",
        "Output so far against plain causal attention",
        f"Row {w.row}'s output after tile {w.shown + 1}, O / l, beside plain causal attention's output, "
        "coordinate by coordinate. After the block's last tile the two agree.",
        items,
    )


def _memory_picture(w: FlashWalk) -> dict:
    items = [
        {"label": f"the {w.n} × {w.n} matrix", "value": w.n * w.n, "text": f"{w.n * w.n:,}", "cls": "full"},
        {"label": "one tile with its m, l and O", "value": w.held(), "text": f"{w.held():,}", "cls": "now"},
        {
            "label": f"the matrix at n = {PAGE_N:,}",
            "value": PAGE_N * PAGE_N,
            "text": pic.power_text(10),
            "cls": "page",
        },
    ]
    return pic.bars(
        "memory",
        "Numbers held at once, per head",
        "How many numbers each way of computing holds at once, on a log scale: each step of the scale is ten "
        "times the one before.",
        items,
        log=True,
    )


def _window_pictures(w: FlashWalk) -> list[dict]:
    seen = [(max(0, i - w.window + 1), i + 1) for i in range(w.n)]
    causal = [(0, i + 1) for i in range(w.n)]
    changes = w.window_changes()
    band = pic.bands(
        "window",
        f"A sliding window of {fmt.plural(w.window, 'key')}",
        "Each row (a query) sees the keys in its dark band; the pale band is what causal attention would "
        "let "
        f"it see. Row {w.row} is outlined.",
        w.n,
        seen,
        causal,
        row=w.row,
        rows_label="query",
        cols_label="key",
    )
    change = pic.lines(
        "window-change",
        "What the window changes",
        "The largest change in each row's output when the window replaces plain causal attention: rows "
        f"0–{min(w.window, w.n) - 1} see every earlier key either way.",
        pic.axis("row", 0, max(1, w.n - 1)),
        pic.axis("largest change", 0.0, max(max(changes), 1e-3)),
        [{"name": "largest change", "cls": "full", "xs": list(range(w.n)), "ys": changes, "dots": w.n <= 64}],
        marker=w.row,
        marker_text=f"row {w.row}",
    )
    return [band, change]


def _numbers(w: FlashWalk) -> list[dict]:
    """The tables: the walk, the row's causal weights by key, the window's change by row, the inputs.
    Each table holds one kind of row (a tile, a key, a query row) and says it is causal."""
    walk_rows = []
    for t, step in enumerate(w.steps):
        walk_rows.append(
            [
                str(t + 1),
                f"{step.k_start}–{step.k_stop - 1}",
                fmt.rounded(w.m(t)),
                fmt.rounded(w.l(t)),
                "—" if t == 0 else fmt.rounded(w.factor(t)),
                fmt.vector(w.so_far(t)),
            ]
        )
    weights = w.causal.weights[w.row]
    by_key = [
        [str(j), fmt.rounded(float(weights[j])) if j <= w.row else "masked", fmt.vector(w.v[j])]
        for j in range(w.n)
    ]
    by_row = [
        [str(i), f"{max(0, i - w.window + 1)}–{i}" if i >= w.window else f"0–{i} (all)", fmt.rounded(c)]
        for i, c in enumerate(w.window_changes())
    ]
    return [
        {
            "title": f"Row {w.row}, tile by tile",  # under the causal mask, as the sentences say
            "columns": ["tile", "keys", "m", "l", "e^(m − m′)", "O / l"],
            "rows": walk_rows,
        },
        {
            "title": f"Plain causal attention for row {w.row}: its weight on each key",
            "columns": ["key", f"row {w.row}'s weight", "value"],
            "rows": by_key,
        },
        {
            "title": f"The window of {w.window} against plain causal attention: each row's largest change",
            "columns": ["row", "keys it sees", "largest change"],
            "rows": by_row,
        },
        {
            "title": "Inputs (seeded)",
            "columns": ["position", "q", "k", "v"],
            "rows": [
                [str(i), fmt.vector(w.q[i]), fmt.vector(w.k[i]), fmt.vector(w.v[i])] for i in range(w.n)
            ],
        },
    ]


def data(w: FlashWalk) -> dict:
    """Every number the lab shows, at full precision: what the program prints and the export keeps."""
    return {
        "block": list(w.block),
        "m": [w.m(t) for t in range(w.tiles)],
        "l": [w.l(t) for t in range(w.tiles)],
        "output_so_far": [w.so_far(t) for t in range(w.tiles)],
        "full_output": [float(x) for x in w.causal.output[w.row]],  # plain (untiled) causal attention
        "full_weights": [float(x) for x in w.causal.weights[w.row]],
        "difference": w.difference(),
        "matrix_numbers": w.n * w.n,
        "held_numbers": w.held(),
        "page_gigabytes": PAGE_N * PAGE_N * BYTES_16 / 1e9,
        "window_change": w.window_changes(),
    }


def answer(values: dict) -> dict:
    w = walk(**values)
    pictures = [
        _tiles_picture(w),
        _running(w, "m", "Running maximum m", "now", [w.m(t) for t in range(w.tiles)]),
        _running(w, "l", "Running sum l", "full", [w.l(t) for t in range(w.tiles)]),
        _output_picture(w),
        _memory_picture(w),
        *_window_pictures(w),
    ]
    return {"pictures": pictures, "words": words.sentences(w), "numbers": _numbers(w), "data": data(w)}
