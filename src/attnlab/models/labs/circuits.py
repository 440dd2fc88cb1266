"""The circuits lab's run: SmolLM2's census on the probe, then each previous-token head switched off.

:func:`copying` (a lab's run in the model worker, ``models.jobs.kinds.RunJob``) on the probe's text:

1. the census of the text (``models.census.score_text``: the trace, every head's scores);
2. the heads the lab names from them (``lab.connections.circuits.copying.choose``): the
   induction head and the ``tested`` previous-token heads in the layers below it;
3. one run of the text keeping every activation (``models.circuits.runs.run``), and the
   induction head's q and k after RoPE (``models.circuits.heads.head_reads``: the reference
   engine on the residual stream entering its layer);
4. for each tested head: that head ablated (``models.circuits.ablation.ablate``, ``how``
   "mean" or "zero": its output before W_O, every position; the blocks from its layer on run
   again) and the induction head's q and k in that run.

It records the induction head's scaled scores ``q_i · k_j * scale`` (float64 products of the
float32 vectors, row i: keys 0..i): clean, keys from each ablated run against the clean
queries, and queries and keys both from it. Progress counts these steps.
"""

from __future__ import annotations

import numpy as np

from attnlab.models.census import score_text
from attnlab.models.circuits.ablation import ablate
from attnlab.models.circuits.heads import head_reads
from attnlab.models.circuits.runs import run
from attnlab.models.circuits.scores import CENSUS as SCORES


def choose(induction, previous, tested: int) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """The induction head and the ``tested`` previous-token heads below it (see the module)."""
    ind = np.asarray(induction, dtype=np.float64)
    prev = np.asarray(previous, dtype=np.float64)
    n_head = ind.shape[1]
    layer, head = divmod(int(np.argmax(ind)), n_head)  # argmax: the first of equals, in layer, head order
    below = prev[:layer].ravel()
    order = sorted(range(below.size), key=lambda i: (-below[i], i))[:tested]
    return (layer, head), [divmod(i, n_head) for i in order]


def _rows(q: np.ndarray, k: np.ndarray, scale: float) -> list[list[float]]:
    """Row i: q_i · k_j * scale for j = 0..i (float64)."""
    s = (q.astype(np.float64) @ k.astype(np.float64).T) * scale  # (T, T)
    return [s[i, : i + 1].tolist() for i in range(len(s))]


def copying(model, say, *, text: str, how: str, tested: int) -> dict:
    """The lab's run on ``text`` (see the module): plain JSON numbers."""
    say("running", tested + 2)
    census = score_text(model, model.name, text)
    say("progress", 1)
    scores = {name: census["scores"][name] for name in SCORES}
    (layer, head), heads = choose(scores["induction"], scores["previous"], tested)
    ids = model.encode(text)
    clean = run(model, ids)
    reads = head_reads(model, clean, layer, head)
    q, k, scale = reads.q_rotated, reads.k_rotated, reads.scale
    rows = {"clean": _rows(q, k, scale), "keys": [], "all": []}
    say("progress", 2)
    for done, (off_layer, off_head) in enumerate(heads, 3):
        after = ablate(model, clean, [(off_layer, off_head)], how=how).after
        ablated = head_reads(model, after, layer, head)
        rows["keys"].append(_rows(q, ablated.k_rotated, scale))
        rows["all"].append(_rows(ablated.q_rotated, ablated.k_rotated, scale))
        say("progress", done)
    return {
        "ids": [int(i) for i in ids],
        "tokens": model.token_labels(ids),
        "scores": {name: None if s is None else s.tolist() for name, s in scores.items()},
        "how": how,
        "induction_head": [layer, head],
        "tested": [list(h) for h in heads],
        "scale": scale,
        "rows": rows,
    }
