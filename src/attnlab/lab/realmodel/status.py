"""The words of a model job's status line and of a generation: place in line, stage, why it stopped.

Plain values in (a job's status, its place, its counts), strings out: the
routes and the CLI pass what the job knows; nothing here reads a job.
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.tokens import token_labels
from attnlab.lab.said import said

CONTINUE = "Continue the text"
CHAT = "Answer as the assistant (chat template)"
NO_CHAT_HINT = (
    "The model ended its turn at once because it is an instruct model, tuned to answer a user's turn: "
    f"choose “{CHAT}” to ask it a question."
)
NO_CHAT_HINT_CLI = (
    "The model ended its turn at once because it is an instruct model, tuned to answer a user's turn: "
    "add --chat to ask it a question."
)


PATHS = {
    "q4_1": "computed on the file's Q4_1 blocks (compiled kernels)",
    "stored": "computed on the file's own numbers (compiled kernels)",
    "float32": "computed on float32 weights",
    "float64": "computed on float64 weights",
}


def model_kind(*, architecture: str, n_head: int, n_kv_head: int) -> str:
    """What kind of model it is: "encoder (bidirectional)", "decoder (causal, GQA)" (MQA: one KV head)."""
    if architecture == "encoder":
        return "encoder (bidirectional)"
    if n_kv_head == 1 and n_head > 1:
        return "decoder (causal, MQA)"
    return "decoder (causal, GQA)" if n_kv_head < n_head else "decoder (causal)"


def model_note(*, architecture: str, n_layer: int, n_head: int, n_kv_head: int, path: str | None,
               context: int | None = None, cap: int | None = None) -> str:  # fmt: skip
    """A model's kind and shapes, the tokens it reads (its ``context``; the view takes ``cap``) and, once
    its worker has loaded it, what its products run on."""
    kind = model_kind(architecture=architecture, n_head=n_head, n_kv_head=n_kv_head)
    gqa = f", {n_kv_head} KV heads (grouped-query attention)" if 1 < n_kv_head < n_head else ""
    gqa = ", 1 KV head (multi-query attention)" if n_kv_head == 1 < n_head else gqa
    reads = ""
    if context is not None and cap is not None:
        reads = f" It reads up to {fmt.plural(context, 'token')}; this view takes {fmt.plural(cap, 'token')}."
    runs = f" Weights {PATHS.get(path, path)}." if path else ""
    return f"{kind}: {n_layer} layers × {n_head} heads{gqa}.{reads}{runs}"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def place_words(place: int | None) -> str:
    """Where a waiting job stands: "at the model now" (0), "2nd in line"; "" when it is not waiting."""
    if place is None:
        return ""
    return "at the model now" if place == 0 else f"{ordinal(place)} in line"


def stage_display(*, status: str, title: str, place: int | None, layers_done: int, n_layer: int,
                  message: str) -> str:  # fmt: skip
    """A trace job's status line, counted so it never passes the last layer."""
    where = place_words(place)
    if status == "queued":
        return f"Waiting: {where}" if where else "Waiting"
    if status == "loading":
        return f"Loading {title} (once per server)…"
    if status == "running":
        if not n_layer:
            return "Starting"
        return f"Running layer {min(layers_done + 1, n_layer)} of {n_layer}"
    if status == "done":
        return f"Done: {fmt.plural(n_layer, 'layer')}"
    return message


def trace_status(*, status: str, title: str, place: int | None, progress: float, layers_done: int,
                 n_layer: int, message: str, n_tokens: int | None) -> dict:  # fmt: skip
    """Every string a trace job's answer shows: place, progress, stage and, once done, the done line."""
    out = {
        "place_display": place_words(place),
        "progress_display": fmt.percent(progress),
        "stage_display": stage_display(
            status=status, title=title, place=place, layers_done=layers_done, n_layer=n_layer, message=message
        ),
        "done": None,
    }
    if status == "done" and n_tokens is not None:
        out["done"] = said(
            f"Done: {fmt.plural(n_tokens, 'token')} through {fmt.plural(n_layer, 'layer')}.", tokens=n_tokens,
            layers=n_layer,
        )
    return out


def generation_status(*, status: str, title: str, place: int | None, tokens: int, max_new_tokens: int,
                      finish: str | None, chat: bool, said_text: str, message: str) -> dict:  # fmt: skip
    """A generation's status line (one sentence) and, when a raw prompt ended at once, the hint."""
    where = place_words(place)
    hint = NO_CHAT_HINT if status == "done" and finish == "end_of_turn" and not chat and not said_text else ""
    if status == "running":
        line = said(f"Writing token {tokens + 1} of at most {max_new_tokens}…", tokens=tokens,
                    max_new_tokens=max_new_tokens)  # fmt: skip
    elif status == "queued" and place:
        line = said(f"You are {where}: {title} works on one request at a time…", place=place)
    elif status == "queued":
        line = said(f"Starting {title}…", place=place)
    elif status == "loading":
        line = said(f"Loading {title} (once per server)…", loading=True)
    elif status == "done" and finish == "end_of_turn":
        line = said(f"Stopped at the end of its turn after {fmt.plural(tokens, 'token')}.", finish=finish,
                    tokens=tokens)  # fmt: skip
    elif status == "done":
        line = said(f"Stopped after {fmt.plural(tokens, 'token')} (the limit).", finish="length",
                    tokens=tokens)  # fmt: skip
    else:
        line = said(message, status=status)
    return {"place_display": where, "status_line": line, "hint": hint,
            "mode": CHAT if chat else CONTINUE}  # fmt: skip


def count_words(*, count: int, cap: int, title: str) -> dict:
    """The token count under the text box, one sentence with its claims."""
    if count <= cap:
        return said(f"{count} of {cap} tokens", count=count, cap=cap, fits=True)
    return said(
        f"{count} tokens, and {title} takes at most {cap} here: shorten it by {count - cap}.",
        count=count,
        cap=cap,
        fits=False,
    )


def token_count(*, model: str, tokens: list[str], cap: int, title: str) -> dict:
    """The count's answer (``TokensOut``): the tokens, each shown visibly, and the sentence under the box."""
    words = count_words(count=len(tokens), cap=cap, title=title)
    return {
        "model": model,
        "count": len(tokens),
        "cap": cap,
        "fits": words["claims"]["fits"],
        "tokens": tokens,
        "shown": token_labels(tokens),
        "message": words["text"],
    }
