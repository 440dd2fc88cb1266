"""The connection commands' help (``attnlab flash``, ``speculate``, ``kv-cache``), as argparse shows it.

Each default and range it states is read from the lab's own controls (``lab/connections/<name>/``)
or the command's constants (``kv.command``), so the terminal says what the page takes.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.lab.connections.flash import CONTROLS as FLASH
from attnlab.lab.connections.kv import CONTROLS as KV
from attnlab.lab.connections.kv.command import DEFAULT_NEW, MOST_NEW, MOST_TOKENS
from attnlab.lab.connections.speculate import CONTROLS as SPECULATE

# each command's line in `attnlab --help`
COMMANDS = {
    "flash": "FlashAttention tile by tile, causal, against plain causal attention; memory; a sliding window",
    "speculate": "speculative decoding on SmolLM2 or another model: the same tokens as greedy decoding, in "
    "fewer passes",
    "kv-cache": "a model's KV cache at N tokens, or measured live as it writes after TEXT",
}


def _control(controls, name: str):
    return next(c for c in controls if c.name == name)


def _range(controls, name: str) -> str:
    c = _control(controls, name)
    return f"default {c.default}; {c.lo} to {c.hi}"


def flash_help() -> dict[str, str]:
    """``attnlab flash``: each option's help, by its flag."""
    return {
        "--n": f"sequence length ({_range(FLASH, 'n')})",
        "--tile": "tile size: query blocks and key tiles (default 16, at most n)",
        "--row": "the query row walked (default n − 1, the last row)",
        "--keys": "keys walked so far (default n: the whole walk)",
        "--window": "sliding window in keys (default 8, at most n)",
        "--seed": f"random seed of q, k and v ({_range(FLASH, 'seed')})",
        "--json": "the input and every number at full precision, as JSON",
        "--python": "the generated NumPy program",
    }


def speculate_help() -> dict[str, str]:
    """``attnlab speculate``: each argument's help."""
    return {
        "TEXT": "the prompt the model continues; text that repeats itself gives the draft something to copy",
        "--max-new-tokens": f"tokens to make ({_range(SPECULATE, 'tokens')})",
        "--ngram": f"tokens looked up in the context ({_range(SPECULATE, 'ngram')})",
        "--draft": f"tokens drafted a pass ({_range(SPECULATE, 'draft')})",
        "--model": "the target: smollm2 (default), a model that writes attnlab models lists, or a path: a "
        "folder with config.json, *.safetensors and tokenizer.json, or a .gguf file",
        "--json": "the input and the run's numbers, as JSON",
    }


def kv_cache_help(*, models: Sequence[str], first: str) -> dict[str, str]:
    """``attnlab kv-cache``: ``models`` the registry's names, ``first`` the default (a model that writes)."""
    return {
        "TEXT": "a prompt: the model writes --tokens new tokens after it, and its caches are measured "
        "after each one",
        "--model": f"one of {', '.join(models)} (default {first}; with TEXT, a model that writes), a model "
        "attnlab models lists, or a path: a folder with config.json, *.safetensors and tokenizer.json, or a "
        ".gguf file",
        "--tokens": f"tokens in the cache (default {_control(KV, 'tokens').default}; 1 to {MOST_TOKENS:,}), "
        f"or with TEXT the new tokens to write (default {DEFAULT_NEW}; 1 to {MOST_NEW})",
        "--bytes": "bytes a number (default 2)",
        "--json": "every number, as JSON",
    }
