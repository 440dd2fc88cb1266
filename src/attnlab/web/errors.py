"""Error answers in one shape: ``{"detail": [{"loc", "field", "msg", "type"}]}``.

``loc`` is the location in the request (``["body", "values", 1, 1]``) and
``field`` the same written as a path (``values[1][1]``): both machine-readable,
for the page to find the control. ``msg`` is the sentence the page shows next
to that control, in its words: ``Source B · value y must be at most
1,000,000`` (``attnlab.lab.fields``). The request's input is never echoed back.

An integer too long for a float (over 309 digits) is refused at its field
as too long, wherever it stands, and so is one too long for Python's JSON
reader to take at all (over 4,300 digits: :func:`unreadable_body_detail`).

Two sources, one shape: pydantic's errors (``validation_detail``: only their
type and limits are read, never pydantic's text) and the engine's and lab's
:class:`~attnlab.engine.errors.FieldError` (``field_error_detail``, and
``field_error_handler`` for any route that lets one escape), whose ``loc``
and ``problem`` are used as they are; its message is never parsed.
"""

from __future__ import annotations

import json
import sys

from fastapi import Request
from fastapi.responses import JSONResponse

from attnlab.engine.errors import FieldError, field_text
from attnlab.lab.fields import NOT_JSON, error_words, problem_words, shape_of_route, too_long


def field_path(loc: list | tuple) -> str:
    """Write a location like ``("body", "values", 1, 0)`` as ``values[1][0]``."""
    parts = tuple(loc[1:] if loc and loc[0] == "body" else loc)
    return field_text(parts) if parts else "body"


def _clean_loc(loc) -> list[str | int]:
    # pydantic adds the union branch tried ("float", "int") to the location;
    # the learner only needs the field.
    return [p for p in loc if p not in ("float", "int", "bool", "str", "function-after[...]")]


def _without_field(text: str, field: str) -> str:
    # a ValueError (not a FieldError) from a validator, or a 422 built by hand in web/, may still
    # start with its field the old way ("position: ...", "top_k must ..."): the page names it instead
    for head in (f"{field}: ", f"{field} "):
        if text.startswith(head):
            return text[len(head):]
    return text


def validation_detail(
    errors, *, body: bool = False, shape: str = "explorer", request_body=None
) -> list[dict]:
    """Turn pydantic errors into ``ErrorItem`` dicts; ``body`` prefixes locations with "body".

    ``shape`` and ``request_body`` let :mod:`attnlab.lab.fields` name each field as the page does.
    """
    seen = set()
    detail = []
    for item in errors:
        loc = _clean_loc(item.get("loc", ["body"]))
        type_ = str(item.get("type", "value_error"))
        if type_ == "json_invalid":  # pydantic locates it at a character offset
            loc = ["body"]
        if body and (not loc or loc[0] not in ("body", "query", "path")):
            loc = ["body", *loc]
        field = field_path(loc)
        ctx = item.get("ctx")
        refs = None
        if type_ == "json_invalid":
            msg = NOT_JSON
        elif _too_long(item.get("input")):  # pydantic's float_type or string_type: its length is the problem
            type_ = "number_too_long"
            msg = error_words(loc, too_long(_digits(item["input"])), shape=shape, body=request_body)
        else:
            if type_ == "value_error" and ctx and "error" in ctx:
                error = ctx["error"]  # our own validators' problem (a FieldError or ValueError in the lab)
                if isinstance(error, FieldError):
                    problem, refs = error.problem, {k: (*loc, *r) for k, r in error.refs.items()}
                else:
                    problem = _without_field(str(error), field.rsplit(".", 1)[-1])
            elif type_ == "value_error" and not ctx and item.get("msg"):
                # raised by hand in web/: "layer 6 does not exist…" at ["path", "layer"]
                problem = _without_field(_without_field(str(item["msg"]), field), field.rsplit(".", 1)[-1])
            else:
                problem = problem_words(type_, ctx)
            msg = error_words(loc, problem, refs, shape=shape, body=request_body)
        key = (tuple(loc), msg)
        if key in seen:
            continue
        seen.add(key)
        detail.append({"loc": loc, "field": field, "msg": msg, "type": type_})
    return detail


def _too_long(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and abs(x) > sys.float_info.max


def _digits(x: int) -> int:
    return len(str(abs(x)))


class _LongInteger:
    """An integer read as its digits only: one Python's ``int`` would refuse (over 4,300 digits)."""

    def __init__(self, text: str) -> None:
        self.digits = len(text.lstrip("-"))


def _read_int(text: str) -> int | _LongInteger:
    return _LongInteger(text) if len(text.lstrip("-")) > sys.get_int_max_str_digits() else int(text)


def _first_long_integer(body: object) -> tuple[tuple[str | int, ...], int] | None:
    """Where the first over-long integer in ``body`` is (outermost first), and its digits."""
    pending: list[tuple[tuple[str | int, ...], object]] = [((), body)]
    while pending:
        at, node = pending.pop()
        if isinstance(node, _LongInteger):
            return at, node.digits
        if isinstance(node, dict):
            pending.extend(((*at, k), v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            pending.extend(((*at, i), v) for i, v in reversed(list(enumerate(node))))
    return None


def unreadable_body_detail(raw: bytes, *, shape: str) -> dict:
    """The one ``ErrorItem`` for a body the JSON reader refused other than by its syntax.

    Python's reader refuses an integer of over 4,300 digits as it reads it (a
    ``ValueError``, not a ``JSONDecodeError``), so the body is read again with
    such integers kept as their digits: one found is too long at its field;
    otherwise (bad UTF-8, say) the body is not JSON.
    """
    try:
        body = json.loads(raw, parse_int=_read_int)
    except (ValueError, RecursionError):
        body = None
    found = _first_long_integer(body)
    if found is None:
        return {"loc": ["body"], "field": "body", "msg": NOT_JSON, "type": "json_invalid"}
    at, digits = found
    loc = ["body", *at]
    return {
        "loc": loc,
        "field": field_path(loc),
        "msg": error_words(loc, too_long(digits), shape=shape, body=body),
        "type": "number_too_long",
    }


def field_error_detail(
    error: FieldError,
    prefix: tuple[str | int, ...] = ("body",),
    *,
    shape: str = "explorer",
    request_body=None,
) -> dict:
    """Turn ``error`` into one ``ErrorItem`` dict located at ``prefix + error.loc``, in the page's words."""
    loc = [*prefix, *error.loc]
    refs = {k: (*prefix, *r) for k, r in error.refs.items()}
    return {
        "loc": loc,
        "field": field_path(loc),
        "msg": error_words(loc, error.problem, refs, shape=shape, body=request_body),
        "type": error.type,
    }


async def request_body(request: Request) -> object:
    """The request's JSON body if it can still be read (for the names the learner gave), else None."""
    try:
        return await request.json()
    except Exception:  # noqa: BLE001 - no body, not JSON, or already consumed: the page's default names
        return None


async def field_error_handler(request: Request, error: FieldError) -> JSONResponse:
    """Answer a ``FieldError`` a route let escape as 422, located under ``body``."""
    detail = field_error_detail(
        error, shape=shape_of_route(request.url.path), request_body=await request_body(request)
    )
    return JSONResponse({"detail": [detail]}, status_code=422)


def body_error(msg: str, type_: str) -> dict:
    return {"detail": [{"loc": ["body"], "field": "body", "msg": msg, "type": type_}]}
