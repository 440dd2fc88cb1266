"""``attnlab block``: the lab's transformer block walk on the command line.

Without options it prints the walk step by step (pre-norm, no positions, the
given example) with the block section's own words: the summary, every step's
caption and tables, each head's sentence and ablation, the pre/post-norm and
RoPE sentences (``lab.block.terminal.lines`` of the page's answer); ``--json``
prints every intermediate with the inputs and the weights by their paper names;
``--python`` prints the generated NumPy-free program. ``--post-norm`` and
``--positions none|sinusoidal|rope`` choose the block, ``--head-off N``
switches head N (1 or 2) off.
"""

from __future__ import annotations

import argparse
import json

from attnlab.lab.block import terminal
from attnlab.lab.block.data import POSITIONS
from attnlab.lab.block.page import block_page
from attnlab.lab.block.program import to_python
from attnlab.lab.block.walk import walk


def add_block_arguments(parser: argparse.ArgumentParser) -> None:
    said = terminal.HELP
    parser.add_argument("--post-norm", action="store_true", help=said["--post-norm"])
    parser.add_argument("--positions", choices=POSITIONS, default="none", help=said["--positions"])
    parser.add_argument(
        "--head-off",
        type=int,
        choices=(1, 2),
        action="append",
        default=[],
        metavar="N",
        help=said["--head-off"],
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help=said["--json"])
    out.add_argument("--python", action="store_true", help=said["--python"])


def run_block(args: argparse.Namespace) -> int:
    heads_on = tuple(h not in args.head_off for h in (1, 2))
    state = {"norm": "post" if args.post_norm else "pre", "positions": args.positions, "heads_on": heads_on}
    if args.json:
        print(json.dumps(terminal.to_json(walk(**state)), indent=2))
    elif args.python:
        print(to_python(walk(**state)), end="")
    else:
        print("\n".join(terminal.lines(block_page(**state))))
    return 0
