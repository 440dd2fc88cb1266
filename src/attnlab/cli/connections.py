"""``attnlab flash`` and ``attnlab speculate``: connection labs on the command line, the page's words
and numbers.

Without options it prints the lab's sentences and its tables (``lab.connections``'s
answer, as the page shows them); ``--json`` prints the input and every number at
full precision; ``--python`` prints the generated program. ``--n``, ``--tile``,
``--row``, ``--keys``, ``--window`` and ``--seed`` are the page's controls (a
missing one takes the page's default); a value the lab refuses is one line on
stderr and status 2.

``attnlab speculate TEXT`` runs the speculative-decoding lab's model part here, in
this process (plain greedy decoding, then speculative decoding of TEXT, timed in the
same run), and prints the lab's sentences and tables for it; ``--json`` prints the
input and the run's numbers. ``--max-new-tokens``, ``--ngram``, ``--draft`` and
``--model`` are the page's "New tokens", "Look-up length n", "Draft length k" and
"Model" (SmolLM2 by default; any model that writes: a name or a path).
"""

from __future__ import annotations

import argparse
import json

from attnlab.cli.modelargs import add_weights, open_model
from attnlab.lab.connections import live, terminal
from attnlab.lab.connections.controls import ControlError
from attnlab.lab.connections.kv import CONTROLS as KV_CONTROLS
from attnlab.lab.connections.page import lab_page

FLASH_OPTIONS = ("n", "tile", "row", "keys", "window", "seed")
TOKENS_DEFAULT = next(c.default for c in KV_CONTROLS if c.name == "tokens")  # the KV lab's own


def add_flash_arguments(parser: argparse.ArgumentParser) -> None:
    said = terminal.flash_help()
    for name in FLASH_OPTIONS:
        parser.add_argument(f"--{name}", type=int, help=said[f"--{name}"])
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help=said["--json"])
    out.add_argument("--python", action="store_true", help=said["--python"])


def print_page(page: dict) -> None:
    """Print the lab's sentences and tables, the strings the page shows."""
    print(page["lab"]["title"])
    print()
    for sentence in page["words"]:
        print(sentence["text"])
    print_tables(page["numbers"])


def print_tables(tables: list[dict]) -> None:
    """Print tables as the page's "Show every number" lists them: a blank line, the title, the rows."""
    for table in tables:
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


SPECULATE_FLAGS = {"prompt": "TEXT", "tokens": "--max-new-tokens", "ngram": "--ngram", "draft": "--draft",
                   "model": "--model"}  # fmt: skip


def add_speculate_arguments(parser: argparse.ArgumentParser) -> None:
    said = terminal.speculate_help()
    parser.add_argument("text", metavar="TEXT", help=said["TEXT"])
    for flag in ("--max-new-tokens", "--ngram", "--draft"):
        parser.add_argument(flag, type=int, help=said[flag])
    parser.add_argument("--model", default=None, help=said["--model"])
    add_weights(parser)
    parser.add_argument("--json", action="store_true", help=said["--json"])


def _here(weights: str):
    """Run a lab's ask in this process on ``weights`` (the page's server runs it as a job of its model
    worker)."""
    from attnlab.models import registry
    from attnlab.models.jobs.texts import check_tokens
    from attnlab.models.labs import speculate

    def run(a: live.Ask) -> live.Measured:
        check_tokens(a.model, a.args["prompt"])
        model = open_model(a.model, weights)
        data = speculate.compare(model, lambda *message: None, **a.args)
        return live.Measured("done", data=data, title=registry.title(a.model))

    return run


def run_speculate(args: argparse.Namespace) -> int:
    given = {"prompt": args.text, "tokens": args.max_new_tokens, "ngram": args.ngram, "draft": args.draft,
             "model": args.model}  # fmt: skip
    given = {k: v for k, v in given.items() if v is not None}
    try:
        measured = live.measured("speculate", given, "inputs", _here(args.weights))
        page = lab_page("speculate", given, "inputs", measured)
    except ControlError as err:
        raise ValueError(f"{SPECULATE_FLAGS.get(err.loc[-1], err.loc[-1])} {err.problem}") from None
    if args.json:
        print(json.dumps({"inputs": page["inputs"], "data": page["data"]}, indent=2, ensure_ascii=False))
    else:
        print_page(page)
    return 0


def add_kv_cache_arguments(parser: argparse.ArgumentParser) -> None:
    from attnlab.models import registry

    shipped = registry.shipped()  # the shipped ones by name (found ones: attnlab models; no disk search here)
    first = next(n for n in shipped if registry.spec(n).generates)
    said = terminal.kv_cache_help(models=shipped, first=first)
    parser.add_argument("text", metavar="TEXT", nargs="?", help=said["TEXT"])
    parser.add_argument("--model", default=first, help=said["--model"])
    add_weights(parser)
    parser.add_argument("--tokens", type=int, help=said["--tokens"])
    parser.add_argument("--bytes", type=int, choices=(1, 2, 4), default=2, help=said["--bytes"])
    parser.add_argument("--json", action="store_true", help=said["--json"])


def run_kv_cache(args: argparse.Namespace) -> int:
    """Print a model's KV cache size at --tokens tokens; with TEXT, a live generation's caches."""
    from attnlab.lab.connections.kv import command as words
    from attnlab.lab.realmodel import command as model_words
    from attnlab.models import registry
    from attnlab.models.labs import facts, kv

    try:
        shapes = facts.shapes(args.model)
    except ValueError as error:  # a FieldError at model: the registry's words
        raise ValueError(f"--model {getattr(error, 'problem', error)}") from None
    if args.text is None:
        tokens = TOKENS_DEFAULT if args.tokens is None else args.tokens
        if (refused := words.tokens_refused(tokens, new=False)) is not None:
            raise ValueError(refused)
        if args.json:
            print(json.dumps({"model": shapes, **words.sizes(shapes, tokens, args.bytes)}, indent=2))
            return 0
        for sentence in words.size_words(shapes, tokens, args.bytes):
            print(sentence["text"])
        print_tables([words.size_table(shapes, tokens, args.bytes)])
        return 0
    new = words.DEFAULT_NEW if args.tokens is None else args.tokens
    if (refused := words.tokens_refused(new, new=True)) is not None:
        raise ValueError(refused)
    if not registry.spec(args.model).generates:
        raise ValueError(model_words.encoder(args.model, registry.decoders()))
    from attnlab.models.jobs.texts import check_tokens

    check_tokens(args.model, args.text)
    model = open_model(args.model, args.weights)
    run = kv.generation_cache(model, lambda *message: None, prompt=args.text, new_tokens=new)
    g = words.live(shapes, run)
    if args.json:
        print(json.dumps({"model": shapes, "run": g.run, "counted": g.data()}, indent=2, ensure_ascii=False))
        return 0
    for sentence in g.sentences():
        print(sentence["text"])
    print_tables([g.table()])
    return 0
