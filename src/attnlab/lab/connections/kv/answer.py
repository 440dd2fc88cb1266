"""The KV-cache lab's answer for one input: pictures, sentences, every number, the numbers as data."""

from __future__ import annotations

from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.kv import words
from attnlab.lab.connections.kv.walk import BLOCK, LETTERS, MAX_LEN, SMOLLM2, KVWalk, per_token, walk
from attnlab.lab.connections.kv.words import MB, size

KINDS = (
    ("mha", "MHA: 9 key/value heads", "other"),
    ("gqa", "GQA (SmolLM2): 3", "full"),
    ("mqa", "MQA: 1", "now"),
)
POOL_WIDTH = 8  # blocks drawn per row of the pool


def _pictures(w: KVWalk) -> list[dict]:
    z = w.sizes()
    b = per_token(SMOLLM2, w.bytes_each)
    xs = list(range(0, 8193, 256))
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
    return [
        pic.bars(
            "sizes",
            f"The cache at {w.tokens:,} token{'s' if w.tokens != 1 else ''}",
            "Megabytes of K and V for all 30 layers, with 9, 3 or 1 key/value heads.",
            [{"label": label, "value": z[k], "text": size(z[k]), "cls": cls} for k, label, cls in KINDS],
        ),
        pic.lines(
            "growth",
            "The cache as the tokens grow",
            "Megabytes against tokens: a straight line for each, its slope the bytes per token. The marker "
            "is "
            f"{w.tokens:,} tokens.",
            pic.axis("tokens", 0, 8192),
            pic.axis("MB", 0, b["mha"] * 8192 / MB),
            [
                {"name": label, "cls": cls, "xs": xs, "ys": [b[k] * x / MB for x in xs], "dots": False}
                for k, label, cls in KINDS
            ],
            marker=w.tokens,
            marker_text=f"{w.tokens:,}",
        ),
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
    b = per_token(SMOLLM2, w.bytes_each)
    z = w.sizes()
    return [
        {
            "title": "Bytes of K and V",
            "columns": ["", "per token, layer and head", "per token", f"at {w.tokens:,} tokens"],
            "rows": [
                [label, f"{2 * SMOLLM2.head_dim * w.bytes_each:,}", f"{b[k]:,}", f"{z[k]:,}"]
                for k, label, _ in KINDS
            ],
        },
        {
            "title": "Block tables",
            "columns": ["request", "tokens", "blocks (in order)", "unused positions"],
            "rows": [
                [LETTERS[r], str(n), ", ".join(map(str, w.cache.tables[r])), str(w.paged_waste()[r])]
                for r, n in enumerate(w.lengths)
            ],
        },
    ]


def data(w: KVWalk) -> dict:
    return {
        "per_token": per_token(SMOLLM2, w.bytes_each),
        "sizes": w.sizes(),
        "lengths": w.lengths,
        "tables": [w.cache.tables[r] for r in range(w.requests)],
        "paged_waste": w.paged_waste(),
        "contiguous_waste": w.contiguous_waste(),
    }


def answer(values: dict) -> dict:
    w = walk(**values)
    return {"pictures": _pictures(w), "words": words.sentences(w), "numbers": _numbers(w), "data": data(w)}
