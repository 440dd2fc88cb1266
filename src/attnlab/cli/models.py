"""The ``attnlab heads``, ``attnlab generate`` and ``attnlab logits`` commands.

``heads`` prints one head's attention as a table of shares (rows = query
tokens, columns = key tokens), or every head of a layer with what each one
does; ``--json`` prints the full-precision numbers instead. ``generate``
streams a decoder's continuation of the text as it is, token by token
(``--chat``: as the user's turn in the chat template, like the page's "Answer
as the assistant" choice). ``logits`` prints the next-token distribution at a position, with
temperature, top-k and top-p applied as the page's view applies them. The
models and their defaults come from :mod:`attnlab.models.registry`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from attnlab.lab import limits
from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.kinds import top_sources
from attnlab.lab.realmodel.modelview import head_table_heading, layer_table
from attnlab.lab.realmodel.status import NO_CHAT_HINT_CLI
from attnlab.lab.realmodel.tokens import row_label
from attnlab.models import registry
from attnlab.models.files import ModelNotInstalled
from attnlab.models.jobs import check_tokens
from attnlab.models.nexttoken import MAX_TOKENS_SHOWN, next_token
from attnlab.models.registry import check_name, get_model
from attnlab.models.sampling import Sampling

MAX_TEXT_CHARS = 2000  # the command's cap; the lab's own cap is lower


def add_heads_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", help='the text to look at, e.g. "The cat sat on the mat."')
    names = ", ".join(registry.names())
    p.add_argument(
        "--model", default=registry.names()[0], help=f"one of {names} (default {registry.names()[0]})"
    )
    p.add_argument("--layer", type=int, default=0, help="layer index, from 0 (default 0)")
    p.add_argument("--head", type=int, help="head index, from 0 (default: a summary of every head)")
    p.add_argument("--json", action="store_true", help="full-precision numbers as JSON")
    p.add_argument("--details", action="store_true", help="with --json: add q, k, v and scores")


def add_generate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("prompt", help='the text to continue, e.g. "Once upon a time"')
    _decoder_argument(p)
    p.add_argument(
        "--max-new-tokens",
        type=int,
        default=64,
        help=f"stop after this many (default 64; at most {limits.CLI_MAX_NEW_TOKENS})",
    )
    p.add_argument(
        "--chat",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="answer the prompt as the assistant, in the chat template (default: continue the text as it is)",
    )
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    p.add_argument("--top-k", type=int, default=None, help="sample among the k likeliest tokens")
    p.add_argument("--top-p", type=float, default=1.0, help="sample within this share of mass")
    p.add_argument("--seed", type=int, default=None, help="make sampling repeatable")
    p.add_argument("--json", action="store_true", help="print the tokens and timings as one JSON object")


def _decoder_argument(p: argparse.ArgumentParser) -> None:
    decoders = registry.decoders()
    p.add_argument(
        "--model", default=decoders[0], help=f"one of {', '.join(decoders)} (default {decoders[0]})"
    )


def _decoder(name: str):
    spec = registry.spec(name)
    if not spec.generates:
        raise ValueError(
            f"{name} is an encoder: it does not predict text; use --model {' or '.join(registry.decoders())}"
        )
    return spec


def add_logits_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", help='the text, e.g. "The capital of France is"')
    _decoder_argument(p)
    p.add_argument(
        "--top", type=int, default=10, help=f"how many tokens to list, 1..{MAX_TOKENS_SHOWN} (default 10)"
    )
    p.add_argument(
        "--position", type=int, default=None, help="the token after which to predict (default: the last)"
    )
    p.add_argument(
        "--temperature", type=float, default=1.0, help="divide the logits by this (0 = greedy; default 1)"
    )
    p.add_argument("--top-k", type=int, default=None, help="keep the k likeliest tokens")
    p.add_argument(
        "--top-p", type=float, default=1.0, help="keep the likeliest tokens up to this share of mass"
    )
    p.add_argument("--json", action="store_true", help="the entries (token, id, logit, p) as JSON")


def run_logits(args: argparse.Namespace) -> int:
    _check_text(args.text, "text")
    _decoder(check_name(args.model))
    if not 1 <= args.top <= MAX_TOKENS_SHOWN:
        raise ValueError(f"--top {args.top} is out of range; use 1..{MAX_TOKENS_SHOWN}")
    sampling = Sampling(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p)
    model = _load(args.model)
    ids = model.encode(args.text)
    position = len(ids) - 1 if args.position is None else args.position
    if not 0 <= position < len(ids):
        raise ValueError(f"--position {position} does not exist; the text has tokens 0..{len(ids) - 1}")
    logits = model.logits(ids[: position + 1])[-1]  # causal: later tokens do not change this row
    actual = ids[position + 1] if position + 1 < len(ids) else None
    labels = model.token_labels(ids)
    context = row_label(position, labels[position])
    view = next_token(
        logits, sampling, decode=lambda i: model.decode([i]), top=args.top, actual=actual, context=context
    )
    if args.json:
        entries = [
            {"token": e["token"], "id": e["id"], "logit": e["logit"], "p": e["p"], "p_model": e["p_model"]}
            for e in view["entries"]
        ]
        removed = [{**r, "words": r["words"]["text"]} for r in view["removed"]]
        out = {"position": position, "context": labels[position], "entries": entries,
               "removed": removed, "kept": view["kept"], "actual": view["actual"]}  # fmt: skip
        print(json.dumps(out))
        return 0
    words = view["words"]
    print(words["context"]["text"])
    rows = [["rank", "token", "id", "logit", "p (model)", "p"]]
    for e in view["entries"]:
        cells = [e["token_label"], str(e["id"]), e["logit_display"], e["p_model_display"], e["p_display"]]
        rows.append([str(e["rank"]), *cells])
    print(_grid(rows))
    print()
    for removed in view["removed"]:
        print(removed["words"]["text"])
    print(words["kept"]["text"])
    print(words["actual"]["text"])
    return 0


def _load(name: str):
    try:
        return get_model(check_name(name))
    except ModelNotInstalled as error:
        raise ValueError(str(error)) from None


def _check_text(text: str, field: str) -> None:
    if not text.strip():
        raise ValueError(f"{field} is empty: give some text")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"{field} has {len(text)} characters; the limit is {MAX_TEXT_CHARS}")


def run_heads(args: argparse.Namespace) -> int:
    _check_text(args.text, "text")
    check_name(args.model)
    model = _load(args.model)
    trace = model.trace(args.text, details=args.details)
    trace.check(layer=args.layer, head=args.head)
    if args.json:
        layer = trace.layer_dict(args.layer, details=args.details)
        if args.head is not None:
            layer = {k: (v[args.head] if k in ("weights", "scores", "q") else v) for k, v in layer.items()}
            if args.details:
                g = trace.kv_head(args.head)
                layer["k"], layer["v"] = layer["k"][g], layer["v"][g]
            layer["head"] = args.head
        print(json.dumps({**trace.summary_dict(), **layer}))
        return 0
    print(f"{model.title}: {len(trace.tokens)} tokens, layer {args.layer} of 0..{trace.n_layer - 1}")
    if args.head is None:
        print(_layer_table(trace, args.layer))
    else:
        print(_head_table(trace, args.layer, args.head))
    return 0


def _grid(rows: list[list[str]]) -> str:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(r, widths)).rstrip() for r in rows)


def _short(token: str, width: int = 8) -> str:
    token = token.replace("\n", "\\n").replace("\t", "\\t")
    return token if len(token) <= width else token[: width - 1] + "…"


def _head_table(trace, layer: int, head: int) -> str:
    w = trace.head_weights(layer, head)
    names = [f"{i}:{_short(t)}" for i, t in enumerate(trace.tokens)]
    lines = [head_table_heading(trace, layer, head), ""]
    rows = [["query \\ key", *names, "top source"]]
    for i, name in enumerate(names):
        cells = [fmt.rounded(float(w[i, j]), 2) if trace.allowed[i, j] else "." for j in range(len(names))]
        label, share = top_sources(w[i], names, k=1)[0]
        rows.append([name, *cells, f"{label} {fmt.percent(share)}"])
    return "\n".join(lines) + "\n" + _grid(rows)


def _layer_table(trace, layer: int) -> str:
    table = layer_table(trace, layer, f"0:{_short(trace.tokens[0])}")
    return _grid([table["header"], *table["rows"]]) + "\n\n" + table["note"]


def run_generate(args: argparse.Namespace) -> int:
    _decoder(check_name(args.model))
    chat = bool(args.chat)
    if not args.prompt:
        raise ValueError("prompt is empty: give some text to continue")
    if not limits.MIN_NEW_TOKENS <= args.max_new_tokens <= limits.CLI_MAX_NEW_TOKENS:
        raise ValueError(
            f"--max-new-tokens must be from {limits.MIN_NEW_TOKENS} to {limits.CLI_MAX_NEW_TOKENS}, "
            f"not {args.max_new_tokens}"
        )
    # the same caps as the page's: the prompt in characters, then in the model's own tokens
    _check_text(args.prompt, "prompt")
    check_tokens(check_name(args.model), args.prompt, field="prompt")
    sampling = Sampling(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p, seed=args.seed)
    start = time.perf_counter()
    model = _load(args.model)
    load_s = time.perf_counter() - start
    from attnlab.models.chat import user_turn

    prompt = user_turn(args.prompt) if chat else args.prompt
    if args.json:
        return _generate_json(model, prompt, args.max_new_tokens, sampling, load_s)
    if not chat:
        sys.stdout.write(args.prompt)
    finish, said = None, ""
    for piece in model.generate(prompt, max_new_tokens=args.max_new_tokens, sampling=sampling):
        sys.stdout.write(piece.text)
        sys.stdout.flush()  # stream: each token shows as it comes
        finish, said = piece.finish, said + piece.text
    sys.stdout.write("\n")
    print(f"[{finish or 'length'}]", file=sys.stderr)
    if finish == "end_of_turn" and not chat and not said:
        print(NO_CHAT_HINT_CLI, file=sys.stderr)
    return 0


def _generate_json(model, prompt: str, max_new_tokens: int, sampling: Sampling, load_s: float) -> int:
    tokens, stopped = [], "length"
    start = time.perf_counter()
    first = None  # when the first new token came: the prompt's pass is done
    for piece in model.generate(prompt, max_new_tokens=max_new_tokens, sampling=sampling):
        if first is None:
            first = time.perf_counter()
        if piece.finish == "end_of_turn":
            stopped = "end_of_turn"
        else:
            tokens.append({"text": piece.text, "id": piece.id})
    end = time.perf_counter()
    first = end if first is None else first
    timings = {"load_s": load_s, "prefill_s": first - start, "decode_s": end - first}
    print(json.dumps({"tokens": tokens, "stopped": stopped, "timings": timings}))
    return 0
