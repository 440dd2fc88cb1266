"""Error answers in one shape: ``{"detail": [{"loc", "field", "msg", "type"}]}``.

``loc`` is the location in the request (``["body", "values", 1, 1]``) and
``field`` the same written as a path (``values[1][1]``): both machine-readable,
for the page to find the control. ``msg`` is the sentence the page shows next
to that control, in its words: ``Source B · value y must be at most
1,000,000`` (``attnlab.lab.fields``). The request's input is never echoed back.

Two sources, one shape: pydantic's errors (``validation_detail``: only their
type and limits are read, never pydantic's text) and the engine's and lab's
:class:`~attnlab.engine.errors.FieldError` (``field_error_detail``, and
``field_error_handler`` for any route that lets one escape), whose ``loc``
and ``problem`` are used as they are; its message is never parsed.
"""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import JSONResponse

from attnlab.engine.errors import FieldError, field_text
from attnlab.lab.fields import error_words, shape_of_route
from attnlab.lab.limits import bound


def field_path(loc: list | tuple) -> str:
    """Write a location like ``("body", "values", 1, 0)`` as ``values[1][0]``."""
    parts = tuple(loc[1:] if loc and loc[0] == "body" else loc)
    return field_text(parts) if parts else "body"


def _clean_loc(loc) -> list[str | int]:
    # pydantic adds the union branch tried ("float", "int") to the location;
    # the learner only needs the field.
    return [p for p in loc if p not in ("float", "int", "bool", "str", "function-after[...]")]


def problem_words(type_: str, ctx: dict | None) -> str:
    """Say what is wrong for a pydantic error, without naming the field; never pydantic's text.

    Only the error's type and its limits (``ctx``) are used; an unknown type
    gets a plain sentence rather than the parser's message.
    """
    ctx = ctx or {}
    if type_ == "missing":
        return "is missing; the lab needs it"
    if type_ == "extra_forbidden":
        return "is not something the lab knows; remove it"
    if type_ == "finite_number":
        return "must be a finite number, not NaN or infinity"
    if type_ in ("float_type", "float_parsing", "int_type", "int_parsing", "int_from_float"):
        whole = type_.startswith("int")
        example = "-1" if whole else "-0.5"
        return f"must be {'a whole number' if whole else 'a number'}, such as 2 or {example}"
    if type_ == "bool_type":
        return "must be true or false"
    if type_ in ("string_type", "string_too_short"):
        return "must be a text of at least one character"
    if type_ == "string_too_long":
        return f"is too long; it may have at most {ctx.get('max_length')} characters"
    if type_ in ("list_type", "dict_type", "model_type", "model_attributes_type"):
        return f"must be {'a list' if type_ == 'list_type' else 'an object'}"
    if type_ == "too_short":
        return f"has {ctx.get('actual_length')} entries; it needs at least {ctx.get('min_length')}"
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
            msg = "The request is not valid JSON, so the lab could not read it. Nothing changed."
        else:
            if type_ == "value_error" and ctx and "error" in ctx:
                error = ctx["error"]  # our own validators' problem (a FieldError or ValueError in the lab)
                if isinstance(error, FieldError):
                    problem, refs = error.problem, {k: (*loc, *r) for k, r in error.refs.items()}
                else:
                    problem = _without_field(str(error), field.rsplit(".", 1)[-1])
            elif type_ == "value_error" and not ctx and item.get("msg"):
                problem = _without_field(str(item["msg"]), field)  # raised by hand in web/
            else:
                problem = problem_words(type_, ctx)
            msg = error_words(loc, problem, refs, shape=shape, body=request_body)
        key = (tuple(loc), msg)
        if key in seen:
            continue
        seen.add(key)
        detail.append({"loc": loc, "field": field, "msg": msg, "type": type_})
    return detail


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
