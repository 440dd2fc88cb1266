"""Every integer the API reads has a largest value its use can take: the OpenAPI schema says so.

Before: ``POST /api/models/program`` read token ids without a bound, and one >= 2**32 answered
500 (an ``OverflowError`` in the tokenizer). A schema integer without a maximum is a place where
that can happen again; each route's own checks (a token id against the model's vocabulary) come
after these bounds (tests/web/realmodel/test_programs.py).
"""

from __future__ import annotations

from attnlab.web.app import create_app


def _refs(node, found: set[str]) -> None:
    if isinstance(node, dict):
        if "$ref" in node:
            found.add(node["$ref"].rsplit("/", 1)[-1])
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _unbounded(node, where: str, out: list[str]) -> None:
    if isinstance(node, dict):
        if node.get("type") == "integer" and not {"maximum", "exclusiveMaximum", "const", "enum"} & set(node):
            out.append(where)
        for key, value in node.items():
            _unbounded(value, f"{where}/{key}", out)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _unbounded(value, f"{where}/{i}", out)


def test_every_integer_a_route_reads_has_a_maximum():
    schema = create_app().openapi()
    read: list[tuple[str, object]] = []  # (where, schema) of every request body and parameter
    for path, methods in schema["paths"].items():
        for method, op in methods.items():
            for p in op.get("parameters", []):
                read.append((f"{method.upper()} {path} {p['in']}.{p['name']}", p["schema"]))
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body is not None:
                read.append((f"{method.upper()} {path} body", body))
    components = schema["components"]["schemas"]
    names: set[str] = set()
    for _, node in read:
        _refs(node, names)
    while True:  # the bodies' models and every model they refer to
        more = set(names)
        for name in names:
            _refs(components[name], more)
        if more == names:
            break
        names = more
    unbounded: list[str] = []
    for where, node in read:
        _unbounded(node, where, unbounded)
    for name in sorted(names):
        _unbounded(components[name], f"#/{name}", unbounded)
    assert len(read) > 40 and "NumberOfIds" in names  # it looked where it should
    assert unbounded == []


def test_a_model_name_too_long_for_a_file_name_is_refused_at_the_model():
    # Before: 500 (OSError: File name too long), the name tried as a path on disk (schemathesis found it).
    from fastapi.testclient import TestClient

    name = "0" * 400
    with TestClient(create_app()) as client:
        about = client.get("/api/models/about", params={"model": name})
        tokens = client.post(f"/api/models/{name}/tokens", json={"text": "a"})
    for answer in (about, tokens):
        assert 400 <= answer.status_code < 500, answer.text[:300]
        assert "model" in {str(part) for d in answer.json()["detail"] for part in d["loc"]}


def test_a_model_name_with_a_line_break_is_refused_at_the_model():
    # Before: a bare 404 {"detail": "Not Found"} (the route's path parameter stopped at the line break,
    # so the URL matched no route; schemathesis found it): now the name is read and refused in words.
    from fastapi.testclient import TestClient

    with TestClient(create_app()) as client:
        answer = client.post("/api/models/a%0Ab/tokens", json={"text": "a"})
    assert answer.status_code == 422
    (item,) = answer.json()["detail"]
    assert item["loc"] == ["path", "model"] and item["msg"].startswith("Model 'a\\nb' is unknown")
