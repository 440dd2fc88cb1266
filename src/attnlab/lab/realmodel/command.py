"""Every line ``attnlab heads``, ``logits`` and ``generate`` print: help, tables, lines and refusals.

Tables come as rows of cells (strings, every number printed by ``attnlab.lab.numbers``);
the command only lines them up. A token is named as the page shows it, whitespace
visible (:func:`attnlab.lab.realmodel.tokens.token_label`: ␣, ⏎, ⇥), with its index:
``3:␣sat``. The refusals are the command's own checks on its arguments (the model's
and the lab's checks raise ``FieldError`` with :mod:`attnlab.lab.realmodel.problems`).
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.kinds import top_sources
from attnlab.lab.realmodel.modelview import head_table_heading, layer_table
from attnlab.lab.realmodel.tokens import short_label, token_label

WIDTH = 8  # characters of a token's label in a table's header
LOGITS_HEADER = ["rank", "token", "id", "logit", "p (model)", "p"]


def token_name(index: int, text: str) -> str:
    """``"3:␣sat"``: a token's index and visible label, cut to ``WIDTH`` characters."""
    return f"{index}:{short_label(token_label(text)['label'], WIDTH)}"


def heads_heading(*, title: str, n_tokens: int, layer: int, n_layer: int) -> str:
    """The first line of ``attnlab heads``: the model, the text's tokens, the layer shown."""
    return f"{title}: {fmt.plural(n_tokens, 'token')}, layer {layer} of 0..{n_layer - 1}"


def head_rows(trace, layer: int, head: int) -> tuple[str, list[list[str]]]:
    """One head as the command prints it: its heading and the rows of its share table.

    Row = query token, column = key token, each share to two decimals ("." where blocked),
    and the query's top source with its share.
    """
    w = trace.head_weights(layer, head)  # (T, T)
    names = [token_name(i, t) for i, t in enumerate(trace.tokens)]
    rows = [["query \\ key", *names, "top source"]]
    for i, name in enumerate(names):
        cells = [fmt.rounded(float(w[i, j]), 2) if trace.allowed[i, j] else "." for j in range(len(names))]
        label, share = top_sources(w[i], names, k=1)[0]
        rows.append([name, *cells, f"{label} {fmt.percent(share)}"])
    return head_table_heading(trace, layer, head), rows


def layer_rows(trace, layer: int) -> tuple[list[list[str]], str]:
    """Every head of a layer as the command prints it: the table's rows (header first) and its note."""
    table = layer_table(trace, layer, token_name(0, trace.tokens[0]))
    return [table["header"], *table["rows"]], table["note"]


def logits_row(entry: dict) -> list[str]:
    """One entry of the next-token view (:func:`attnlab.lab.realmodel.nexttoken.next_token`) as a row
    of ``LOGITS_HEADER``."""
    cells = [entry["token_label"], str(entry["id"]), entry["logit_display"], entry["p_model_display"]]
    return [str(entry["rank"]), *cells, entry["p_display"]]


def finished(finish: str | None) -> str:
    """Why a generation stopped, on its own line: ``[end_of_turn]`` or ``[length]``."""
    return f"[{finish or 'length'}]"


# -- the command's refusals (one line on stderr each) ---------------------------------


def top_out_of_range(top: int, most: int) -> str:
    return f"--top {top} is out of range; use 1..{most}"


def no_position(position: int, n_tokens: int) -> str:
    return f"--position {position} does not exist; the text has tokens 0..{n_tokens - 1}"


def encoder(name: str, decoders: Sequence[str]) -> str:
    return f"{name} is an encoder: it does not predict text; use --model {' or '.join(decoders)}"


def new_tokens_out_of_range(value: int, low: int, high: int) -> str:
    return f"--max-new-tokens must be from {low} to {high}, not {value}"


# -- each argument's help (argparse prints it) --------------------------------------------


WEIGHTS_HELP = ("what the products run on: auto (the fastest exact path here: SmolLM2's file's Q4_1 blocks "
                "where the kernels run), q4_1 or float32 (float weights, whose numbers the program --python "
                "prints bit for bit)")


def _one_of(names: Sequence[str]) -> str:
    return (f"one of {', '.join(names)} (default {names[0]}), a model attnlab models lists, or a path: "
            "a folder with config.json, *.safetensors and tokenizer.json, or a .gguf file")  # fmt: skip


def help_texts(*, models: Sequence[str], decoders: Sequence[str], most_new_tokens: int,
               most_shown: int) -> dict[str, dict[str, str]]:  # fmt: skip
    """Each command's arguments' help, by command and argument (``models``: the registry's names)."""
    return {
        "heads": {
            "command": "show a real model's attention heads on a text",
            "text": 'the text to look at, e.g. "The cat sat on the mat."',
            "--model": _one_of(models),
            "--layer": "layer index, from 0 (default 0)",
            "--head": "head index, from 0 (default: a summary of every head)",
            "--json": "full-precision numbers as JSON",
            "--details": "with --json: add q, k, v and scores",
        },
        "generate": {
            "command": "continue a text with SmolLM2, streaming tokens",
            "prompt": 'the text to continue, e.g. "Once upon a time"',
            "--model": _one_of(decoders),
            "--max-new-tokens": f"stop after this many (default 64; at most {most_new_tokens})",
            "--chat": "answer the prompt as the assistant, in the chat template (default: continue the text "
            "as it is)",
            "--temperature": "0 = greedy (default)",
            "--top-k": "sample among the k likeliest tokens",
            "--top-p": "sample within this share of mass",
            "--seed": "make sampling repeatable",
            "--json": "print the tokens and timings as one JSON object",
        },
        "logits": {
            "command": "next-token probabilities, with temperature, top-k and top-p",
            "text": 'the text, e.g. "The capital of France is"',
            "--model": _one_of(decoders),
            "--top": f"how many tokens to list, 1..{most_shown} (default 10)",
            "--position": "the token after which to predict (default: the last)",
            "--temperature": "divide the logits by this (0 = greedy; default 1)",
            "--top-k": "keep the k likeliest tokens",
            "--top-p": "keep the likeliest tokens up to this share of mass",
            "--json": "the entries (token, id, logit, p) as JSON",
        },
    }
