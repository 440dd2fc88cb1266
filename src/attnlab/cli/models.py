"""The ``attnlab heads``, ``attnlab generate`` and ``attnlab logits`` commands.

``heads`` prints one head's attention as a table of shares (rows = query
tokens, columns = key tokens), or every head of a layer with what each one
does; ``--json`` prints the full-precision numbers instead. ``generate``
streams a decoder's continuation of the text as it is, token by token
(``--chat``: as the user's turn in the chat template, like the page's "Answer
as the assistant" choice). ``logits`` prints the next-token distribution at a position, with
temperature, top-k and top-p applied as the page's view applies them. The
models and their defaults come from :mod:`attnlab.models.registry`; every line
printed is the lab's (:mod:`attnlab.lab.realmodel.command`, tokens shown with
␣, ⏎, ⇥ as on the page).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from attnlab.cli.modelargs import add_weights, open_model
from attnlab.engine.errors import FieldError
from attnlab.lab import limits
from attnlab.lab.realmodel import command as words
from attnlab.lab.realmodel import problems
from attnlab.lab.realmodel.nexttoken import MAX_TOKENS_SHOWN, next_token
from attnlab.lab.realmodel.status import NO_CHAT_HINT_CLI
from attnlab.lab.realmodel.tokens import row_label
from attnlab.models import registry
from attnlab.models.jobs.texts import check_text, check_tokens
from attnlab.models.registry import check_name
from attnlab.models.sampling import Sampling

MAX_TEXT_CHARS = 2000  # the command's cap; the lab's own cap is lower


def help_for(command: str) -> dict[str, str]:
    """The lab's help for each of ``command``'s arguments."""
    most = {"most_new_tokens": limits.CLI_MAX_NEW_TOKENS, "most_shown": MAX_TOKENS_SHOWN}
    # the shipped models by name (found ones are many: `attnlab models` lists them; no disk search here)
    shipped = registry.shipped()
    decoders = tuple(n for n in shipped if registry.spec(n).generates)
    return words.help_texts(models=shipped, decoders=decoders, **most)[command]


def add_heads_arguments(p: argparse.ArgumentParser) -> None:
    said = help_for("heads")
    p.add_argument("text", help=said["text"])
    p.add_argument("--model", default=registry.shipped()[0], help=said["--model"])
    add_weights(p)
    p.add_argument("--layer", type=int, default=0, help=said["--layer"])
    p.add_argument("--head", type=int, help=said["--head"])
    p.add_argument("--json", action="store_true", help=said["--json"])
    p.add_argument("--details", action="store_true", help=said["--details"])


def add_generate_arguments(p: argparse.ArgumentParser) -> None:
    said = help_for("generate")
    p.add_argument("prompt", help=said["prompt"])
    p.add_argument("--model", default=_first_decoder(), help=said["--model"])
    add_weights(p)
    p.add_argument("--max-new-tokens", type=int, default=64, help=said["--max-new-tokens"])
    p.add_argument("--chat", action=argparse.BooleanOptionalAction, default=False, help=said["--chat"])
    p.add_argument("--temperature", type=float, default=0.0, help=said["--temperature"])
    p.add_argument("--top-k", type=int, default=None, help=said["--top-k"])
    p.add_argument("--top-p", type=float, default=1.0, help=said["--top-p"])
    p.add_argument("--seed", type=int, default=None, help=said["--seed"])
    p.add_argument("--json", action="store_true", help=said["--json"])


def _first_decoder() -> str:
    return next(n for n in registry.shipped() if registry.spec(n).generates)


def _decoder(name: str):
    spec = registry.spec(name)
    if not spec.generates:
        raise ValueError(words.encoder(name, registry.decoders()))
    return spec


def add_logits_arguments(p: argparse.ArgumentParser) -> None:
    said = help_for("logits")
    p.add_argument("text", help=said["text"])
    p.add_argument("--model", default=_first_decoder(), help=said["--model"])
    add_weights(p)
    p.add_argument("--top", type=int, default=10, help=said["--top"])
    p.add_argument("--position", type=int, default=None, help=said["--position"])
    p.add_argument("--temperature", type=float, default=1.0, help=said["--temperature"])
    p.add_argument("--top-k", type=int, default=None, help=said["--top-k"])
    p.add_argument("--top-p", type=float, default=1.0, help=said["--top-p"])
    p.add_argument("--json", action="store_true", help=said["--json"])


def run_logits(args: argparse.Namespace) -> int:
    _check_text(args.text, "text")
    _decoder(check_name(args.model))
    if not 1 <= args.top <= MAX_TOKENS_SHOWN:
        raise ValueError(words.top_out_of_range(args.top, MAX_TOKENS_SHOWN))
    sampling = Sampling(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p)
    model = _load(args)
    ids = model.encode(args.text)
    position = len(ids) - 1 if args.position is None else args.position
    if not 0 <= position < len(ids):
        raise ValueError(words.no_position(position, len(ids)))
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
    said = view["words"]
    print(said["context"]["text"])
    print(_grid([words.LOGITS_HEADER, *(words.logits_row(e) for e in view["entries"])]))
    print()
    for removed in view["removed"]:
        print(removed["words"]["text"])
    print(said["kept"]["text"])
    print(said["actual"]["text"])
    return 0


def _load(args: argparse.Namespace):
    return open_model(args.model, args.weights)


def _check_text(text: str, field: str) -> None:
    check_text(text, field=field, max_chars=MAX_TEXT_CHARS)  # the one text check every surface makes


def run_heads(args: argparse.Namespace) -> int:
    _check_text(args.text, "text")
    check_name(args.model)
    model = _load(args)
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
    title, n = registry.spec(args.model).title, len(trace.tokens)
    print(words.heads_heading(title=title, n_tokens=n, layer=args.layer, n_layer=trace.n_layer))
    if args.head is None:
        rows, note = words.layer_rows(trace, args.layer)
        print(_grid(rows) + "\n\n" + note)
    else:
        heading, rows = words.head_rows(trace, args.layer, args.head)
        print(heading + "\n\n" + _grid(rows))
    return 0


def _grid(rows: list[list[str]]) -> str:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join("  ".join(cell.rjust(w) for cell, w in zip(r, widths)).rstrip() for r in rows)


def run_generate(args: argparse.Namespace) -> int:
    _decoder(check_name(args.model))
    chat = bool(args.chat)
    if not args.prompt:
        raise FieldError(("prompt",), problems.empty_prompt())
    if not limits.MIN_NEW_TOKENS <= args.max_new_tokens <= limits.CLI_MAX_NEW_TOKENS:
        low, high = limits.MIN_NEW_TOKENS, limits.CLI_MAX_NEW_TOKENS
        raise ValueError(words.new_tokens_out_of_range(args.max_new_tokens, low, high))
    # the same caps as the page's: the prompt in characters, then in the model's own tokens
    _check_text(args.prompt, "prompt")
    check_tokens(check_name(args.model), args.prompt, field="prompt")
    sampling = Sampling(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p, seed=args.seed)
    start = time.perf_counter()
    model = _load(args)
    load_s = time.perf_counter() - start
    if chat and not registry.spec(args.model).chat:  # no chat template: no chat choice, said in one line
        raise ValueError(f"--chat {problems.no_chat_template(registry.title(args.model))}")
    # the model's own chat template
    prompt = model.chat_prompt([{"role": "user", "content": args.prompt}]) if chat else args.prompt
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
    print(words.finished(finish), file=sys.stderr)
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
