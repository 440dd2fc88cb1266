"""The speculative-decoding lab's answer: the run's steps and times, the toy rule, every number, as data."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.live import Measured
from attnlab.lab.connections.models import called
from attnlab.lab.connections.speculate import words
from attnlab.lab.connections.speculate.toy import TOKENS, Rule, fraction_text
from attnlab.lab.connections.speculate.walk import Run, toy
from attnlab.lab.realmodel.tokens import short_label

RUN = "speculate"
CELL = 6  # characters of a token's label in a step's cell
TEXT_ROWS = 24  # steps up to which the cells carry their tokens' labels
SEP = " · "  # between tokens in a table's cell (a token's label may hold spaces: ␣ shows them)


def recorded(values: dict, measured: dict) -> tuple[Run | None, Measured | None]:
    """The run's numbers when they are in, and their run's state."""
    m = measured.get(RUN)
    if m is None or m.status != "done":
        return None, m
    return Run(m.data, values["tokens"], values["ngram"], values["draft"]), m


def _steps_picture(r: Run) -> dict:
    steps = r.verified
    width = 1 + max((len(s["proposed"]) for s in steps), default=0)
    values, texts, blocked = [], [], []
    for s in steps:
        v, t, b = [1.0], [short_label(r.label(s["first"]), CELL)], [False]
        for i in range(width - 1):
            if i >= len(s["proposed"]):
                v.append(0.0), t.append(""), b.append(True)
                continue
            v.append(0.5 if i < s["accepted"] else -0.5), b.append(False)  # accepted +, rejected −
            t.append(short_label(r.label(s["proposed"][i]), CELL))
        values.append(v), texts.append(t), blocked.append(b)
    return pic.heatmap(
        "steps",
        "Each forward pass: the target's token, then the drafts",
        "One row a pass after the prompt's. The first cell is the token the target had already chosen "
        "(dark); then the drafted tokens, light where the target accepted them and in the other colour "
        "where it rejected them (the first rejection ends the step). Empty: fewer drafts that pass.",
        [f"pass {i + 2}" for i in range(len(steps))],
        ["target", *(f"draft {i + 1}" for i in range(width - 1))],
        values,
        signed=True,
        blocked=blocked,
        texts=texts if len(steps) <= TEXT_ROWS else None,
    )


def _time_picture(r: Run) -> dict:
    top = max(r.seconds_plain, r.seconds_spec)
    n = max(len(r.plain["ids"]), len(r.spec["ids"]))
    return pic.lines(
        "time",
        "Tokens over time, in the same run",
        "Tokens made against seconds since the start, the prompt pass included: plain greedy decoding makes "
        "one a pass; speculative decoding makes several whenever drafts are accepted.",
        pic.axis("seconds", 0.0, top),
        pic.axis("tokens", 0, n),
        [
            {"name": "plain greedy", "cls": "other", "xs": r.plain["times"],
             "ys": list(range(1, len(r.plain["ids"]) + 1))},
            {"name": "speculative", "cls": "now", "xs": r.spec["times"],
             "ys": list(range(1, len(r.spec["ids"]) + 1))},
        ],  # fmt: skip
    )


def _toy_picture(t: Rule) -> dict:
    rows = [
        ("p", t.p),
        ("q", t.q),
        ("kept", t.kept),
        ("residual", tuple(max(0, a - b) for a, b in zip(t.p, t.q))),
        ("output", t.output),
    ]
    return pic.heatmap(
        "toy",
        "The sampling rule on four tokens, exactly",
        "Rows: the target's p, the draft's q, what accepted drafts keep (min(p, q)), what the residual adds "
        "after a rejection (max(0, p − q)), and their sum, the output: it is p, fraction for fraction.",
        [name for name, _ in rows],
        list(TOKENS),
        [[float(x) for x in xs] for _, xs in rows],
        texts=[[fraction_text(x) for x in xs] for _, xs in rows],
    )


def _run_tables(r: Run) -> list[dict]:
    steps = []
    for i, s in enumerate(r.steps):
        drafts = s["proposed"]
        steps.append([
            str(i + 1),
            r.label(s["first"]),
            SEP.join(r.label(x) for x in drafts) or "—",
            str(s["accepted"]),
            str(len(drafts) - s["accepted"]),
            SEP.join(r.label(x) for x in s["argmax"]) or "—",
            fmt.rounded(s["seconds"], 4) if s["passes"] else "no pass",
        ])  # fmt: skip
    tokens = []
    for i in range(max(len(r.plain["ids"]), len(r.spec["ids"]))):
        a = r.plain["ids"][i] if i < len(r.plain["ids"]) else None
        b = r.spec["ids"][i] if i < len(r.spec["ids"]) else None
        tokens.append([
            str(i + 1),
            r.label(a) if a is not None else "—",
            str(a) if a is not None else "—",
            str(b) if b is not None else "—",
            fmt.rounded(r.plain["times"][i], 4) if a is not None else "—",
            fmt.rounded(r.spec["times"][i], 4) if b is not None else "—",
        ])  # fmt: skip
    return [
        {
            "title": "Speculative decoding, step by step",
            "columns": ["step", "target's token", "drafted", "accepted", "rejected",
                        "target's argmax at each row", "seconds"],  # fmt: skip
            "rows": steps,
        },
        {
            "title": "Tokens and their times (seconds from the start)",
            "columns": ["#", "token", "plain id", "speculative id", "plain at", "speculative at"],
            "rows": tokens,
        },
    ]


def _toy_table(t: Rule) -> dict:
    rows = []
    for i, c in enumerate(TOKENS):
        a = t.accept[i]
        r = t.residual[i] if t.residual is not None else None
        rows.append([
            c,
            fraction_text(t.p[i]),
            fraction_text(t.q[i]),
            fraction_text(a) if a is not None else "never proposed",
            fraction_text(t.kept[i]),
            fraction_text(r) if r is not None else "—",
            fraction_text(t.output[i]),
            fmt.precise(t.output_float[i]),
            "yes" if t.output[i] == t.p[i] else "no",
        ])  # fmt: skip
    return {
        "title": f"The rule on the toy vocabulary (β = {fraction_text(t.beta)}: a draft's chance to be kept)",
        "columns": ["token", "p", "q", "accept: min(1, p/q)", "kept: min(p, q)", "residual r", "output",
                    "output in float64", "output = p"],  # fmt: skip
        "rows": rows,
    }


def toy_data(t: Rule) -> dict:
    return {
        "p": [fraction_text(x) for x in t.p],
        "q": [fraction_text(x) for x in t.q],
        "accept": [None if a is None else fraction_text(a) for a in t.accept],
        "kept": [fraction_text(x) for x in t.kept],
        "beta": fraction_text(t.beta),
        "residual": None if t.residual is None else [fraction_text(x) for x in t.residual],
        "output": [fraction_text(x) for x in t.output],
        "output_float": list(t.output_float),
        "exact": t.exact,
    }


def run_data(r: Run | None) -> dict | None:
    if r is None:
        return None
    return {
        "prompt_ids": r.prompt,
        "plain_ids": r.plain["ids"],
        "speculative_ids": r.spec["ids"],
        "identical": r.identical,
        "steps": [{k: s[k] for k in ("first", "proposed", "argmax", "accepted", "passes", "seconds")}
                  for s in r.steps],  # fmt: skip
        "proposed": r.proposed,
        "accepted": r.accepted,
        "passes": {"plain": r.passes_plain, "speculative": r.passes_spec},
        "seconds": {"plain": r.seconds_plain, "speculative": r.seconds_spec},
        "times": {"plain": r.plain["times"], "speculative": r.spec["times"]},
        "speedup": r.speedup,
        "replay_matches": r.replay_matches,
    }


def answer(values: dict, measured: dict) -> dict:
    r, m = recorded(values, measured)
    t = toy(values)
    pictures = [_steps_picture(r), _time_picture(r)] if r is not None else []
    numbers = _run_tables(r) if r is not None else []
    return {
        "pictures": [*pictures, _toy_picture(t)],
        "words": words.sentences(r, m, t, called(values["model"])),
        "numbers": [*numbers, _toy_table(t)],
        "data": {"run": run_data(r), "toy": toy_data(t)},
    }
