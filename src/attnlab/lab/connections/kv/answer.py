"""The KV-cache lab's answer for one input: pictures, sentences, every number, the numbers as data."""

from __future__ import annotations

from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.kv import words
from attnlab.lab.connections.kv.generation import Generation
from attnlab.lab.connections.kv.walk import (
    BLOCK,
    LETTERS,
    MAX_LEN,
    KVWalk,
    Shapes,
    per_token,
    shapes_of,
    walk,
)
from attnlab.lab.connections.kv.words import MB, size
from attnlab.lab.connections.live import Measured, status_words
from attnlab.lab.connections.models import called

POOL_WIDTH = 8  # blocks drawn per row of the pool
SHAPES, LIVE = "shapes", "kv"  # the runs this lab asks for
DOING = {
    SHAPES: "The cache's size uses {called}'s shapes from the model registry",
    LIVE: "{called} generates after your prompt, measuring its caches",
}


def kinds(s: Shapes) -> tuple[tuple[str, str, str], ...]:
    return (
        ("mha", f"MHA: {s.query_heads} key/value heads", "other"),
        ("gqa", f"GQA ({s.called}): {s.kv_heads}", "full"),
        ("mqa", "MQA: 1", "now"),
    )


def _sizes(w: KVWalk) -> list[dict]:
    assert w.shapes is not None
    z = w.sizes()
    b = per_token(w.shapes, w.bytes_each)
    xs = list(range(0, 8193, 256))
    return [
        pic.bars(
            "sizes",
            f"The cache at {w.tokens:,} token{'s' if w.tokens != 1 else ''}",
            f"Megabytes of K and V for all {w.shapes.layers} layers, with {w.shapes.query_heads}, "
            f"{w.shapes.kv_heads} or 1 key/value heads.",
            [
                {"label": label, "value": z[k], "text": size(z[k]), "cls": cls}
                for k, label, cls in kinds(w.shapes)
            ],
        ),
        pic.lines(
            "growth",
            "The cache as the tokens grow",
            "Megabytes against tokens: a straight line for each, its slope the bytes per token. The marker "
            f"is {w.tokens:,} tokens.",
            pic.axis("tokens", 0, 8192),
            pic.axis("MB", 0, b["mha"] * 8192 / MB),
            [
                {"name": label, "cls": cls, "xs": xs, "ys": [b[k] * x / MB for x in xs], "dots": False}
                for k, label, cls in kinds(w.shapes)
            ],
            marker=w.tokens,
            marker_text=f"{w.tokens:,}",
        ),
    ]


def _pictures(w: KVWalk) -> list[dict]:
    pool = w.cache.owner
    rows = (len(pool) + POOL_WIDTH - 1) // POOL_WIDTH
    fill, texts, blocked = [], [], []
    for i in range(rows):
        f, t, x = [], [], []
        for j in range(POOL_WIDTH):
            p = i * POOL_WIDTH + j
            owner = pool[p] if p < len(pool) else -1
            if owner < 0:
                f.append(0.0), t.append(""), x.append(True)
                continue
            table = w.cache.tables[owner]
            last = table[-1] == p
            used = w.lengths[owner] - (len(table) - 1) * BLOCK if last else BLOCK
            f.append(used / BLOCK), t.append(LETTERS[owner]), x.append(False)
        fill.append(f), texts.append(t), blocked.append(x)
    sizes = _sizes(w) if w.shapes is not None else []
    return [
        *sizes,
        pic.heatmap(
            "pool",
            "The pool of blocks",
            f"Each cell is a block of {BLOCK} positions, lettered by the request that holds it; ink shows "
            "how "
            "full it is. Requests that grow in turn interleave.",
            [str(i * POOL_WIDTH) for i in range(rows)],
            [str(j) for j in range(POOL_WIDTH)],
            fill,
            texts=texts if len(pool) <= 64 else None,
            blocked=blocked,
        ),
        pic.bars(
            "waste",
            "Unused positions per request",
            f"Reserving {MAX_LEN} positions per request against taking blocks of {BLOCK} as needed.",
            [
                item
                for r in range(w.requests)
                for item in (
                    {
                        "label": f"{LETTERS[r]}: reserved {MAX_LEN}",
                        "value": w.contiguous_waste()[r],
                        "text": str(w.contiguous_waste()[r]),
                        "cls": "other",
                    },
                    {
                        "label": f"{LETTERS[r]}: paged",
                        "value": w.paged_waste()[r],
                        "text": str(w.paged_waste()[r]),
                        "cls": "full",
                    },
                )
            ],
        ),
    ]


def _numbers(w: KVWalk) -> list[dict]:
    tables = [
        {
            "title": "Block tables",
            "columns": ["request", "tokens", "blocks (in order)", "unused positions"],
            "rows": [
                [LETTERS[r], str(n), ", ".join(map(str, w.cache.tables[r])), str(w.paged_waste()[r])]
                for r, n in enumerate(w.lengths)
            ],
        },
    ]
    if w.shapes is None:
        return tables
    b = per_token(w.shapes, w.bytes_each)
    z = w.sizes()
    sizes = {
        "title": "Bytes of K and V",
        "columns": ["attention", "per token, layer and head", "per token", f"at {w.tokens:,} tokens"],
        "rows": [
            [label, f"{2 * w.shapes.head_dim * w.bytes_each:,}", f"{b[k]:,}", f"{z[k]:,}"]
            for k, label, _ in kinds(w.shapes)
        ],
    }
    return [sizes, *tables]


def data(w: KVWalk, g: Generation | None) -> dict:
    out = {
        "lengths": w.lengths,
        "tables": [w.cache.tables[r] for r in range(w.requests)],
        "paged_waste": w.paged_waste(),
        "contiguous_waste": w.contiguous_waste(),
    }
    if w.shapes is not None:
        out = {"per_token": per_token(w.shapes, w.bytes_each), "sizes": w.sizes(), **out}
    if g is not None:
        out["live"] = g.data()
    return out


def done(measured: dict, run: str) -> dict | None:
    m = measured.get(run)
    return m.data if m is not None and m.status == "done" else None


def current(values: dict, measured: dict) -> tuple[KVWalk, Generation | None]:
    """The walk on the registry's shapes (when passed in) and the live generation (when asked and done)."""
    facts = done(measured, SHAPES)
    shapes = shapes_of(facts) if facts is not None else None
    w = walk(
        tokens=values["tokens"], precision=values["precision"], requests=values["requests"],
        seed=values["seed"], shapes=shapes,
    )  # fmt: skip
    run = done(measured, LIVE) if values["live"] == "on" else None
    return w, (Generation(shapes, run) if run is not None and shapes is not None else None)


def _waiting(values: dict, measured: dict) -> list[dict]:
    """A sentence for each run asked and not in: where it stands."""
    asked = [SHAPES] + ([LIVE] if values["live"] == "on" else [])
    out = []
    for run in asked:
        m: Measured | None = measured.get(run)
        if m is None or m.status != "done":
            out.append(status_words(m, DOING[run].format(called=called(values["model"]))))
    return out


def answer(values: dict, measured: dict) -> dict:
    w, g = current(values, measured)
    pictures = _pictures(w)
    numbers = _numbers(w)
    said = words.sentences(w)
    if g is not None:
        pictures.insert(2 if w.shapes is not None else 0, g.picture())
        numbers.insert(1, g.table())
        said = [*said[:2], *g.sentences(), *said[2:]]
    return {"pictures": pictures, "words": [*_waiting(values, measured), *said], "numbers": numbers,
            "data": data(w, g)}  # fmt: skip
