"""The ``attnlab`` command.

``attnlab`` alone serves the lab; ``attnlab trace`` prints one query's
calculation (its words and table from ``lab.explorer.terminal``); ``attnlab
block`` walks one transformer block (``lab.block.terminal``); ``attnlab heads``
and ``attnlab generate`` look inside real pretrained models (``--model`` a name or a path);
``attnlab models`` lists the models it can open here. Bad input prints
one line on stderr and exits with 2: an empty ``--q=`` or ``--keys ""`` is bad
input (never the worked example in disguise), and so is an argument that is not
valid UTF-8 (Python hands it over with surrogate escapes). Output into a pipe
closed early (``| head``) ends quietly with status 1, as Python's own
documentation recommends.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from attnlab.engine.single import default_labels, trace_query
from attnlab.lab.explorer import terminal
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.explorer.program import to_python
from attnlab.lab.page import TERMINAL, not_a_port


class UsageError(Exception):
    """A command-line argument a person has to fix."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(message)


# --- parsing numbers --------------------------------------------------------


def _parse_number(text: str, flag: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise UsageError(terminal.refusal("number", flag, text)) from None


def parse_vector(text: str, flag: str) -> list[float]:
    """Parse ``"2,1"`` into ``[2.0, 1.0]``."""
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(p == "" for p in parts):
        raise UsageError(terminal.refusal("vector", flag, text))
    return [_parse_number(p, flag) for p in parts]


def parse_matrix(text: str, flag: str) -> list[list[float]]:
    """Parse ``"-1,2 1,0 0,1"`` (or ``;``-separated) into one vector per source."""
    rows = [r for r in text.replace(";", " ").split() if r]
    if not rows:
        raise UsageError(terminal.refusal("matrix", flag))
    return [parse_vector(r, flag) for r in rows]


def parse_allowed(text: str, labels: Sequence[str]) -> list[bool]:
    """Parse ``--allowed``: labels (``A,C``) or one 1/0 per source (``1,1,0``)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if parts and all(p in ("0", "1") for p in parts) and len(parts) == len(labels):
        return [p == "1" for p in parts]
    unknown = [p for p in parts if p not in labels]
    if unknown:
        raise UsageError(terminal.refusal("label", "--allowed", unknown[0], tuple(labels)))
    return [label in parts for label in labels]


# --- attnlab trace ----------------------------------------------------------


def run_trace(args: argparse.Namespace) -> int:
    q = parse_vector(args.q, "--q") if args.q is not None else list(WORKED.q)
    keys = parse_matrix(args.keys, "--keys") if args.keys is not None else [list(k) for k in WORKED.keys]
    values = (
        parse_matrix(args.values, "--values") if args.values is not None else [list(v) for v in WORKED.values]
    )
    labels = [p.strip() for p in args.labels.split(",")] if args.labels is not None else None
    allowed = None
    if args.allowed is not None:
        names = labels or list(default_labels(len(keys)))
        allowed = parse_allowed(args.allowed, names)
    trace = trace_query(q, keys, values, labels=labels, allowed=allowed, scale=args.scale)
    if args.json:
        print(json.dumps(trace.to_dict(), indent=2))
    elif args.python:
        print(to_python(trace), end="")
    else:
        print("\n".join(terminal.lines(terminal.trace_text(trace))))
    return 0


# --- the parser -------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="attnlab",
        description=TERMINAL["description"],
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    said = terminal.HELP
    t = sub.add_parser("trace", help=said["command"])
    for flag in ("--q", "--keys", "--values", "--labels", "--allowed"):
        t.add_argument(flag, help=said[flag])
    t.add_argument("--scale", type=float, help=said["--scale"])
    out = t.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help=said["--json"])
    out.add_argument("--python", action="store_true", help=said["--python"])
    t.set_defaults(func=run_trace)

    from attnlab.cli.block import add_block_arguments, run_block
    from attnlab.lab.block.terminal import HELP as BLOCK_HELP

    b = sub.add_parser("block", help=BLOCK_HELP["command"])
    add_block_arguments(b)
    b.set_defaults(func=run_block)

    from attnlab.cli.connections import add_flash_arguments, run_flash
    from attnlab.lab.connections import terminal as labs

    fl = sub.add_parser("flash", help=labs.COMMANDS["flash"])
    add_flash_arguments(fl)
    fl.set_defaults(func=run_flash)
    from attnlab.cli.connections import add_speculate_arguments, run_speculate

    sp = sub.add_parser("speculate", help=labs.COMMANDS["speculate"])
    add_speculate_arguments(sp)
    sp.set_defaults(func=run_speculate)
    from attnlab.cli.connections import add_kv_cache_arguments, run_kv_cache

    kv = sub.add_parser("kv-cache", help=labs.COMMANDS["kv-cache"])
    add_kv_cache_arguments(kv)
    kv.set_defaults(func=run_kv_cache)

    from attnlab.cli import circuits

    circuits.add_commands(sub)

    # --- attnlab serve (owned by the web part) ---
    s = sub.add_parser("serve", help=TERMINAL["serve"])
    add_serve_arguments(s)
    s.set_defaults(func=run_serve)
    add_serve_arguments(parser)  # plain `attnlab --port 9000` serves too

    # --- attnlab class (a class: lab/classroom, web/classroom) ---
    from attnlab.cli import classroom

    cl = sub.add_parser("class", help=classroom.terminal.HELP["command"])
    classroom.add_class_arguments(cl)
    cl.set_defaults(func=classroom.run_class)

    # --- attnlab heads / generate (owned by the models part) ---
    from attnlab.cli import models as models_command

    h = sub.add_parser("heads", help=models_command.help_for("heads")["command"])
    models_command.add_heads_arguments(h)
    h.set_defaults(func=models_command.run_heads)
    g = sub.add_parser("generate", help=models_command.help_for("generate")["command"])
    models_command.add_generate_arguments(g)
    g.set_defaults(func=models_command.run_generate)
    lg = sub.add_parser("logits", help=models_command.help_for("logits")["command"])
    models_command.add_logits_arguments(lg)
    lg.set_defaults(func=models_command.run_logits)

    # --- attnlab models: what attnlab can open here, and what it skipped ---
    from attnlab.cli import catalog
    from attnlab.lab.realmodel.sources import MODELS_HELP

    ms = sub.add_parser("models", help=MODELS_HELP["command"])
    catalog.add_models_arguments(ms)
    ms.set_defaults(func=catalog.run_models)
    return parser


def port_number(text: str) -> int:
    """Parse ``--port``: 0 to 65535 (0 lets the system pick a free port)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(not_a_port(repr(text))) from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(not_a_port(str(port)))
    return port


def allowed_host(text: str) -> str:
    """Parse ``--allow-host``: a DNS name or an IP address, as the Host header would carry it."""
    from attnlab.web.hosts import normalize_name

    try:
        return normalize_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_serve_arguments(parser: argparse.ArgumentParser, *, with_class: bool = True) -> None:
    parser.add_argument("--host", default="127.0.0.1", help=TERMINAL["--host"])
    parser.add_argument("--port", type=port_number, default=8000, help=TERMINAL["--port"])
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        type=allowed_host,
        metavar="NAME",
        help=TERMINAL["--allow-host"],
    )
    parser.add_argument("--no-browser", action="store_true", help=TERMINAL["--no-browser"])
    from attnlab.cli.modelargs import add_models_dir

    add_models_dir(parser)  # the page's picker offers this folder's models too
    if with_class:  # `attnlab serve --class NAME`: the lab with a class (cli/classroom.py)
        from attnlab.cli.classroom import add_class_options, terminal

        parser.add_argument("--class", dest="class_name", metavar="NAME", help=terminal.HELP["--class"])
        add_class_options(parser)


def run_serve(args: argparse.Namespace) -> int:
    from attnlab.web.server import serve

    if getattr(args, "class_name", None):
        from attnlab.web.classroom.serving import serve_class

        return serve_class(
            args.class_name, host=args.host, port=args.port, open_browser=not args.no_browser,
            allow_hosts=args.allow_host, database=args.database, resume=args.resume,
        )

    return serve(
        host=args.host, port=args.port, open_browser=not args.no_browser, allow_hosts=args.allow_host
    )


def check_utf8(argv: Sequence[str]) -> None:
    """Refuse an argument that is not valid UTF-8 (its bytes arrive as lone surrogates)."""
    for i, arg in enumerate(argv, 1):
        if any("\ud800" <= ch <= "\udfff" for ch in arg):
            raise UsageError(terminal.not_utf8(i))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        check_utf8(sys.argv[1:] if argv is None else argv)
        args = parser.parse_args(argv)
        from attnlab.cli.modelargs import prepare

        prepare(args)  # --models-dir searched, a --model path made a registry entry
        if args.command is None:  # plain `attnlab` serves the lab
            return run_serve(args)
        status = args.func(args)
        sys.stdout.flush()  # here, not at exit: a closed pipe is then ours to handle
        return status
    except (UsageError, ValueError) as error:
        print(f"attnlab: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (``| head``): nothing more to say, and nobody to say it to
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
