"""The circuits lab's answer: the census map, the induction head's pattern with and without its feeder,
the drops, every number, as data."""

from __future__ import annotations

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.circuits import words
from attnlab.lab.connections.circuits.copying import Copying
from attnlab.lab.connections.live import Measured, status_words
from attnlab.lab.heads import head_name
from attnlab.lab.realmodel.census import NAMES, SCORES
from attnlab.lab.realmodel.probe import repeated_run
from attnlab.lab.realmodel.tokens import short_label, token_label

RUN = "copying"
MODEL = "smollm2"
DOING = "SmolLM2 scores every head on the probe and switches the previous-token heads off"
CELL = 6  # characters of a token's label on the pattern's axes


def probe(values: dict) -> dict:
    """The probe for these values (``lab.realmodel.probe.repeated_run``)."""
    return repeated_run(values["seed"], n_words=values["words"], repeats=values["repeats"])


def recorded(values: dict, measured: dict) -> tuple[Copying | None, Measured | None]:
    """SmolLM2's recorded run when it is in, and the run's state."""
    m = measured.get(RUN)
    if m is None or m.status != "done":
        return None, m
    return Copying(m.data), m


def shown(name: str, x: float) -> str:
    return fmt.rounded(x, 3) if name == "breadth" else words.pct(x)


def _map(c: Copying, name: str) -> dict:
    s = c.scores(name)
    n_layer, n_head = s.shape
    marks = [pic.mark("box", c.head[1], rows=(c.head[0], c.head[0] + 1))]
    marks += [pic.mark("box", h, rows=(layer, layer + 1)) for layer, h in c.tested]
    tested = words.listed([head_name(*h) for h in c.tested]) if c.tested else "none"
    return pic.heatmap(
        "map",
        f"Every head's {NAMES[name]} score on the probe",
        f"Rows are layers 0 to {n_layer - 1}, columns heads 0 to {n_head - 1}; darker is a higher "
        f"{NAMES[name]} score. Outlined: the induction head {head_name(*c.head)} and the "
        f"previous-token heads tested ({tested}).",
        [f"L{i}" for i in range(n_layer)],
        [f"H{j}" for j in range(n_head)],
        s.tolist(),
        marks=marks,
    )


def _bars(c: Copying) -> dict:
    items = [{"label": f"{head_name(*c.head)} as it is", "value": c.clean, "text": words.pct(c.clean),
              "cls": "full"}]  # fmt: skip
    for i, h in enumerate(c.tested):
        marked = i == c.feeder
        items.append({"label": f"without {head_name(*h)}: keys", "value": c.keys[i],
                      "text": words.pct(c.keys[i]), "cls": "now", "marked": marked})  # fmt: skip
        items.append({"label": f"without {head_name(*h)}: all", "value": c.every[i],
                      "text": words.pct(c.every[i]), "cls": "other"})  # fmt: skip
    return pic.bars(
        "drops",
        f"{head_name(*c.head)}'s induction score, each tested head switched off",
        "The induction score as it is, then for each tested head switched off: with only the keys "
        "recomputed (keys), and with the queries recomputed too (all). Outlined: the largest drop "
        "through the keys.",
        items,
        top=1.0,
    )


def _pattern(c: Copying, which: str) -> dict:
    labels = [short_label(token_label(t)["label"], CELL) for t in c.tokens]
    n = len(labels)
    blocked = (~np.tri(n, dtype=bool)).tolist()
    if which == "clean":
        w = c.pattern("clean")
        return pic.heatmap(
            "pattern",
            f"{head_name(*c.head)}'s attention on the probe",
            "Row = query token, column = key token; darker is more of the row's attention. From the "
            "second copy on, an induction head's ink sits one column right of the diagonal of the "
            "earlier copy: on the token after the earlier occurrence.",
            labels, labels, w.tolist(), blocked=blocked,
        )  # fmt: skip
    i = c.feeder
    w = c.pattern("keys", i)
    return pic.heatmap(
        "pattern-off",
        f"The same head, keys without {head_name(*c.tested[i])}",
        f"Its clean queries against the keys of the run with {head_name(*c.tested[i])} switched off: "
        "where the keys no longer say which token came before, the copying stripe fades.",
        labels, labels, w.tolist(), blocked=blocked,
    )  # fmt: skip


def _numbers(c: Copying, name: str) -> list[dict]:
    composition = {
        "title": f"{head_name(*c.head)}'s induction score with each previous-token head switched off",
        "columns": ["head off", "previous-token score", "induction as it is", "keys without it",
                    "queries and keys without it", "drop through the keys (points)"],
        "rows": [[head_name(*h), words.pct(c.previous(h)), words.pct(c.clean), words.pct(k),
                  words.pct(a), words.drop_points(c.clean, k)]
                 for h, k, a in zip(c.tested, c.keys, c.every)],
    }  # fmt: skip
    s = c.scores(name)
    grid = {
        "title": f"Every head's {NAMES[name]} score on the probe",
        "columns": ["layer", *(f"H{j}" for j in range(s.shape[1]))],
        "rows": [[f"L{i}", *(shown(name, x) for x in row)] for i, row in enumerate(s)],
    }
    tokens = {
        "title": "The probe's tokens",
        "columns": ["position", "token", "id"],
        "rows": [[str(i), token_label(t)["label"], str(x)] for i, (t, x) in enumerate(zip(c.tokens, c.ids))],
    }
    return [composition, grid, tokens]


def data(values: dict, c: Copying | None) -> dict:
    out = {"probe": probe(values)["text"]}
    if c is None:
        return out
    feeder = None if c.feeder is None else list(c.tested[c.feeder])
    return out | {
        "ids": c.ids,
        "induction_head": list(c.head),
        "tested": [list(h) for h in c.tested],
        "previous": [c.previous(h) for h in c.tested],
        "clean": c.clean,
        "keys": c.keys,
        "all": c.every,
        "drops": c.drops,
        "feeder": feeder,
        "map": values["map"],
        "scores": c.scores(values["map"]).tolist(),
    }


def answer(values: dict, measured: dict) -> dict:
    c, m = recorded(values, measured)
    note = probe(values)["note"]
    if c is None:
        run = {"title": "The probe", "columns": ["text"], "rows": [[probe(values)["text"]]]}
        return {"pictures": [], "words": [note, status_words(m, DOING)], "numbers": [run],
                "data": data(values, None)}  # fmt: skip
    pictures = [_map(c, values["map"])]
    if c.tested:
        pictures += [_bars(c), _pattern(c, "clean"), _pattern(c, "off")]
    else:
        pictures.append(_pattern(c, "clean"))
    return {"pictures": pictures, "words": [note, *words.sentences(c)], "numbers": _numbers(c, values["map"]),
            "data": data(values, c)}  # fmt: skip


SCORE_OPTIONS = tuple((name, NAMES[name]) for name in SCORES)
