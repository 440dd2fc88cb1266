"""``attnlab census``, ``ablate``, ``patch`` and ``lens``: circuits in real models on the command line.

``census --texts FILE.jsonl`` scores every head over many texts (``models.census``: a local
process pool, or Ray with ``--ray``) and prints each score's best heads with their means
and 95% intervals (``lab.realmodel.census``: the numbers and every line); ``--json``
prints every head's mean and interval per score; ``--python`` the program behind one head's
score on the first text (the head with the highest mean previous-token score: its first
line says which), as the census computes it. A progress bar on stderr counts the texts done.

``ablate``, ``patch`` and ``lens`` run the page's circuits requests in this process
(``lab.circuits.requests.here``: the same checks, numbers and words as the page's jobs) and print them
(``lab.circuits.terminal``: the lines, in order); ``--json`` prints the view itself, the
same JSON the page draws; ``--python`` prints the runnable NumPy program behind the view's
headline number (``lab.realmodel.program``: it reads the model file and prints that number):
ablate, the next token's probability after the ablation where it changed most; patch, the
fraction recovered of the most recovered patch; lens, the answer's probability after the
block where it first comes top. A patching sweep draws its progress bar on stderr. Bad input is
one line on stderr and status 2, the field named as the command line names it (``--texts
line 3: …``, ``--heads …``, ``CORRUPT …``); so is Ray failing to start (``--ray``). ``patch``
stopped by Ctrl-C or SIGTERM prints the partial sweep it had (its cancelled cells blank) and
exits 130 (143 for SIGTERM).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading

from attnlab.cli.modelargs import add_weights, open_model
from attnlab.engine.errors import FieldError
from attnlab.lab.circuits import terminal
from attnlab.lab.realmodel import census as census_words
from attnlab.models import registry

# -- reading the texts -----------------------------------------------------------------------


def read_texts(path: str, model: str) -> list[str]:
    """The texts of a JSON Lines file (blank lines skipped), each checked against the model's token cap.

    Read a line at a time, never whole: at most ``MAX_TEXTS`` texts and ``MAX_LINE_CHARS``
    characters a line (``lab.realmodel.census``); a UTF-8 byte order mark at the start is read as
    none. A line that cannot be used is one ``ValueError`` naming its number.
    """
    from attnlab.models.jobs.texts import check_chars, check_tokens

    texts = []
    try:
        with open(path, "rb") as f:
            for number, line_text in _lines(f, path):
                if not line_text.strip():
                    continue
                if len(texts) == census_words.MAX_TEXTS:
                    raise ValueError(census_words.too_many_texts(path))
                text = _line_text(line_text, number)
                try:
                    check_chars(text)  # half a character: no tokenizer takes it
                    check_tokens(model, text)
                except FieldError as error:
                    if error.loc != ("text",):
                        raise
                    raise ValueError(census_words.bad_line(number, f"text {error.problem}")) from None
                texts.append(text)
    except OSError as error:
        raise ValueError(census_words.cannot_read(path, error.strerror or type(error).__name__)) from None
    if not texts:
        raise ValueError(census_words.no_texts(path))
    return texts


def _lines(f, path: str):
    """(number, text) of each line of binary file ``f``, from 1; a line over the cap is refused unread."""
    limit = census_words.MAX_LINE_CHARS * 4 + 2  # UTF-8: at most 4 bytes a character, and its newline
    number = 0
    while raw := f.readline(limit):
        number += 1
        if len(raw) == limit and not raw.endswith(b"\n"):
            raise ValueError(census_words.bad_line(number, census_words.line_too_long()))
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8")  # a byte order mark: none
        except UnicodeDecodeError:
            raise ValueError(census_words.not_utf8(path, number)) from None
        text = text.rstrip("\r\n")
        if len(text) > census_words.MAX_LINE_CHARS:
            raise ValueError(census_words.bad_line(number, census_words.line_too_long()))
        yield number, text


def _line_text(line: str, number: int) -> str:
    try:
        item = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(census_words.bad_line(number, census_words.not_json(error.msg))) from None
    except RecursionError:  # arrays in arrays thousands deep: Python's parser runs out of stack
        raise ValueError(census_words.bad_line(number, census_words.nested_too_deeply())) from None
    except ValueError:  # a number longer than Python converts (sys.get_int_max_str_digits)
        limit = sys.get_int_max_str_digits()
        raise ValueError(census_words.bad_line(number, census_words.number_too_long(limit))) from None
    if not isinstance(item, dict):
        raise ValueError(census_words.bad_line(number, census_words.not_an_object(_json_kind(item))))
    if "text" not in item:
        raise ValueError(census_words.bad_line(number, census_words.no_text_field()))
    text = item["text"]
    if not isinstance(text, str):
        raise ValueError(census_words.bad_line(number, census_words.text_not_a_string(_json_kind(text))))
    if not text.strip():
        raise ValueError(census_words.bad_line(number, census_words.empty_text()))
    return text


def _json_kind(value: object) -> str:
    kinds = {list: "array", str: "string", bool: "boolean", int: "number", float: "number", dict: "object"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


# -- the progress bar -------------------------------------------------------------------------


class Bar:
    """The lab's progress line on stderr: redrawn in place on a terminal, one line per update elsewhere."""

    def __init__(self, line=census_words.progress_line, stream=None) -> None:
        self.line = line
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()

    def __call__(self, done: int, total: int) -> None:
        line = self.line(done, total)
        if self.tty:
            self.stream.write("\r" + line + ("\n" if done == total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


# -- attnlab census ---------------------------------------------------------------------------


def add_census_arguments(p: argparse.ArgumentParser) -> None:
    said = _escaped(census_words.help_texts(registry.names()))
    p.add_argument("--model", default=registry.names()[0], help=said["--model"])
    add_weights(p)
    p.add_argument("--texts", required=True, metavar="FILE.jsonl", help=said["--texts"])
    p.add_argument("--ray", action="store_true", help=said["--ray"])
    p.add_argument("--workers", type=int, help=said["--workers"])
    p.add_argument("--top", type=int, default=census_words.TOP, help=said["--top"])
    _outputs(p, said)


def run_census(args: argparse.Namespace) -> int:
    from attnlab.models import census

    model = _model_name(args.model)
    if args.workers is not None and not 1 <= args.workers <= 64:
        raise ValueError(census_words.workers_out_of_range(args.workers))
    if not 1 <= args.top <= census_words.MOST_TOP:
        raise ValueError(census_words.top_out_of_range(args.top))
    if args.ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ValueError(census_words.no_ray()) from None
    texts = read_texts(args.texts, model)
    try:
        per_text = census.score_texts(model, texts, ray=args.ray, workers=args.workers, progress=Bar(),
                                      weights=args.weights)  # fmt: skip
    except census.RayDidNotStart as error:
        raise ValueError(census_words.ray_failed(error.reason)) from None
    c = census_words.summary(per_text, model=model, title=registry.title(model))
    if args.python:
        return _census_program(model, texts[0], per_text[0]["scores"], c, args.weights)
    if args.json:
        print(json.dumps(census_words.data(c), ensure_ascii=False))
        return 0
    print(census_words.heading(c)["text"])
    print(census_words.method()["text"])
    for name in census_words.SCORES:
        print()
        print(census_words.score_sentence(c, name)["text"])
        if c.scores[name].n:
            print(census_words.table_title(name))
            print(grid(census_words.top_rows(c, name, args.top)))
    return 0


def _census_program(name: str, text: str, scores: dict, c, weights: str = "auto") -> int:
    """Print the program behind one head's score on the first text (``scores``: that text's census):
    the previous-token score (every text has one) of the head with the highest mean, named first."""
    from attnlab.models.circuits.texts import tokenize

    score = "previous"
    ((layer, head),) = census_words.ranked(c.scores[score], 1)
    value = float(scores[score][layer, head])
    model = _load(name, weights)
    ids, tokens = tokenize(model, text)
    print(census_words.program_comment(score, layer, head, c.texts))
    number = {"kind": "census", "layer": layer, "head": head, "score": score, "value": value}
    return _program(model, ids, tokens, number)


# -- attnlab ablate, patch, lens --------------------------------------------------------------

ABLATE_FLAGS = {"text": "TEXT", "heads": "--heads", "model": "--model", "how": "--mean"}
PATCH_FLAGS = {"clean": "CLEAN", "corrupt": "CORRUPT", "right": "--answers", "other": "--answers",
               "answers": "--answers", "sweep": "--sweep", "model": "--model"}  # fmt: skip
LENS_FLAGS = {"text": "TEXT", "position": "--position", "model": "--model"}


def _help(command: str) -> dict[str, str]:
    return _escaped(terminal.help_texts(models=registry.names(), decoders=registry.decoders())[command])


def _escaped(said: dict[str, str]) -> dict[str, str]:
    """The lab's help as argparse takes it: a literal % written %%."""
    return {key: text.replace("%", "%%") for key, text in said.items()}


def add_ablate_arguments(p: argparse.ArgumentParser) -> None:
    said = _help("ablate")
    p.add_argument("text", metavar="TEXT", help=said["text"])
    p.add_argument("--heads", required=True, help=said["--heads"])
    p.add_argument("--mean", action="store_true", help=said["--mean"])
    p.add_argument("--model", default=registry.decoders()[0], help=said["--model"])
    add_weights(p)
    _outputs(p, said)


def add_patch_arguments(p: argparse.ArgumentParser) -> None:
    from attnlab.lab.circuits.patching import KINDS

    said = _help("patch")
    p.add_argument("clean", metavar="CLEAN", help=said["clean"])
    p.add_argument("corrupt", metavar="CORRUPT", help=said["corrupt"])
    p.add_argument("--answers", help=said["--answers"])
    p.add_argument("--sweep", choices=KINDS, default="residual", help=said["--sweep"])
    p.add_argument("--model", default=registry.decoders()[0], help=said["--model"])
    add_weights(p)
    _outputs(p, said)


def add_lens_arguments(p: argparse.ArgumentParser) -> None:
    said = _help("lens")
    p.add_argument("text", metavar="TEXT", help=said["text"])
    p.add_argument("--position", type=int, default=-1, help=said["--position"])
    p.add_argument("--model", default=registry.decoders()[0], help=said["--model"])
    add_weights(p)
    _outputs(p, said)


def _outputs(p: argparse.ArgumentParser, said: dict[str, str]) -> None:
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help=said["--json"])
    out.add_argument("--python", action="store_true", help=said["--python"])


def run_ablate(args: argparse.Namespace) -> int:
    from attnlab.lab.circuits import requests
    from attnlab.lab.circuits.ablation import parse_heads

    with _named(ABLATE_FLAGS):
        name = registry.check_name(args.model)
        heads = parse_heads(args.heads)
        how = "mean" if args.mean else "zero"
        model = _load(name, args.weights)
        view, _ = requests.here("ablation", model=name, weights=args.weights, text=args.text, heads=heads,
                                how=how)  # fmt: skip
    if args.python:
        ids, tokens = view["program_source"]["ids"], view["program_source"]["tokens"]
        return _program(model, ids, tokens, terminal.ablation_number(view, heads, how, len(ids)))
    return _show(view, terminal.ablation_lines, args.json)


def run_patch(args: argparse.Namespace) -> int:
    from attnlab.lab.circuits import requests

    with _named(PATCH_FLAGS):
        name = registry.check_name(args.model)
        decoder = registry.spec(name).generates
        answers = _answers(args.answers, name, decoder) or (None, None)
        model = _load(name, args.weights)
        with Interrupted() as stop:  # Ctrl-C or SIGTERM: the sweep stops at its next patch
            bar = Bar(terminal.progress_line)
            asked = {"clean": args.clean, "corrupt": args.corrupt, "right": answers[0], "other": answers[1],
                     "sweep": args.sweep}  # fmt: skip
            view, _ = requests.here("patching", model=name, weights=args.weights, progress=bar,
                                    cancel=stop.event, **asked)  # fmt: skip
    if args.python:
        how = view["pair"]["how"]["clean"]
        ids = tuple(int(i) for i in how["answers"].split(",")) if "answers" in how else None
        number = terminal.patch_number(view, ids, how.get("position"))
        source = view["program_source"]
        done = _program(model, source["ids"], None, number, corrupt=source["corrupt_ids"])
    else:
        done = _show(view, terminal.patching_lines, args.json)
    return 128 + stop.signal if stop.signal else done  # the partial sweep, then the signal's status


def run_lens(args: argparse.Namespace) -> int:
    from attnlab.lab.circuits import requests

    with _named(LENS_FLAGS):
        name = registry.check_name(args.model)
        model = _load(name, args.weights)
        view, _ = requests.here("lens", model=name, weights=args.weights, text=args.text,
                                position=args.position)  # fmt: skip
    if args.python:
        ids, tokens = view["program_source"]["ids"], view["program_source"]["tokens"]
        return _program(model, ids, tokens, terminal.lens_number(view))
    return _show(view, terminal.lens_lines, args.json)


class Interrupted:
    """While inside, the first SIGINT or SIGTERM sets ``event`` (a sweep stops at its next patch and
    keeps what it did) and is kept in ``signal``; a second one stops the command as Python would."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal = 0
        self._before: dict = {}

    def _caught(self, number: int, frame) -> None:
        if self.signal:
            signal.signal(number, self._before[number])
            signal.raise_signal(number)
            return
        self.signal = number
        self.event.set()

    def __enter__(self) -> Interrupted:
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                self._before[number] = signal.signal(number, self._caught)
        return self

    def __exit__(self, *exc) -> None:
        for number, handler in self._before.items():
            signal.signal(number, handler)


def _answers(text: str | None, name: str, decoder: bool) -> tuple[str, str] | None:
    """``" Paris"," Rome"`` (the shell hands it over as `` Paris, Rome``) as two answers."""
    title = registry.title(name)
    if not decoder:
        if text is not None:
            raise ValueError(terminal.no_answers_for_an_encoder(title))
        return None
    if text is None:
        raise ValueError(terminal.needs_answers(title))
    parts = text.split(",")
    if len(parts) != 2 or not all(parts):
        raise ValueError(terminal.answers_not_two(text))
    return parts[0], parts[1]


class _named:
    """Turn a ``FieldError`` raised inside into one line naming the field as the command line does."""

    def __init__(self, flags: dict[str, str]) -> None:
        self.flags = flags

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, error, tb) -> bool:
        if isinstance(error, FieldError) and error.loc and error.loc[0] in self.flags:
            raise ValueError(f"{self.flags[error.loc[0]]} {error.problem}") from None
        return False


def _load(name: str, weights: str = "auto"):
    return open_model(name, weights)


def _program(model, ids, tokens, number: dict, *, corrupt=None) -> int:
    """Print the program behind ``number`` (a descriptor) on the text ``ids`` (and a patch's ``corrupt``)."""
    from attnlab.lab.realmodel.program.answer import program_answer
    from attnlab.lab.realmodel.program.number import Source
    spec = registry.spec(model.name)
    counter = registry.counter(model.name)
    texts = tokens if tokens is not None else [counter.text(i) for i in ids]
    a = model.arch
    src = Source(
        model=spec.name, title=spec.title, ids=tuple(ids), tokens=tuple(texts), path=model.path,
        n_layer=a.n_layer, n_head=a.n_head, d_head=a.d_head, vocab=a.d_vocab,
        corrupt_ids=None if corrupt is None else tuple(corrupt),
        corrupt_tokens=None if corrupt is None else tuple(counter.text(i) for i in corrupt),
    )  # fmt: skip
    print(program_answer(src, number)["program"], end="")
    return 0


def _show(view: dict, lines, as_json: bool) -> int:
    if as_json:
        print(json.dumps(view, ensure_ascii=False, allow_nan=False))
        return 0
    for item in lines(view):
        print(item if isinstance(item, str) else grid(item))
    return 0


# -- shared ------------------------------------------------------------------------------------


def _model_name(name: str) -> str:
    try:
        return registry.check_name(name)
    except FieldError as error:
        raise ValueError(f"--model {error.problem}") from None


def grid(rows: list[list[str]]) -> str:
    """Rows of cells lined up: the first column left, the others right, two spaces between."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [cell.ljust(w) if c == 0 else cell.rjust(w) for c, (cell, w) in enumerate(zip(r, widths))]
        lines.append("  " + "  ".join(cells).rstrip())
    return "\n".join(lines)


def add_commands(sub) -> None:
    """Add ``census``, ``ablate``, ``patch`` and ``lens`` to the ``attnlab`` command's subparsers ``sub``."""
    c = sub.add_parser("census", help=_escaped(census_words.help_texts(registry.names()))["command"])
    add_census_arguments(c)
    c.set_defaults(func=run_census)
    for command, add, run in (("ablate", add_ablate_arguments, run_ablate),
                              ("patch", add_patch_arguments, run_patch),
                              ("lens", add_lens_arguments, run_lens)):  # fmt: skip
        p = sub.add_parser(command, help=_help(command)["command"])
        add(p)
        p.set_defaults(func=run)
