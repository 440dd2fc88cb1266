"""``attnlab kv-cache``'s words: a model's KV cache at a number of tokens, and a live run's caches.

Plain values in (the registry's shapes as ``models.labs.facts.shapes`` gives them, a recorded
run of ``models.labs.kv.generation_cache``), sentences with their claims and table rows out;
the command prints their text.
"""

from __future__ import annotations

from attnlab.lab.connections.kv.generation import Generation
from attnlab.lab.connections.kv.walk import per_token, shapes_of
from attnlab.lab.connections.kv.words import MB, size
from attnlab.lab.said import said

PRECISIONS = {1: "8-bit", 2: "16-bit", 4: "32-bit"}
MOST_TOKENS = 1_000_000  # --tokens without TEXT: tokens in the cache
MOST_NEW = 64  # --tokens with TEXT: new tokens written
DEFAULT_NEW = 8  # --tokens with TEXT, when not given


def tokens_refused(value: int, *, new: bool) -> str | None:
    """The refusal of ``--tokens value`` (None when it is fine): in the cache, or new tokens with TEXT."""
    most = MOST_NEW if new else MOST_TOKENS
    if 1 <= value <= most:
        return None
    what = "new tokens to write" if new else "tokens in the cache"
    return f"--tokens must be from 1 to {most:,} {what}, not {value:,}"


def sizes(facts: dict, tokens: int, bytes_each: int) -> dict:
    """Bytes per token and at ``tokens`` tokens for MHA, the model's own and MQA."""
    b = per_token(shapes_of(facts), bytes_each)
    return {"per_token": b, "at_tokens": {kind: x * tokens for kind, x in b.items()}}


def size_words(facts: dict, tokens: int, bytes_each: int) -> list[dict]:
    s = shapes_of(facts)
    z = sizes(facts, tokens, bytes_each)["at_tokens"]
    shared = (
        f"{s.query_heads} query heads share {s.kv_heads} key/value heads"
        if s.kv_heads < s.query_heads
        else f"each of its {s.query_heads} heads has its own keys and values (MHA)"
    )
    plural = "s" if tokens != 1 else ""
    first = said(
        f"{facts['title']}: {s.layers} layers; {shared}, of {s.head_dim} numbers each.",
        layers=s.layers,
        query_heads=s.query_heads,
        kv_heads=s.kv_heads,
        head_dim=s.head_dim,
    )
    own = f"{z['gqa']:,} bytes" + (f" ({size(z['gqa'])})" if z["gqa"] >= MB else "")
    mha = (
        "That is MHA already"
        if s.kv_heads == s.query_heads
        else f"With a key/value head for each query head (MHA) it would hold {size(z['mha'])}"
    )
    second = said(
        f"At {tokens:,} token{plural} of {PRECISIONS[bytes_each]} numbers its KV cache holds "
        f"2 × {s.layers} × {s.kv_heads} × {s.head_dim} × {bytes_each} × {tokens:,} = {own}. {mha}; with "
        f"one shared by all (MQA), {size(z['mqa'])}.",
        tokens=tokens,
        bytes_each=bytes_each,
        bytes=z,
        mha_already=s.kv_heads == s.query_heads,
    )
    return [first, second]


def size_table(facts: dict, tokens: int, bytes_each: int) -> dict:
    s = shapes_of(facts)
    z = sizes(facts, tokens, bytes_each)
    heads = {"mha": s.query_heads, "gqa": s.kv_heads, "mqa": 1}
    names = {"mha": "MHA", "gqa": "the model's own", "mqa": "MQA"}
    return {
        "title": "Bytes of K and V",
        "columns": ["attention", "key/value heads", "per token", f"at {tokens:,} tokens"],
        "rows": [
            [names[k], str(heads[k]), f"{z['per_token'][k]:,}", f"{z['at_tokens'][k]:,}"] for k in names
        ],
    }


def live(facts: dict, run: dict) -> Generation:
    """The recorded run with the shapes it is counted against."""
    return Generation(shapes_of(facts), run)
