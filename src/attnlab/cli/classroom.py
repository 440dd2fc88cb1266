"""``attnlab class``: start (or reopen) a class and serve the lab with it; ``attnlab serve --class``.

``attnlab class [NAME]`` makes the class and prints the teacher's address (with its
token) and the learners' join address (and its QR code); ``--resume`` reopens a
class kept here (after a stop, or a crash: its learners, records and state come
back, and their pages reconnect by themselves); ``--database postgresql://…`` keeps
it in PostgreSQL, where several ``attnlab serve --class NAME --resume`` processes
can share it; ``--list`` lists the classes kept. The serving options are ``attnlab
serve``'s. Words: ``lab.classroom.terminal``.
"""

from __future__ import annotations

import argparse

from attnlab.lab.classroom import terminal


def add_class_options(parser: argparse.ArgumentParser) -> None:
    """The options ``attnlab class`` and ``attnlab serve --class`` share."""
    parser.add_argument("--resume", action="store_true", help=terminal.HELP["--resume"])
    parser.add_argument("--database", metavar="URL", help=terminal.HELP["--database"])


def add_class_arguments(parser: argparse.ArgumentParser) -> None:
    from attnlab.cli import add_serve_arguments

    parser.add_argument("name", nargs="?", help=terminal.HELP["name"])
    parser.add_argument("--list", action="store_true", help=terminal.HELP["--list"])
    add_class_options(parser)
    add_serve_arguments(parser, with_class=False)


def run_class(args: argparse.Namespace) -> int:
    if args.list:
        return list_classes(args.database)
    from attnlab.web.classroom.serving import serve_class

    return serve_class(
        args.name, host=args.host, port=args.port, open_browser=not args.no_browser,
        allow_hosts=args.allow_host, database=args.database, resume=args.resume,
    )


def list_classes(database: str | None) -> int:
    from attnlab.classroom_store import open_classes
    from attnlab.web.classroom.serving import data_folder

    try:
        classes = open_classes(database, data_folder())
    except ValueError:
        raise ValueError(terminal.bad_database()) from None
    try:
        rows = []
        for info in classes.names():
            store = classes.open(info.name)
            rows.append((info.name, len(store.learners()), info.ended_at is not None))
            store.close()
    finally:
        classes.close()
    for line in terminal.listing(rows):
        print(line)
    return 0
