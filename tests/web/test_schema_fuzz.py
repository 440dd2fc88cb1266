"""Property-based requests from the OpenAPI schema (schemathesis) against the real app.

Every generated request, valid or not, must get a documented answer: no 5xx,
a documented status code and content type, and a body that matches the
schema. Bounded to keep the suite quick.
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from attnlab.web.app import create_app

schema = schemathesis.openapi.from_asgi("/api/openapi.json", create_app())

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@schema.parametrize()
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_api_answers_every_request_as_documented(case):
    case.call_and_validate(checks=CHECKS)
