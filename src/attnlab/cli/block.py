"""``attnlab block``: the lab's transformer block walk on the command line.

Without options it prints the walk step by step (pre-norm, no positions, the
given example) with the block section's own words: the summary, every step's
caption and tables, each head's sentence and ablation, the pre/post-norm and
RoPE sentences (``lab.block.page.block_page``, the page's answer); ``--json``
prints every intermediate with the inputs and the weights by their paper names;
``--python`` prints the generated NumPy-free program. ``--post-norm`` and
``--positions none|sinusoidal|rope`` choose the block, ``--head-off N``
switches head N (1 or 2) off.
"""

from __future__ import annotations

import argparse
import json

from attnlab.lab import numbers as fmt
from attnlab.lab.block.data import EPS, LABELS, POSITIONS
from attnlab.lab.block.page import block_page
from attnlab.lab.block.program import to_python
from attnlab.lab.block.walk import Walk, walk


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


def print_page(page: dict) -> None:
    """Print the block section's words and numbers, the same strings the page shows."""
    print(page["summary"]["text"])
    print()
    for step in page["steps"]:
        print(step["heading"])
        print(f"   {step['caption']['text']}")
        for t in step["tensors"]:
            print(f"   {t['label']}{t['formula_shown']}")
            for label, row in zip(t["rows"], t["display"]):
                print(f"     {label}  [{', '.join(row)}]")
        print()
    for h, a in zip(page["heads"], page["ablation"]):
        print(h["title"])
        print(f"   {h['sentence']['text']}")
        print(f"   {a['sentence']['text']}")
    print()
    print(page["norm_compare"]["summary"]["text"])
    print(page["rope"]["status"]["text"])
    print(page["rope"]["demo"]["sentence"]["text"])
    print()
    print("output (full precision):")
    for label, row in zip(page["inputs"]["labels"], page["output"]):
        print(f"  {label}  {fmt.precise_vector(row)}")


def run_block(args: argparse.Namespace) -> int:
    heads_on = tuple(h not in args.head_off for h in (1, 2))
    state = {"norm": "post" if args.post_norm else "pre", "positions": args.positions, "heads_on": heads_on}
    if args.json:
        print(json.dumps(to_json(walk(**state)), indent=2))
    elif args.python:
        print(to_python(walk(**state)), end="")
    else:
        print_page(block_page(**state))
    return 0
