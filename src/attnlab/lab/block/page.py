"""Everything the block section draws, for one request: ``block_page(...)``.

Runs :func:`attnlab.lab.block.walk.walk` once, then the comparisons
(``lab.block.compare``), the words (``lab.block.words``) and the generated
program (``lab.block.program``). Every string the section shows is in the
answer; the browser only places it. The result is the ``BlockResponse`` of
``docs/block-api.md``: plain JSON data.
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.block import compare as block_compare
from attnlab.lab.block import view as block_view
from attnlab.lab.block import words
from attnlab.lab.block.data import D_FF, D_HEAD, D_MODEL, EPS, LABELS, N_HEAD, example
from attnlab.lab.block.practice import CHALLENGES
from attnlab.lab.block.program import to_python
from attnlab.lab.block.walk import Walk, causal_row, explorer_state, walk


def _rounded(m) -> list[list[str]]:
    return [[fmt.rounded(v) for v in row] for row in m]


def heads(w: Walk) -> list[dict]:
    """Return each head's numbers (after RoPE when on), words and explorer states."""
    out = []
    for h in range(N_HEAD):
        traces = w.traces[h]
        name = f"Head {h + 1}"
        q = [list(t.q) for t in traces]
        k = [list(x) for x in traces[0].keys]
        v = [list(x) for x in traces[0].values]
        weights = w.head_rows(h, "weights")
        named = words.head_kind(weights)
        allowed = [causal_row(r) for r in range(len(LABELS))]
        output = w.head_rows(h, "output")
        dots, scores = w.head_rows(h, "dots"), w.head_rows(h, "scores")
        out.append(
            {
                "index": h,
                "name": name,
                "on": w.heads_on[h],
                "kind": named["kind"],  # lab.realmodel.kinds' definitions, on or off
                "kind_scores": named["scores"],
                "sentence": words.head_sentence(name, weights, w.heads_on[h]),
                "title": f"{name} · {'on' if w.heads_on[h] else 'off'}",
                "switch_label": f"{name} on",
                "map_label": (
                    f"{name} weights: each row is a query, each column a key; "
                    "the numbers are in the table of the Attend step"
                ),
                "open_labels": [f"{name}, row {label}" for label in LABELS],
                "q": q,
                "k": k,
                "v": v,
                "dots": dots,
                "scores": scores,
                "weights": weights,
                "allowed": allowed,
                "output": output,
                "display": {
                    "q": _rounded(q),
                    "k": _rounded(k),
                    "v": _rounded(v),
                    "dots": _rounded(dots),
                    "scores": _rounded(scores),
                    "weights": [
                        [fmt.rounded(x) if ok else "blocked" for x, ok in zip(row, a)]
                        for row, a in zip(weights, allowed)
                    ],
                    "percent": [  # each row one set, adding up to 100
                        [p if ok else "blocked" for p, ok in zip(fmt.percents(row), a)]
                        for row, a in zip(weights, allowed)
                    ],
                    "output": _rounded(output),
                },
                "explorer": [explorer_state(w, h, r) for r in range(len(LABELS))],
            }
        )
    return out


def inputs(w: Walk) -> dict:
    return {
        "labels": list(LABELS),
        "x": w.x,
        "weights": w.weights,
        "norm": w.norm,
        "positions": w.positions,
        "heads_on": list(w.heads_on),
        "eps": EPS,
        "d_model": D_MODEL,
        "n_head": N_HEAD,
        "d_k": D_HEAD,
        "d_ff": D_FF,
        "matrices": block_view.matrices(),  # the editor's names for them
    }


def block_page(x=None, weights=None, *, norm="pre", positions="none", heads_on=(True, True)) -> dict:
    """Return the whole ``BlockResponse`` for these inputs (defaults: the given example)."""
    w = walk(x, weights, norm=norm, positions=positions, heads_on=heads_on)
    hs = heads(w)
    compare = block_compare.norm_compare(w, [])
    other = compare.pop("walk")
    compare["steps"] = block_view.steps(other)
    output_display = _rounded(w.output)
    steps = block_view.steps(w)
    ablation = block_compare.ablation(w)
    for a in ablation:
        a["table"] = block_view.table(
            f"ablate-{a['head']}", a["table_label"], "", LABELS, block_view.MODEL_COLS, a["change"]
        )
    return {
        "choices": words.CHOICES,
        "words": words.section_words(example(), CHALLENGES.data()["title"]),
        "inputs": inputs(w),
        "steps": steps,
        "playback": words.playback(steps),
        "heads": hs,
        "output": w.output,
        "output_display": output_display,
        "ablation": ablation,
        "norm_compare": compare,
        "rope": block_compare.rope(w),
        "summary": words.summary(w.norm, w.positions, hs, [fmt.vector(r) for r in w.output]),
        "python": to_python(w),
    }
