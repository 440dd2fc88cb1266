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


def _bound(x) -> str:
    x = float(x)
    return f"{x:,.0f}" if x == int(x) and abs(x) >= 1000 else fmt_number(x)


def fmt_number(x: float) -> str:
    return repr(int(x)) if x == int(x) and abs(x) < 1e15 else repr(x)


def lab_words(field: str, type_: str, ctx: dict | None, msg: str) -> str:
    """Say a pydantic error in the lab's own words, naming ``field``; never pydantic's text.

    Only the error's type and its limits (``ctx``) are used; an unknown type
    gets a plain sentence rather than the parser's message.
    """
    ctx = ctx or {}
    if type_ == "json_invalid":
        return "The request is not valid JSON, so the lab could not read it. Nothing changed."
    if type_ == "missing":
        return f"{field} is missing; the lab needs it."
    if type_ == "extra_forbidden":
        return f"{field} is not something the lab knows; remove it."
    if type_ == "finite_number":
        return f"{field} must be a finite number, not NaN or infinity."
    if type_ in ("float_type", "float_parsing", "int_type", "int_parsing", "int_from_float"):
        whole = type_.startswith("int")
        return f"{field} must be {'a whole number' if whole else 'a number'}, such as 2 or -0.5."
    if type_ == "bool_type":
        return f"{field} must be true or false."
    if type_ in ("string_type", "string_too_short"):
        return f"{field} must be a text of at least one character."
    if type_ == "string_too_long":
        return f"{field} is too long; it may have at most {ctx.get('max_length')} characters."
    if type_ in ("list_type", "dict_type", "model_type", "model_attributes_type"):
        kind = "a list" if type_ == "list_type" else "an object"
        return f"{field} must be {kind}."
    if type_ == "too_short":
        return f"{field} has {ctx.get('actual_length')} entries; it needs at least {ctx.get('min_length')}."
    if type_ == "too_long":
        return f"{field} has too many entries; it may have at most {ctx.get('max_length')}."
    if type_ in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        words = {
            "greater_than_equal": "at least",
            "less_than_equal": "at most",
            "greater_than": "more than",
            "less_than": "less than",
        }[type_]
        limit = next(iter(ctx.values()), None) if ctx else None
        extra = ""
        if type_ in ("greater_than_equal", "less_than_equal") and limit is not None:
            # a number field's own limit (a float bound; whole-number fields such as an index or
            # top_k get no sentence): ±1,000,000 for the explorer (what its planes can draw),
            # ±1,000 for the block's x and weights (block_data.MAX_MAGNITUDE)
            if not isinstance(limit, float):
                pass
            elif abs(limit) == 1e6:
                extra = " The lab keeps every coordinate within ±1,000,000 so the planes can draw it."
            elif abs(limit) >= 1000:
                extra = f" The lab keeps every number here within ±{_bound(abs(float(limit)))}."
        return f"{field} must be {words} {_bound(limit)}.{extra}" if limit is not None else (
            f"{field} is out of range."
        )
    if type_ == "literal_error":
        return f"{field} must be one of {ctx.get('expected', 'the listed choices')}."
    return f"{field} is not in a form the lab can use."


def validation_detail(errors, *, body: bool = False) -> list[dict]:
    """Turn pydantic errors into ``ErrorItem`` dicts; ``body`` prefixes locations with "body"."""
    seen = set()
    detail = []
    for item in errors:
        loc = _clean_loc(item.get("loc", ["body"]))
        if item.get("type") == "json_invalid":  # pydantic locates it at a character offset
            loc = ["body"]
        if body and (not loc or loc[0] != "body"):
            loc = ["body", *loc]
        field = field_path(loc)
        type_ = str(item.get("type", "value_error"))
        ctx = item.get("ctx")
        if type_ == "value_error" and ctx and "error" in ctx:
            msg = str(ctx["error"])  # our own validators' words (a ValueError raised in the lab)
            msg = msg if msg.startswith(field) else f"{field}: {msg}"
        elif type_ == "value_error" and not ctx and item.get("msg"):
            msg = str(item["msg"])  # raised by hand in web/ with the lab's words (pydantic adds ctx)
        else:
            msg = lab_words(field, type_, ctx, str(item.get("msg", "")))
        key = (tuple(loc), msg)
        if key in seen:
            continue
        seen.add(key)
        detail.append(
            {
                "loc": loc,
                "field": field,
                "msg": msg,
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
