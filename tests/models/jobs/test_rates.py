"""Measured rates (models/jobs/rates.py): seconds per unit of each kind's work, and estimates from them."""

from __future__ import annotations

import pytest

from attnlab.models.jobs.rates import PRIOR_S, Rates

TRACE = ("trace", "smollm2")


def test_before_any_job_has_ended_a_job_is_the_prior():
    assert Rates().seconds(TRACE, 300) == PRIOR_S == 5.0
    assert Rates(prior_s=2.5).rate(TRACE) is None


def test_the_rate_is_the_ratio_of_the_newest_jobs_seconds_to_their_units():
    rates = Rates(samples=2)
    rates.add(TRACE, 10.0, 100)  # 0.1 s a character
    assert rates.seconds(TRACE, 40) == 4.0
    rates.add(TRACE, 2.0, 100)  # (10 + 2) / 200
    assert rates.rate(TRACE) == 0.06
    rates.add(TRACE, 3.0, 100)  # the first falls out: (2 + 3) / 200
    assert rates.rate(TRACE) == 0.025
    assert rates.seconds(("trace", "minilm"), 40) == PRIOR_S  # another model is another rate


def test_a_job_without_units_teaches_nothing():
    rates = Rates()
    rates.add(TRACE, 5.0, 0)
    assert rates.rate(TRACE) is None


@pytest.mark.models  # the estimate counts the text's tokens with SmolLM2's tokenizer
def test_a_sweeps_patches_are_estimated_before_it_runs_as_the_sweep_counts_them():
    from attnlab.models.jobs.kinds import patches

    six = "one two three four five six"  # six words: the estimate counts the tokenizer's tokens
    per_kind = {sweep: patches("smollm2", {"clean": six, "sweep": sweep})
                for sweep in ("residual", "heads", "pattern", "keys", "values", "mlp")}  # fmt: skip
    n = per_kind["residual"] // 30
    assert per_kind == {"residual": 30 * n, "heads": 270, "pattern": 270, "keys": 90, "values": 90, "mlp": 30}
    assert patches("smollm2", {"clean": six, "sweep": "heads", "first_layer": 10, "last_layer": 11}) == 18
    assert patches("nope", {"sweep": "heads"}) == 1
