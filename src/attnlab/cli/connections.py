"""``attnlab flash``: the FlashAttention lab on the command line, the page's words and numbers.

Without options it prints the lab's sentences and its tables (``lab.connections``'s
answer, as the page shows them); ``--json`` prints the input and every number at
full precision; ``--python`` prints the generated program. ``--n``, ``--tile``,
``--row``, ``--keys``, ``--window`` and ``--seed`` are the page's controls (a
missing one takes the page's default); a value the lab refuses is one line on
stderr and status 2.
"""

from __future__ import annotations

import argparse
import json

from attnlab.lab.connections.controls import ControlError
from attnlab.lab.connections.page import lab_page

FLASH_HELP = "FlashAttention tile by tile against full attention, memory and a sliding window"
FLASH_OPTIONS = {
    "n": "sequence length (default 64)",
    "tile": "tile size: query blocks and key tiles (default 16, at most n)",
    "row": "the query row walked (default 0)",
    "keys": "keys walked so far (default n: the whole walk)",
    "window": "sliding window in keys (default 8, at most n)",
    "seed": "random seed of q, k and v (default 0)",
}


def add_flash_arguments(parser: argparse.ArgumentParser) -> None:
    for name, help_ in FLASH_OPTIONS.items():
        parser.add_argument(f"--{name}", type=int, help=help_)
    out = parser.add_mutually_exclusive_group()
    out.add_argument(
        "--json", action="store_true", help="the input and every number at full precision, as JSON"
    )
    out.add_argument("--python", action="store_true", help="the generated NumPy program")


def print_page(page: dict) -> None:
    """Print the lab's sentences and tables, the strings the page shows."""
    print(page["lab"]["title"])
    print()
    for sentence in page["words"]:
        print(sentence["text"])
    for table in page["numbers"]:
        print()
        print(table["title"])
        rows = [table["columns"], *table["rows"]]
        widths = [max(len(r[c]) for r in rows) for c in range(len(table["columns"]))]
        for r in rows:
            print("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())


def run_flash(args: argparse.Namespace) -> int:
    given = {name: getattr(args, name) for name in FLASH_OPTIONS if getattr(args, name) is not None}
    try:
        page = lab_page("flash", given, "inputs")
    except ControlError as err:
        raise ValueError(f"--{err.loc[-1]} {err.problem}") from None
    if args.json:
        print(json.dumps({"inputs": page["inputs"], "data": page["data"]}, indent=2))
    elif args.python:
        print(page["python"], end="")
    else:
        print_page(page)
    return 0
