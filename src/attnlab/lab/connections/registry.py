"""The connection labs, in the order the page lists them: name, title, the connections they open from, route.

One :class:`Entry` per lab; the lab itself is the folder ``lab/connections/<name>/``
whose ``LAB`` (a :class:`~attnlab.lab.connections.shape.ConnectionLab`) holds its
controls, answer, program and practice, imported only when the lab is asked for.
``opens_from`` names the main page's connections (their titles in
``lab/data/content.json``) whose "Open …" link leads here; ``short`` is the lab's
name as that link says it (the head of its title: "Open the FlashAttention lab"), so
two links to two labs never read the same; the route is ``/connections/<name>`` for
the page and ``/api/connections/<name>`` for its answer.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache

from attnlab.lab.connections.controls import ControlError
from attnlab.lab.connections.shape import ConnectionLab

PAGE = "/connections/"
API = "/api/connections/"


@dataclass(frozen=True)
class Entry:
    name: str
    title: str
    opens_from: tuple[str, ...]
    short: str  # the lab as its "Open …" link names it: its title's head

    @property
    def route(self) -> str:
        return PAGE + self.name

    @property
    def open_text(self) -> str:
        """The words of a link that opens this lab: "Open the FlashAttention lab"."""
        return f"Open the {self.short} lab"

    @property
    def module(self) -> str:
        return f"attnlab.lab.connections.{self.name}"


ENTRIES = (
    Entry("rope", "RoPE: scores by offset, and past the training length", ("Position encoding",), "RoPE"),
    Entry("kv", "The KV cache: its size, GQA and paged blocks", ("KV cache memory",), "KV cache"),
    Entry(
        "speculate",
        "Speculative decoding: the same tokens in fewer passes",
        ("Autoregressive latency",),
        "speculative decoding",
    ),
    Entry(
        "serving",
        "Serving: continuous batching against one request at a time",
        ("Production serving",),
        "serving",
    ),
    Entry(
        "flash",
        "FlashAttention: exact attention in tiles",
        ("O(n²) memory", "Attention costs"),
        "FlashAttention",
    ),
    Entry("dilution", "Long context: attention dilutes", ("Attention dilution",), "long context"),
    Entry(
        "ssm",
        "State-space models: attention as a recurrence",
        ("Linear complexity", "Kernel ↔ Recurrence"),
        "state-space models",
    ),
    Entry(
        "moe",
        "Mixture of experts: a softmax that keeps the top k",
        ("Softmax routing", "Sparse selection"),
        "mixture of experts",
    ),
    Entry(
        "cross",
        "Cross-attention: image patches ask the text",
        ("Cross-attention", "Cross-attention fusion", "Shared attention"),
        "cross-attention",
    ),
    Entry("embeddings", "Embeddings: dot products over a temperature", ("Dot-product logits",), "embeddings"),
    Entry(
        "sampling",
        "Decoding and sampling: a temperature on the softmax",
        ("Softmax selection",),
        "decoding and sampling",
    ),
    Entry(
        "circuits",
        "Circuits: the previous-token head that feeds an induction head",
        ("Copy via attention",),
        "circuits",
    ),
)
NAMES = tuple(e.name for e in ENTRIES)
ROUTES = tuple(e.route for e in ENTRIES)


def entry(name: object) -> Entry:
    """The lab called ``name``, or a ``ControlError`` at ``("path", "name")``."""
    for e in ENTRIES:
        if e.name == name:
            return e
    raise ControlError(
        ("path", "name"), f"{name!r:.40} does not exist; the labs are {', '.join(NAMES)}", label="Lab"
    )


@cache
def lab(name: str) -> ConnectionLab:
    """The lab's parts (its folder's ``LAB``), imported once."""
    return importlib.import_module(entry(name).module).LAB


def listing() -> list[dict]:
    """Every lab as the page lists it: name, title, route, the connections it opens from."""
    return [
        {"name": e.name, "title": e.title, "route": e.route, "opens_from": list(e.opens_from)}
        for e in ENTRIES
    ]
