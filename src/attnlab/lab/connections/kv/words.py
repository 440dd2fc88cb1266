"""The KV-cache lab's sentences, each built beside its numbers with the claims it makes."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.kv.walk import BLOCK, LETTERS, MAX_LEN, KVWalk, per_token
from attnlab.lab.said import said

MB = 1e6


def size(b: int) -> str:
    """A cache size as the page writes it: megabytes to one decimal from 1 MB up, else bytes."""
    return f"{fmt.rounded(b / MB, 1)} MB" if b >= MB else f"{b:,} bytes"


def per_token_words(w: KVWalk) -> dict:
    assert w.shapes is not None
    s, b = w.shapes, per_token(w.shapes, w.bytes_each)
    byte_word = "byte" if w.bytes_each == 1 else "bytes"
    return said(
        f"{s.called} caches K and V in {s.layers} layers for {s.kv_heads} key/value heads of {s.head_dim} "
        "numbers: "
        f"2 × {s.layers} × {s.kv_heads} × {s.head_dim} × {w.bytes_each} {byte_word} = {b['gqa']:,} bytes per "
        f"token. With a key/value head for each of its {s.query_heads} query heads (MHA) it would be "
        f"{b['mha']:,} bytes, {s.query_heads // s.kv_heads} times as much; with one shared head (MQA), "
        f"{b['mqa']:,}.",
        per_token=b,
        ratio=s.query_heads // s.kv_heads,
        bytes_each=w.bytes_each,
    )


def at_tokens(w: KVWalk) -> dict:
    z = w.sizes()
    return said(
        f"At {w.tokens:,} token{'s' if w.tokens != 1 else ''} the cache holds {size(z['gqa'])}; MHA would "
        "hold "
        f"{size(z['mha'])} and MQA {size(z['mqa'])}. It grows with every token, head and layer.",
        tokens=w.tokens,
        bytes=z,
    )


def paged(w: KVWalk) -> dict:
    tables = {LETTERS[r]: w.cache.tables[r] for r in range(w.requests)}
    same = w.read_back_identical()
    lengths = ", ".join(f"{LETTERS[r]} {n}" for r, n in enumerate(w.lengths))
    blocks = sum(len(t) for t in tables.values())
    read = (
        "gives back exactly the keys and values it wrote" if all(same) else "does not give back what it wrote"
    )
    return said(
        f"A paged cache holds {w.requests} request{'s' if w.requests != 1 else ''} (tokens: {lengths}) in "
        f"{blocks} block{'s' if blocks != 1 else ''} of {BLOCK} positions, taken from the pool as they "
        "grow; a "
        "block table maps each request's positions to its blocks. Reading each request through its table "
        f"{read}.",
        tables=tables,
        identical=same,
        blocks=blocks,
    )


def waste(w: KVWalk) -> dict:
    paged_, contiguous = w.paged_waste(), w.contiguous_waste()
    return said(
        f"Paged allocation leaves {sum(paged_)} position{'s' if sum(paged_) != 1 else ''} unused in all, at "
        f"most {BLOCK - 1} per request "
        "(in its "
        f"last block; here at most {max(paged_)}); reserving {MAX_LEN} positions per request leaves "
        f"{sum(contiguous)}.",
        paged=paged_,
        contiguous=contiguous,
        bound=BLOCK - 1,
    )


def sentences(w: KVWalk) -> list[dict]:
    sizes = [per_token_words(w), at_tokens(w)] if w.shapes is not None else []
    return [*sizes, paged(w), waste(w)]
