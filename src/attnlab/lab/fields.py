"""The page's name for each field a request carries, and an error said in those words.

An API error keeps its location machine-readable (``["body", "values", 1, 1]``)
and its problem apart (``must be at most 1,000,000``, never naming the field);
:func:`error_words` joins them into the sentence the page shows next to the
control: ``Source B · value y must be at most 1,000,000``. The names follow the
page's own controls, per request shape (:func:`shape_of_route`):

- ``explorer`` (``/api/trace``): sources by their names (A, B, C… as the page
  labels them, or the learner's own), coordinates x and y;
- ``held`` (``/api/state``, ``/api/notebook/…``): the held example's tokens, the
  explorer row's query, the edits the page sends for its fields;
- ``block`` (``/api/block…``): each matrix as its editor lists it, row and column;
- ``realmodel`` (``/api/models…``, and the Circuits page's ``/api/circuits…``): the view's
  controls (Text, Top-k, Temperature…; Clean prompt, Heads to switch off…).

A location the page has no control for is written plainly (``Study record ·
item 2 · kind``): never a bracketed path or an internal name. The problems
themselves are worded here too: a parser's refusal by its type and limits
(:func:`problem_words`), a body the lab cannot read (:data:`NOT_JSON`), an
integer too long to read (:func:`too_long`), and a kept real-model job that
cannot answer (:func:`job_gone`, :func:`job_unfinished`, :func:`job_message`).
"""

from __future__ import annotations

import re

from attnlab.engine.errors import Loc, describe, field_text
from attnlab.lab.limits import bound
from attnlab.lab.numbers import plural

SOURCE_NAMES = "ABCDEFGH"  # the page's names for an own example's sources, in order
HEADS = ("body", "query", "path")  # where FastAPI says a field came from


def _axis(j: object) -> str:
    if isinstance(j, int) and j < 0:  # a request's own index, out of range: named as it was sent
        return f"coordinate (index {j})"
    return {0: "x", 1: "y"}.get(j, f"coordinate {j + 1}" if isinstance(j, int) else str(j))


def _ordinal_item(i: int) -> str:
    return f"item {i + 1}"


# plain words for names a request uses; anything else is written with its underscores as spaces
WORDS = {
    # real model view: its controls' labels
    "text": "Text",
    "prompt": "Text to continue",
    "model": "Model",
    "temperature": "Temperature",
    "top_k": "Top-k",
    "top_p": "Top-p",
    "max_new_tokens": "New tokens",
    "seed": "Seed",
    "chat": "Ask it as a chat message",
    "layer": "Layer",
    "head": "Head",
    "index": "Token",
    "position": "Position",
    "query": "Query token",
    "key": "Key token",
    "top": "Number of tokens shown",
    "job_id": "This trace",
    "details": "Details",
    "packed": "Packed",
    # the Circuits page (/api/circuits): its controls' labels
    "score": "Score",
    "heads": "Heads to switch off",
    "how": "How",
    "clean": "Clean prompt",
    "corrupt": "Corrupted prompt",
    "right": "Right answer",
    "other": "Other answer",
    "sweep": "What to patch",
    "site": "Where in the block",
    "first_layer": "First layer",
    "last_layer": "Last layer",
    "per_position": "Token by token",
    # practice and the study record
    "challenge": "Challenge",
    "response": "Your answer",
    "action": "Action",
    "study": "Study record",
    "before": "help before a challenge",
    "challenges": "challenges",
    "attempts": "attempts",
    "attempt": "attempt",
    "current": "current attempt",
    "active": "active challenge",
    "feedback": "feedback",
    "met": "met",
    "words": "words",
    "help": "help",
    "checks": "checks",
    "answer": "answer",
    "kind": "kind",
    "detail": "detail",
    "version": "version",
    "load": "load",
    "format": "Format",
    # the held example and its edits
    "held": "Held example",
    "id": "Example name",
    "row": "Explorer row",
    "masked": "Mask on",
    "mask": "Mask",
    "edit": "Edit",
    "edits": "Edit",
    "source": "Source",
    "coord": "Coordinate",
    "allowed": "Allowed",
    "example": "Example",
    # the block
    "norm": "Norm placement",
    "positions": "Positions",
    "heads_on": "Heads on",
    "block": "Block",
    "weights": "Weights",
}

# the block editor's matrices, as its picker lists them (path inside the request -> label)
BLOCK_MATRICES = {
    ("x",): "X (inputs)",
    ("weights", "heads", 0, "w_q"): "W_Q¹",
    ("weights", "heads", 0, "w_k"): "W_K¹",
    ("weights", "heads", 0, "w_v"): "W_V¹",
    ("weights", "heads", 1, "w_q"): "W_Q²",
    ("weights", "heads", 1, "w_k"): "W_K²",
    ("weights", "heads", 1, "w_v"): "W_V²",
    ("weights", "w_o"): "W_O",
    ("weights", "norm_1", "gamma"): "LN₁ γ",
    ("weights", "norm_1", "beta"): "LN₁ β",
    ("weights", "norm_2", "gamma"): "LN₂ γ",
    ("weights", "norm_2", "beta"): "LN₂ β",
    ("weights", "w_1"): "W₁",
    ("weights", "b_1"): "b₁",
    ("weights", "w_2"): "W₂",
    ("weights", "b_2"): "b₂",
}


def shape_of_route(path: str) -> str:
    """The request shape a route takes, from its URL path."""
    if path.startswith("/api/trace"):
        return "explorer"
    if path.startswith("/api/block"):
        return "block"
    if path.startswith(("/api/models", "/api/circuits")):
        return "realmodel"
    if path.startswith("/api/notebook/import"):
        return "import"
    return "held"  # /api/state, /api/notebook/*


def _word(part: str | int) -> str:
    if isinstance(part, int):
        return _ordinal_item(part)
    return WORDS.get(part, str(part).replace("_", " "))


def _plain(parts: Loc) -> str:
    """A location no control names, in plain words: ``Study record · help before a challenge · item 1``."""
    if not parts:
        return "The request"
    words = [_word(p) for p in parts]
    text = " · ".join(words)
    return text[:1].upper() + text[1:]


def _labels(body: object, *path: str) -> list[str] | None:
    node = body
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, list) and all(isinstance(x, str) and x.strip() for x in node):
        return node
    return None


def _source(i: object, labels: list[str] | None) -> str:
    if not isinstance(i, int):
        return "Source"
    if i < 0:  # a request's own index, out of range: named as it was sent
        return f"Source (index {i})"
    if labels is not None and i < len(labels) and len(set(labels)) == len(labels):
        return f"Source {labels[i]}"
    return f"Source {SOURCE_NAMES[i]}" if i < len(SOURCE_NAMES) else f"Source {i + 1}"


def _explorer(parts: Loc, body: object) -> str | None:
    """Names in an explorer state ``{q, keys, values, labels, allowed, scale}``."""
    labels = _labels(body, "labels")
    head, rest = parts[0], parts[1:]
    if head == "q":
        return "Query q" + (f" · {_axis(rest[0])}" if rest else "")
    if head in ("keys", "values"):
        kind = "key" if head == "keys" else "value"
        if not rest:
            return kind.capitalize() + "s list"
        return f"{_source(rest[0], labels)} · {kind}" + (f" {_axis(rest[1])}" if len(rest) > 1 else "")
    if head == "labels":
        return f"Source {rest[0] + 1} · name" if rest and isinstance(rest[0], int) else "Names"
    if head == "allowed":
        return f"{_source(rest[0], labels)} · allowed" if rest else "Allowed list"
    if head == "scale":
        return "Scale"
    return None


def _edit_body(body: object, head: str, rest: Loc) -> dict:
    node = body.get(head) if isinstance(body, dict) else None
    if head == "edits":
        i = rest[0] if rest else None
        node = node[i] if isinstance(node, list) and isinstance(i, int) and 0 <= i < len(node) else None
    return node if isinstance(node, dict) else {}


def _held(parts: Loc, body: object) -> str | None:
    """Names in a held example (``held.*``) and the edits the page sends (``edit.*``, ``edits[i].*``).

    The held example's sources are named as the page labels them; row r's query is
    ``Query q`` for an example of one query and ``Query A`` (row A's) in a sequence.
    """
    held = body.get("held") if isinstance(body, dict) else None
    labels = _labels(body, "held", "labels")
    one_query = isinstance(held, dict) and isinstance(held.get("queries"), list) and len(held["queries"]) == 1
    head, rest = parts[0], parts[1:]
    if head == "held" and rest:
        sub, more = rest[0], rest[1:]
        if sub == "queries":
            if not more:
                return "Queries list"
            who = "q" if one_query else _source(more[0], labels).removeprefix("Source ")
            return f"Query {who}" + (f" · {_axis(more[1])}" if len(more) > 1 else "")
        if sub in ("keys", "values", "labels", "scale"):
            return _explorer((sub, *more), {"labels": labels})
        if sub == "mask" and more:
            row = "Mask" if one_query else f"Mask · row {_source(more[0], labels).removeprefix('Source ')}"
            return row + (f" · {_source(more[1], labels)}" if len(more) > 1 else "")
        return None
    if head == "edits" and not rest:
        return "Edits list"
    if head in ("edit", "edits"):
        edit = _edit_body(body, head, rest)
        at = rest[1:] if head == "edits" and rest and isinstance(rest[0], int) else rest
        if not at:
            return None
        if at[0] == "q":
            return "Query q" + (f" · {_axis(at[1])}" if len(at) > 1 else "")
        if at[0] == "values" and len(at) == 1:
            return "Values list"
        if at[0] == "values" and len(at) > 1:
            return _explorer(("values", *at[1:]), {"labels": labels})
        if at[0] == "x" and isinstance(edit.get("source"), int):
            return f"{_source(edit['source'], labels)} · value" + (
                f" {_axis(edit['coord'])}" if isinstance(edit.get("coord"), int) else ""
            )
        return None
    return None


def _block(parts: Loc, body: object) -> str | None:
    """Names in a block request, as the block editor lists its matrices (row and column from 1)."""
    if parts[0] == "block":
        parts = parts[1:]
        if not parts:
            return "Block"
    for path, label in BLOCK_MATRICES.items():
        n = len(path)
        if parts[:n] == path:
            cells = parts[n:]
            if len(cells) == 2:
                return f"{label} · row {cells[0] + 1}, column {cells[1] + 1}"
            if len(cells) == 1:
                cell = cells[0] + 1 if isinstance(cells[0], int) else _word(cells[0])
                return f"{label} · {cell}"
            return label if not cells else None
    if parts[0] == "heads_on" and len(parts) == 2 and isinstance(parts[1], int):
        return f"Head {parts[1] + 1} on"
    if parts[0] == "weights" and len(parts) > 2 and parts[1] == "heads" and isinstance(parts[2], int):
        return f"Head {parts[2] + 1} weights" + "".join(f" · {_word(p)}" for p in parts[3:])
    return None


def page_name(loc: Loc, *, shape: str = "explorer", body: object = None) -> str:
    """The page's words for the field at API location ``loc`` (``("body", "values", 1, 1)``).

    ``shape`` is the request's (:func:`shape_of_route`); ``body`` the request as sent,
    for the names the learner gave (an own example's source names).
    """
    parts = tuple(loc)
    if parts and parts[0] in HEADS:
        parts = parts[1:]
    if not parts:
        return "The request"
    if shape == "import" and parts == ("text",):
        return "The file"
    named = {"explorer": _explorer, "held": _held, "block": _block}.get(shape)
    found = named(parts, body) if named else None
    return found or _plain(parts)


def error_words(loc: Loc, problem: str, refs: dict[str, Loc] | None = None, *,
                shape: str = "explorer", body: object = None) -> str:
    """The sentence the page shows: the field in its words, then the problem (``refs`` named too).

    ``loc`` and ``refs`` are API locations (under ``body``); a ref may also be
    relative to the same request.
    """
    def name(at: Loc) -> str:
        return page_name(at, shape=shape, body=body)

    text = problem
    for key, ref in (refs or {}).items():  # named inside the sentence: "…; the keys have 3"
        text = text.replace("{" + key + "}", _inside(name(ref)))
    return describe(tuple(loc), text, None, name)


# whole lists, named as common nouns: lower-case inside a sentence (a control's label keeps its case)
_NOUNS = ("Values list", "Keys list", "Names", "Queries list", "Allowed list", "Edits list")


def _inside(name: str) -> str:
    return "the " + name.lower() if name in _NOUNS else name


# --- problems, never naming their field -------------------------------------------------

NOT_JSON = "The request is not valid JSON, so the lab could not read it. Nothing changed."
TOO_DEEP = "The request nests too deeply to read (JSON nested hundreds of levels deep). Nothing changed."


def too_long(digits: int) -> str:
    """The problem with an integer too long for a float (more than 309 digits) or for Python to read."""
    return f"is a number too long to read ({digits:,} digits)"


def half_character() -> str:
    """A text holding a lone surrogate (half a character, which no tokenizer takes): every route's words."""
    return "holds half of a character (a lone surrogate): paste the text again"


def over_share(seconds: int, *, computer: bool) -> str:
    """A client past its share of the server's time (429): when to ask again.

    ``computer``: the budget of its whole address was spent (every page it has open), else
    this connection's own.
    """
    who = "This computer has" if computer else "This page has"
    unit = "second" if seconds == 1 else "seconds"
    return f"{who} asked for more than its share of the server's time: try again in {seconds} {unit}"


# examples a number's problem may give, first to last; only those inside the field's range are used
_WHOLE_EXAMPLES = (2, -1, 0, 1)
_NUMBER_EXAMPLES = (2, -0.5, 0.5, 1, 0)


def _inside_limits(x: float, limits: dict) -> bool:
    checks = {
        "ge": lambda b: x >= b, "gt": lambda b: x > b, "le": lambda b: x <= b, "lt": lambda b: x < b,
    }  # fmt: skip
    return all(check(limits[k]) for k, check in checks.items() if limits.get(k) is not None)


def number_examples(*, whole: bool, limits: dict | None = None) -> list[float]:
    """Up to two examples of a number the field takes, smaller first, inside ``limits``.

    ``limits`` are the field's bounds by pydantic's names (``ge``, ``gt``, ``le``, ``lt``):
    a layer (``ge=0``) is never given ``-1`` as an example.
    """
    limits = limits or {}
    bounds = [limits[k] for k in ("ge", "le") if isinstance(limits.get(k), (int, float))]
    candidates = [*(_WHOLE_EXAMPLES if whole else _NUMBER_EXAMPLES), *bounds]
    found: list[float] = []
    for x in candidates:
        if _inside_limits(x, limits) and x not in found and (not whole or x == int(x)):
            found.append(x)
        if len(found) == 2:
            break
    return sorted(found)


def must_be_number(*, whole: bool, limits: dict | None = None) -> str:
    """``must be a whole number, such as 0 or 2``: examples the field itself would take."""
    kind = "a whole number" if whole else "a number"
    examples = [bound(x) for x in number_examples(whole=whole, limits=limits)]
    return f"must be {kind}, such as {' or '.join(examples)}" if examples else f"must be {kind}"


def problem_words(type_: str, ctx: dict | None, limits: dict | None = None) -> str:
    """Say what is wrong for a parser's error, without naming the field; never the parser's text.

    Only the error's type and its limits (``ctx``) are used; an unknown type
    gets a plain sentence rather than the parser's message. ``limits``: the
    field's own bounds (``ge``, ``le``…), where known, for the examples a type's
    problem gives.
    """
    ctx = ctx or {}
    if type_ == "missing":
        return "is missing; the lab needs it"
    if type_ == "extra_forbidden":
        return "is not something the lab knows; remove it"
    if type_ == "finite_number":
        return "must be a finite number, not NaN or infinity"
    if type_ in ("float_type", "float_parsing", "int_type", "int_parsing", "int_from_float"):
        return must_be_number(whole=type_.startswith("int"), limits=limits)
    if type_ == "string_unicode":
        return half_character()
    if type_ == "bool_type":
        return "must be true or false"
    if type_ in ("string_type", "string_too_short"):
        return "must be a text of at least one character"
    if type_ == "string_too_long":
        return f"is too long; it may have at most {ctx.get('max_length')} characters"
    if type_ in ("list_type", "dict_type", "model_type", "model_attributes_type"):
        return f"must be {'a list' if type_ == 'list_type' else 'an object'}"
    if type_ == "too_short":
        entries = plural(int(ctx.get("actual_length", 0)), "entry", "entries")
        return f"has {entries}; it needs at least {ctx.get('min_length')}"
    if type_ == "too_long":
        return f"has too many entries; it may have at most {ctx.get('max_length')}"
    if type_ in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        words = {
            "greater_than_equal": "at least",
            "less_than_equal": "at most",
            "greater_than": "more than",
            "less_than": "less than",
        }[type_]
        limit = next(iter(ctx.values()), None) if ctx else None
        return f"must be {words} {bound(limit)}" if limit is not None else "is out of range"
    if type_ == "literal_error":
        return f"must be one of {ctx.get('expected', 'the listed choices')}"
    return "is not in a form the lab can use"


# --- a kept real-model job that cannot answer (located at ``["path", "job_id"]``) -----------

_JOB = {  # a job's name on the page, and what to do instead
    "trace": ("This trace", "trace the text again"),
    "generation": ("This continuation", "continue the text again"),
}


def job_gone(kind: str = "trace") -> str:
    """A job id the server no longer keeps (or never had): what to do instead."""
    name, again = _JOB[kind]
    return f"{name} is no longer kept: {again}"


def details_need_head(n_head: int) -> str:
    """``details=true`` on a whole layer: its q, k, v and scores come one head at a time (the
    problem at ``head``, never naming it)."""
    return (
        "is needed with details=true (one head's q, k, v and scores at a time): "
        f"give one of 0..{n_head - 1}"
    )


def trace_dropped() -> str:
    """A kept trace dropped to make room for newer ones (410): what to do instead."""
    return "This trace was dropped to make room: trace the text again"


def trace_dropped_note() -> str:
    """The Real model page's note when it traced a dropped trace's text again by itself."""
    return "That trace was dropped to make room for newer ones, so the text was traced again."


def job_unfinished(status: str, kind: str = "trace") -> str:
    """A job asked for a view before it is done (queued, loading, running) or after it was cancelled."""
    name, again = _JOB[kind]
    if status == "cancelled":
        return f"{name} was cancelled: {again}"
    return f"{name} is not finished yet: wait until it is done"


def job_message(loc: Loc | None, message: str) -> str:
    """A failed job's message in the page's words.

    A job that failed on a field (``loc``, e.g. ``("text",)``) carries its
    ``FieldError``'s sentence as the engine writes it (the field's path, then
    the problem: :func:`~attnlab.engine.errors.describe`); the page names that
    field as its control reads (``Text is 300 tokens long…``). A failure no
    field caused is its sentence, capitalised.
    """
    head = f"{field_text(loc)} " if loc else None
    if head and message.startswith(head):
        return error_words(("body", *loc), message[len(head):], shape="realmodel")
    return message[:1].upper() + message[1:]


def no_journey() -> str:
    """A trace made without the details a token's journey needs."""
    return "This trace has no journey (it was traced without details): trace the text again"


def no_next_tokens(title: str) -> str:
    """The next-token view asked of an encoder."""
    return f"{title} does not predict next tokens: it is an encoder"


# --- checks the tests use -----------------------------------------------------------

INDEX_PATH = re.compile(r"\w\[\d+\]")  # values[1][1]
SNAKE = re.compile(r"\b[a-z]{2,}(?:_[a-z0-9]+)+\b")  # top_k, norm_1, max_new_tokens (not b_1, W_Q)


def plain(text: str) -> bool:
    """True when ``text`` names no field as code would: no ``x[0][0]``, no ``top_k``, no ``query.top_k``."""
    dotted = re.search(r"\b[a-z]+\.[a-z_]+\b", text)  # query.top_k
    return not INDEX_PATH.search(text) and not SNAKE.search(text) and not dotted
