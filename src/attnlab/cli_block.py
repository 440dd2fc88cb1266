"""``attnlab block``: the lab's transformer block walk on the command line.

Without options it prints the walk step by step (pre-norm, no positions, the
given example); ``--json`` prints every intermediate with the inputs and the
weights by their paper names; ``--python`` prints the generated NumPy-free
program. ``--post-norm`` and ``--positions none|sinusoidal|rope`` choose the
block, ``--head-off N`` switches head N (1 or 2) off.
"""

from __future__ import annotations

import argparse
import json

from attnlab.lab import block_view
from attnlab.lab import numbers as fmt
from attnlab.lab.block_data import EPS, LABELS, POSITIONS
from attnlab.lab.block_page import heads
from attnlab.lab.block_python import to_python
from attnlab.lab.block_walk import Walk, walk


def add_block_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--post-norm", action="store_true", help="post-norm (BERT) instead of pre-norm (GPT-2)"
    )
    parser.add_argument(
        "--positions", choices=POSITIONS, default="none", help="position scheme (default none)"
    )
    parser.add_argument(
        "--head-off",
        type=int,
        choices=(1, 2),
        action="append",
        default=[],
        metavar="N",
        help="switch head N (1 or 2) off: it contributes zeros before W_O (repeatable)",
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument(
        "--json", action="store_true", help="every intermediate, the inputs and weights, as JSON"
    )
    out.add_argument("--python", action="store_true", help="the generated NumPy-free Python program")


def to_json(w: Walk) -> dict:
    """Return the walk by paper names: inputs, weights, every intermediate, the output."""
    ws = w.weights
    return {
        "norm": w.norm,
        "positions": w.positions,
        "heads_on": list(w.heads_on),
        "labels": list(LABELS),
        "x": w.x,
        "w_q": [h["w_q"] for h in ws["heads"]],
        "w_k": [h["w_k"] for h in ws["heads"]],
        "w_v": [h["w_v"] for h in ws["heads"]],
        "w_o": ws["w_o"],
        "norm_1": {**ws["norm_1"], "eps": EPS},
        "norm_2": {**ws["norm_2"], "eps": EPS},
        "w_1": ws["w_1"],
        "b_1": ws["b_1"],
        "w_2": ws["w_2"],
        "b_2": ws["b_2"],
        "intermediates": dict(w.tensors),
        "output": w.output,
    }


def _print_walk(w: Walk) -> None:
    for n, step in enumerate(block_view.steps(w), start=1):
        print(f"{n}. {step['title']}")
        print(f"   {step['caption']}")
        for t in step["tensors"]:
            print(f"   {t['label']}  ({t['name']}: {t['formula']})")
            for label, row in zip(t["rows"], t["display"]):
                print(f"     {label}  [{', '.join(row)}]")
        print()
    for h in heads(w):
        print(h["sentence"])
    print()
    print("output (full precision):")
    for label, row in zip(LABELS, w.output):
        print(f"  {label}  {fmt.precise_vector(row)}")


def run_block(args: argparse.Namespace) -> int:
    heads_on = tuple(h not in args.head_off for h in (1, 2))
    w = walk(norm="post" if args.post_norm else "pre", positions=args.positions, heads_on=heads_on)
    if args.json:
        print(json.dumps(to_json(w), indent=2))
    elif args.python:
        print(to_python(w), end="")
    else:
        _print_walk(w)
    return 0
