"""The repeated-run probe: the same text for the same seed, a run of different words written 3 times."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel.kinds import head_profile
from attnlab.lab.realmodel.probe import MAX_SEED, new_seed, repeated_run, words


def test_seed_0_is_this_text_on_every_machine():
    probe = repeated_run(0)
    assert probe["run"][:4] == ["lemon", "umbrella", "meadow", "beetle"]
    assert probe["text"] == " ".join(probe["run"] * 3)
    assert probe["note"] == {
        "text": "Seed 0: a random run of 16 words, written 3 times. From the second copy on, every word "
        "has come before: a head that looks at the word after its earlier occurrence is an induction "
        "head. The same seed gives the same text.",
        "claims": {"seed": 0, "n_words": 16, "repeats": 3},
    }


@settings(max_examples=100, deadline=None)
@given(st.integers(0, MAX_SEED), st.integers(2, 40), st.integers(2, 4))
def test_a_probe_is_its_run_written_repeats_times_and_its_note_says_so(seed, n_words, repeats):
    probe = repeated_run(seed, n_words=n_words, repeats=repeats)
    assert probe == repeated_run(seed, n_words=n_words, repeats=repeats)  # deterministic per seed
    run = probe["run"]
    assert len(run) == len(set(run)) == n_words and set(run) <= set(words())
    assert probe["text"].split(" ") == run * repeats
    assert probe["note"]["claims"] == {"seed": seed, "n_words": n_words, "repeats": repeats}
    opening = f"Seed {seed}: a random run of {n_words} words, written {repeats} times."
    assert probe["note"]["text"].startswith(opening)


def test_a_head_that_copies_on_the_probe_is_named_induction():
    run = repeated_run(7)["run"]
    ids = [words().index(w) for w in run * 3]
    n = len(ids)
    w = np.zeros((n, n))
    w[:16, 0] = 1.0
    for i in range(16, n):  # the word after the previous copy of this word
        w[i, i - 15] = 1.0
    assert head_profile(w, np.tril(np.ones((n, n), dtype=bool)), ids)["kind"] == "induction"


@pytest.mark.parametrize(
    "kwargs, loc, problem",
    [
        ({"seed": -1}, ("seed",), "must be a whole number from 0 to 999,999"),
        ({"seed": True}, ("seed",), "must be a whole number from 0 to 999,999"),
        ({"seed": 1, "n_words": 1}, ("n_words",), f"must be 2 to {len(words())} words"),
        ({"seed": 1, "repeats": 9}, ("repeats",), "must be 2 to 8 copies"),
    ],
)
def test_a_bad_seed_or_size_is_a_field_error(kwargs, loc, problem):
    seed = kwargs.pop("seed")
    with pytest.raises(FieldError) as caught:
        repeated_run(seed, **kwargs)
    assert (caught.value.loc, caught.value.problem) == (loc, problem)


def test_a_new_seed_is_in_range():
    assert all(0 <= new_seed() <= MAX_SEED for _ in range(50))
