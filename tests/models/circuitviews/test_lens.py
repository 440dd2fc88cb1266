"""The logit lens view on SmolLM2: the ranks and the block the numerics found, named."""

from __future__ import annotations

import pytest

from attnlab.models.circuits.lens import logit_lens
from attnlab.models.circuitviews.lens import lens_view

pytestmark = pytest.mark.models


def test_the_lens_names_the_block_the_numerics_found(smollm2, eiffel):
    v = lens_view(smollm2, eiffel)
    lens = logit_lens(smollm2, eiffel)
    named = {"answer": "␣Paris", "first_top1": lens.first_top1, "settled": lens.settled}
    assert v["named"]["claims"] == named
    assert [row["token_rank"] for row in v["layers"]] == lens.token_rank.tolist()
    assert v["layers"][-1]["is_top"] and v["followed"] is None
