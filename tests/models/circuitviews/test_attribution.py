"""Which heads matter here, on SmolLM2: the terms the numerics computed, and the exact sum said."""

from __future__ import annotations

import pytest

from attnlab.models.circuits.attribution import logit_attribution
from attnlab.models.circuitviews.attribution import attribution_view

pytestmark = pytest.mark.models


def test_the_attribution_adds_up_and_says_so(smollm2, eiffel):
    v = attribution_view(smollm2, eiffel)
    a = logit_attribution(smollm2, eiffel)
    claims = v["exact"]["claims"]
    assert (claims["total"], claims["logit"], claims["bound"]) == (a.total, a.logit, a.bound)
    assert claims["within"] is True and claims["count"] == 1 + 30 * 10
    assert v["token"]["label"] == "␣Paris" and v["label"] == "8 ␣of"
    assert v["map"]["values"][18][6] == a.heads[18, 6] and v["map"]["values"][29][9] == a.mlps[29]
