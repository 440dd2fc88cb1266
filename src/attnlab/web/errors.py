"""Error answers in one shape: ``{"detail": [{"loc", "field", "msg", "type"}]}``.

``loc`` is the location in the request (``["body", "values", 1, 1]``) and
``field`` the same written as a path (``values[1][1]``): both machine-readable,
for the page to find the control. ``msg`` is the sentence the page shows next
to that control, in its words: ``Source B · value y must be at most
1,000,000`` (``attnlab.lab.fields``). The request's input is never echoed back.

An integer too long for a float (over 309 digits) is refused at its field
as too long, wherever it stands, and so is one too long for Python's JSON
reader to take at all (over 4,300 digits: :func:`unreadable_body_detail`) or
for a path or query parameter (pydantic's ``int_parsing_size``).

A number's problem gives examples the field itself takes (``Layer must be a
whole number, such as 0 or 2``): the field's bounds come from the route
(:func:`route_limits`) or the request's model (:func:`model_limits`).

Two sources, one shape: pydantic's errors (``validation_detail``: only their
type and limits are read, never pydantic's text) and the engine's and lab's
:class:`~attnlab.engine.errors.FieldError` (``field_error_detail``, and
``field_error_handler`` for any route that lets one escape), whose ``loc``
and ``problem`` are used as they are; its message is never parsed.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable
from typing import Annotated, Union, get_args, get_origin

from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from attnlab.engine.errors import FieldError, field_text
from attnlab.lab.fields import NOT_JSON, TOO_DEEP, error_words, problem_words, shape_of_route, too_long

Limits = Callable[[list], dict]  # a field's location -> its bounds by pydantic's names (ge, gt, le, lt)


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
    errors, *, body: bool = False, shape: str = "explorer", request_body=None, limits: Limits | None = None
) -> list[dict]:
    """Turn pydantic errors into ``ErrorItem`` dicts; ``body`` prefixes locations with "body".

    ``shape`` and ``request_body`` let :mod:`attnlab.lab.fields` name each field as the page does;
    ``limits`` gives a field's bounds, for the examples a number's problem gives.
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
        elif type_ == "int_parsing_size":  # a path or query integer of over 4,300 digits
            type_ = "number_too_long"
            digits = len(str(item.get("input", "")).strip().lstrip("+-"))
            msg = error_words(loc, too_long(digits), shape=shape, body=request_body)
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
                problem = problem_words(type_, ctx, limits(loc) if limits else None)
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


def unreadable_json_detail(error: ValueError | RecursionError, raw: bytes, *, shape: str) -> dict:
    """The one ``ErrorItem`` for JSON text that Python's reader refused: too deep, or as
    :func:`unreadable_body_detail` says (a drag socket's message, as its POST would be answered)."""
    if isinstance(error, RecursionError):
        return body_error(TOO_DEEP, "json_too_deep")["detail"][0]
    return unreadable_body_detail(raw, shape=shape)


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


# --- a field's bounds, for the examples of a number's problem ----------------------------

_BOUNDS = ("ge", "gt", "le", "lt")


def _bounds_of(metadata) -> dict:
    """The bounds declared in pydantic metadata (``Field(ge=0, le=7)``, annotated_types' ``Ge``...)."""
    found: dict = {}
    for item in metadata:
        if isinstance(item, FieldInfo):
            found |= _bounds_of(item.metadata)
            continue
        for name in _BOUNDS:
            value = getattr(item, name, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                found[name] = value
    return found


def _limits_in(annotation, path: tuple) -> dict:
    """The bounds of the field at ``path`` (names and list indexes) inside ``annotation``."""
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *metadata = get_args(annotation)
        inner = _limits_in(base, path)
        return {**_bounds_of(metadata), **inner} if not path else inner
    if origin in (Union, types.UnionType):
        for arg in get_args(annotation):
            if arg is not type(None) and (found := _limits_in(arg, path)):
                return found
        return {}
    if not path:
        return {}
    head, rest = path[0], path[1:]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = annotation.model_fields.get(head) if isinstance(head, str) else None
        if field is None:
            return {}
        return {**(_bounds_of(field.metadata) if not rest else {}), **_limits_in(field.annotation, rest)}
    if origin in (list, tuple) and isinstance(head, int) and get_args(annotation):
        return _limits_in(get_args(annotation)[0], rest)
    return {}


def model_limits(model: type[BaseModel]) -> Limits:
    """The bounds of a field in a body of ``model``, by its location (``["body", "edits", 0, "row"]``)."""
    return lambda loc: _limits_in(model, tuple(loc[1:] if loc and loc[0] == "body" else loc))


def _params(dependant) -> list:
    found = [*dependant.path_params, *dependant.query_params]
    for sub in dependant.dependencies:
        found.extend(_params(sub))
    return found


def route_limits(route) -> Limits:
    """The bounds of a field of a request to FastAPI ``route``: a path or query parameter, or in its body."""

    def limits(loc: list) -> dict:
        dependant = getattr(route, "dependant", None)
        if dependant is None or not loc:
            return {}
        where, rest = loc[0], tuple(loc[1:])
        if where in ("path", "query") and len(rest) == 1:
            for param in _params(dependant):
                if rest[0] in (param.name, param.alias):
                    info = param.field_info
                    return {**_bounds_of(info.metadata), **_limits_in(info.annotation, ())}
            return {}
        body = getattr(route, "body_field", None)
        return _limits_in(body.field_info.annotation, rest) if where == "body" and body is not None else {}

    return limits
