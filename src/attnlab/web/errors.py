"""Error answers in one shape: ``{"detail": [{"loc", "field", "msg", "type"}]}``.

``loc`` is the location in the request (``["body", "values", 1, 0]``),
``field`` the same written for people (``values[1][0]``), ``msg`` a message
that starts with the field. The request's input is never echoed back.

Two sources, one shape: pydantic's errors (``validation_detail``) and the
engine's and lab's :class:`~attnlab.engine.errors.FieldError` (``field_error_detail``,
and ``field_error_handler`` for any route that lets one escape). A FieldError's
``loc`` is used as it is, under ``body``; its message is never parsed.
"""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import JSONResponse

from attnlab.engine.errors import FieldError, field_text


def field_path(loc: list | tuple) -> str:
    """Write a location like ``("body", "values", 1, 0)`` as ``values[1][0]``."""
    parts = tuple(loc[1:] if loc and loc[0] == "body" else loc)
    return field_text(parts) if parts else "body"


def _clean_loc(loc) -> list[str | int]:
    # pydantic adds the union branch tried ("float", "int") to the location;
    # the learner only needs the field.
    return [p for p in loc if p not in ("float", "int", "bool", "str", "function-after[...]")]


def validation_detail(errors, *, body: bool = False) -> list[dict]:
    """Turn pydantic errors into ``ErrorItem`` dicts; ``body`` prefixes locations with "body"."""
    seen = set()
    detail = []
    for item in errors:
        loc = _clean_loc(item.get("loc", ["body"]))
        if body and (not loc or loc[0] != "body"):
            loc = ["body", *loc]
        msg = str(item.get("msg", "invalid value"))
        key = (tuple(loc), msg)
        if key in seen:
            continue
        seen.add(key)
        field = field_path(loc)
        detail.append(
            {
                "loc": loc,
                "field": field,
                "msg": msg if msg.startswith(field) else f"{field}: {msg}",
                "type": str(item.get("type", "value_error")),
            }
        )
    return detail


def field_error_detail(error: FieldError, prefix: tuple[str | int, ...] = ("body",)) -> dict:
    """Turn ``error`` into one ``ErrorItem`` dict located at ``prefix + error.loc``.

    The message is kept; when it does not start with the field (a derived
    error: "scores[0] overflows" at ``q``), the field is put in front.
    """
    loc = [*prefix, *error.loc]
    field = field_path(loc)
    msg = str(error)
    return {
        "loc": loc,
        "field": field,
        "msg": msg if msg.startswith(field) else f"{field}: {msg}",
        "type": error.type,
    }


async def field_error_handler(request: Request, error: FieldError) -> JSONResponse:
    """Answer a ``FieldError`` a route let escape as 422, located under ``body``."""
    return JSONResponse({"detail": [field_error_detail(error)]}, status_code=422)


def body_error(msg: str, type_: str) -> dict:
    return {"detail": [{"loc": ["body"], "field": "body", "msg": msg, "type": type_}]}
