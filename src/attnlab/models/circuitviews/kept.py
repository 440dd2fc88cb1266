"""The runs a model worker keeps between jobs: a text's :class:`Cache`, two prompts' :class:`Pair`.

Keyed by the model (its name and the path its products run on) and the token ids, so the
ablation, the attribution, the lens and a head of one text share one run, and the sweeps of
one pair share its two runs. Least recently used out first, under ``CAP_BYTES`` of their
arrays (a 256-token SmolLM2 run keeps about 140 MB, logits included; the newest stays even
alone over the cap). Nothing here crosses the worker's pipe: the views send JSON.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from attnlab.models.circuits.patching import Pair, pair
from attnlab.models.circuits.runs import Cache, run
from attnlab.models.circuits.stack import stack_of

CAP_BYTES = 512 * 2**20


def cache_bytes(c: Cache) -> int:
    arrays = (c.resid, c.mid, c.z, c.attn_out, c.mlp_out, c.final_rms, c.logits, c.pooled)
    return sum(int(a.nbytes) for a in arrays if a is not None)


class Kept:
    """Runs by key, least recently used out first, under ``cap`` bytes."""

    def __init__(self, cap: int = CAP_BYTES) -> None:
        self.cap = cap
        self._lock = threading.Lock()
        self._runs: OrderedDict[tuple, tuple[object, int]] = OrderedDict()

    @property
    def bytes(self) -> int:
        with self._lock:
            return sum(size for _, size in self._runs.values())

    def __len__(self) -> int:
        return len(self._runs)

    def get(self, key: tuple, compute: Callable[[], object], size: Callable[[object], int]):
        with self._lock:
            if key in self._runs:
                self._runs.move_to_end(key)
                return self._runs[key][0]
        value = compute()  # outside the lock: a run takes seconds
        with self._lock:
            self._runs[key] = (value, size(value))
            total = sum(s for _, s in self._runs.values())
            while total > self.cap and len(self._runs) > 1:
                _, (_, s) = self._runs.popitem(last=False)
                total -= s
        return value


KEPT = Kept()


def model_key(model) -> tuple:
    stack = stack_of(model)
    return (stack.name, stack.path)


def cache_of(model, ids, *, kept: Kept = KEPT) -> Cache:
    """The run of ``model`` on ``ids`` (every activation kept), run once and kept."""
    key = ("run", *model_key(model), tuple(int(i) for i in ids))
    return kept.get(key, lambda: run(model, list(ids)), cache_bytes)


def pair_of(model, clean_ids, corrupt_ids, *, answers=None, position: int = -1, kept: Kept = KEPT) -> Pair:
    """The clean and corrupted runs of two prompts and their metric, run once and kept."""
    key = ("pair", *model_key(model), tuple(clean_ids), tuple(corrupt_ids), answers, position)
    return kept.get(
        key,
        lambda: pair(model, list(clean_ids), list(corrupt_ids), answers=answers, position=position),
        lambda p: cache_bytes(p.clean) + cache_bytes(p.corrupt),
    )
