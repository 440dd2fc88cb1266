"""The standard probe for induction heads: a random run of words, written several times.

``repeated_run(seed)`` draws ``n_words`` different words from ``lab/data/probe_words.json``
(``random.Random(seed).sample``: the same seed gives the same run on every machine
and Python version) and writes the run ``repeats`` times, separated by spaces. From
the second copy on, every token has an earlier occurrence, and the token after that
occurrence is what comes next: a head that attends there is an induction head
(:mod:`attnlab.lab.realmodel.kinds`). A random run has no meaning to predict from,
so only copying explains attention there.
"""

from __future__ import annotations

import json
import random
import secrets
from functools import cache
from importlib import resources

from attnlab.engine.errors import FieldError
from attnlab.lab.said import said

N_WORDS = 16  # the run's length, in words
REPEATS = 3  # how many times the run is written
MAX_SEED = 999_999  # seeds 0..MAX_SEED: six digits to read off the page


@cache
def words() -> tuple[str, ...]:
    """The probe's word list: common concrete nouns, lowercase, each once."""
    text = resources.files("attnlab.lab").joinpath("data/probe_words.json").read_text("utf-8")
    return tuple(json.loads(text)["words"])


def new_seed() -> int:
    """A fresh seed in 0..MAX_SEED, for a probe nobody asked a seed for."""
    return secrets.randbelow(MAX_SEED + 1)


def repeated_run(seed: int, *, n_words: int = N_WORDS, repeats: int = REPEATS) -> dict:
    """The probe text for ``seed``: ``n_words`` different words, written ``repeats`` times.

    Returns ``{"seed", "n_words", "repeats", "run", "text", "note"}``; ``note`` is the
    sentence the page shows beside the button, with its claims.
    """
    pool = words()
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise FieldError("seed", f"must be a whole number from 0 to {MAX_SEED:,}")
    if not 2 <= n_words <= len(pool):
        raise FieldError("n_words", f"must be 2 to {len(pool)} words")
    if not 2 <= repeats <= 8:
        raise FieldError("repeats", "must be 2 to 8 copies")
    run = random.Random(seed).sample(pool, n_words)
    text = " ".join(run * repeats)
    note = said(
        f"Seed {seed}: a random run of {n_words} words, written {repeats} times. "
        "From the second copy on, every word has come before: a head that looks at the word "
        "after its earlier occurrence is an induction head. The same seed gives the same text.",
        seed=seed,
        n_words=n_words,
        repeats=repeats,
    )
    return {"seed": seed, "n_words": n_words, "repeats": repeats, "run": run, "text": text, "note": note}
