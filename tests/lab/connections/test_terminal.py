"""The connection commands' help states the defaults and ranges the labs themselves take."""

from __future__ import annotations

import re

from attnlab.lab.connections import terminal
from attnlab.lab.connections.controls import read
from attnlab.lab.connections.flash import CONTROLS as FLASH
from attnlab.lab.connections.kv import CONTROLS as KV
from attnlab.lab.connections.kv.command import DEFAULT_NEW, MOST_NEW, MOST_TOKENS, tokens_refused
from attnlab.lab.connections.speculate import CONTROLS as SPECULATE


def stated(text: str) -> tuple[int, int | None, int | None]:
    """(default, lo, hi) as a help line writes them: "(default 24; 4 to 64)" or "(default 0)"."""
    m = re.search(r"\(default ([\d,]+)(?:; ([\d,]+) to ([\d,]+))?\)", text)
    assert m, text
    default, lo, hi = (None if g is None else int(g.replace(",", "")) for g in m.groups())
    return default, lo, hi


def test_flash_help_states_the_flash_labs_defaults_and_ranges():
    said = terminal.flash_help()
    defaults = read(FLASH, {}, "inputs")
    assert said["--row"] == "the query row walked (default n − 1, the last row)"
    assert defaults["row"] == defaults["n"] - 1
    assert read(FLASH, {"n": 9}, "inputs")["row"] == 8
    for name in ("n", "seed"):
        default, lo, hi = stated(said[f"--{name}"])
        c = next(c for c in FLASH if c.name == name)
        assert default == defaults[name]
        if lo is not None:
            assert (lo, hi) == (c.lo, c.hi)
    # "default 16, at most n" and "default 8, at most n" as the controls compute them at n's default
    assert defaults["tile"] == 16 and defaults["window"] == 8 and defaults["keys"] == defaults["n"]


def test_speculate_help_states_the_speculate_labs_defaults_and_ranges():
    said = terminal.speculate_help()
    for flag, name in (("--max-new-tokens", "tokens"), ("--ngram", "ngram"), ("--draft", "draft")):
        c = next(c for c in SPECULATE if c.name == name)
        assert stated(said[flag]) == (c.default, c.lo, c.hi)


def test_kv_cache_help_states_what_the_command_refuses():
    said = terminal.kv_cache_help(models=["minilm", "smollm2"], first="smollm2")
    assert str(next(c for c in KV if c.name == "tokens").default) in said["--tokens"]
    assert f"1 to {MOST_TOKENS:,}" in said["--tokens"]
    assert f"(default {DEFAULT_NEW}; 1 to {MOST_NEW})" in said["--tokens"]
    assert tokens_refused(MOST_TOKENS, new=False) is None and tokens_refused(MOST_TOKENS + 1, new=False)
    assert tokens_refused(MOST_NEW, new=True) is None and tokens_refused(MOST_NEW + 1, new=True)
    assert said["--model"] == (
        "one of minilm, smollm2 (default smollm2; with TEXT, a model that writes), a model attnlab models "
        "lists, or a path: a folder with config.json, *.safetensors and tokenizer.json, or a .gguf "
        "file")  # fmt: skip
