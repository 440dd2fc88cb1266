"""The serving lab's answer: the two ways' timelines, throughput and waits, every number, as data."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.live import Measured
from attnlab.lab.connections.models import called
from attnlab.lab.connections.serving import words
from attnlab.lab.connections.serving.walk import LETTERS, WAYS, Serve
from attnlab.lab.realmodel.tokens import short_label

RUN = "serving"
TEXT_STEPS = 40  # steps up to which a timeline's cells carry their letters
NAMES = {"one": "one at a time", "batched": "continuous batching"}


def recorded(values: dict, measured: dict) -> tuple[Serve | None, Measured | None]:
    """The run's numbers when they are in, and their run's state."""
    m = measured.get(RUN)
    if m is None or m.status != "done":
        return None, m
    return Serve(m.data, values["batch"], values["tokens"]), m


def _steps_picture(s: Serve, name: str) -> dict:
    steps = s.way(name)["steps"]
    n = s.requests
    fill = [[0.0] * len(steps) for _ in range(n)]
    texts = [[""] * len(steps) for _ in range(n)]
    for j, step in enumerate(steps):
        for r in step["requests"]:
            fill[r][j] = 1.0 if step["kind"] == "prefill" else 0.5
            texts[r][j] = "P" if step["kind"] == "prefill" else LETTERS[r]
    return pic.heatmap(
        f"steps-{name}",
        f"Steps, {NAMES[name]}",
        f"One column a forward pass, in order; one row a request ({LETTERS[0]} to {LETTERS[n - 1]}), filled "
        f"where the pass worked on it: dark (P) for its prompt pass, light for a decoding step. "
        f"{len(steps)} passes.",
        [LETTERS[r] for r in range(n)],
        [str(j + 1) for j in range(len(steps))],
        fill,
        texts=texts if len(steps) <= TEXT_STEPS else None,
    )


def _timeline(s: Serve, name: str, top: float) -> dict:
    """A request's time in the system, as bands on one time scale for both ways: waiting for its first
    token (light), then making its tokens (dark)."""
    w = s.way(name)
    return {
        "kind": "bands",
        "id": f"timeline-{name}",
        "title": f"Timeline, {NAMES[name]}",
        "caption": f"Requests {LETTERS[0]} (top) to {LETTERS[s.requests - 1]}, all arriving at 0; light: "
        f"waiting for the first token, dark: from the first token to the last. The scale is "
        f"{fmt.rounded(top, 2)} s for both ways.",
        "rows": s.requests,
        "seen": [[f / top, d / top] for f, d in zip(w["first_s"], w["done_s"])],
        "reference": [[0.0, d / top] for d in w["done_s"]],
        "row": None,
        "rows_label": "requests",
        "cols_label": "seconds",
    }


def _bars(s: Serve) -> list[dict]:
    rate = pic.bars(
        "throughput",
        "Tokens a second",
        "Every request's tokens over the whole run's time, prompt passes included, measured in the same run.",
        [
            {"label": NAMES[w], "value": s.throughput(w), "text": f"{fmt.rounded(s.throughput(w), 1)} /s",
             "cls": "other" if w == "one" else "now"}
            for w in WAYS
        ],  # fmt: skip
    )
    ttft = pic.bars(
        "first-token",
        "Time to first token",
        "Seconds from the arrival (0) to each request's first token.",
        [
            {"label": f"{LETTERS[r]}: {NAMES[w]}", "value": s.first(w)[r],
             "text": f"{fmt.rounded(s.first(w)[r], 3)} s", "cls": "other" if w == "one" else "now"}
            for r in range(s.requests)
            for w in WAYS
        ],  # fmt: skip
    )
    return [rate, ttft]


def _tables(s: Serve) -> list[dict]:
    requests = []
    for r in range(s.requests):
        requests.append([
            LETTERS[r],
            str(len(s.data["prompt_ids"][r])),
            str(len(s.way("one")["tokens"][r])),
            "yes" if s.same[r] else "no",
            fmt.rounded(s.first("one")[r], 4),
            fmt.rounded(s.first("batched")[r], 4),
            fmt.rounded(s.way("one")["done_s"][r], 4),
            fmt.rounded(s.way("batched")["done_s"][r], 4),
        ])  # fmt: skip
    tables = [
        {
            "title": "Requests (seconds from the arrival)",
            "columns": ["request", "prompt tokens", "new tokens", "same tokens",
                        "first token, one at a time", "first token, batched",
                        "last token, one at a time", "last token, batched"],  # fmt: skip
            "rows": requests,
        },
        {
            "title": "Each request's tokens",
            "columns": ["request", "tokens"],
            "rows": [[LETTERS[r], " · ".join(short_label(s.label(t)) for t in ts)]
                     for r, ts in enumerate(s.way("batched")["tokens"])],  # fmt: skip
        },
    ]
    for name in WAYS:
        tables.append({
            "title": f"Forward passes, {NAMES[name]}",
            "columns": ["pass", "kind", "requests", "start", "end", "seconds"],
            "rows": [
                [str(j + 1), step["kind"], " ".join(LETTERS[r] for r in step["requests"]),
                 fmt.rounded(step["start"], 4), fmt.rounded(step["end"], 4),
                 fmt.rounded(step["end"] - step["start"], 4)]
                for j, step in enumerate(s.way(name)["steps"])
            ],
        })  # fmt: skip
    return tables


def run_data(s: Serve | None) -> dict | None:
    if s is None:
        return None
    return {
        "prompt_ids": s.data["prompt_ids"],
        "tokens": {w: s.way(w)["tokens"] for w in WAYS},
        "same": s.same,
        "first_s": {w: s.first(w) for w in WAYS},
        "done_s": {w: s.way(w)["done_s"] for w in WAYS},
        "seconds": {w: s.seconds(w) for w in WAYS},
        "throughput": {w: s.throughput(w) for w in WAYS},
        "ratio": s.ratio,
        "steps": {w: [[st["kind"], st["requests"]] for st in s.way(w)["steps"]] for w in WAYS},
        "step_seconds": {w: [st["end"] - st["start"] for st in s.way(w)["steps"]] for w in WAYS},
    }


def answer(values: dict, measured: dict) -> dict:
    s, m = recorded(values, measured)
    if s is None:
        return {"pictures": [], "words": words.sentences(None, m, called(values["model"])), "numbers": [],
                "data": {"run": None}}  # fmt: skip
    top = max(s.seconds(w) for w in WAYS)
    pictures = [_timeline(s, "one", top), _timeline(s, "batched", top), _steps_picture(s, "one"),
                _steps_picture(s, "batched"), *_bars(s)]  # fmt: skip
    said = words.sentences(s, m)
    return {"pictures": pictures, "words": said, "numbers": _tables(s), "data": {"run": run_data(s)}}
