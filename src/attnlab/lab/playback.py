"""The guided playback "Watch Match → Share → Mix" as data plus engine frames.

The script (duration, keyframes of q, captions with their time ranges) lives
in ``lab/data/playback.json``. This module samples it at ``fps`` frames per
second: q is interpolated linearly between keyframes (pure timing, no
attention maths), and every frame's scores, shares and output come from
:func:`attnlab.engine.trace_query` on the starting A/B/C example, its
projections, arrows and pie from :mod:`attnlab.lab.geometry` (the explorer's).
Caption placeholders such as ``{share:B}`` are filled from the frame at the
caption's ``anchor`` time, so the words and the pictures agree.

The playback always uses the starting example: it neither reads nor changes
the learner's experiment.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.geometry import KEY_MIN_HALF, VALUE_MIN_HALF, geometry, plane_view
from attnlab.lab.sequence import STARTING

_PLACEHOLDER = re.compile(r"\{(q|output|score:\w+|share:\w+)\}")


@cache
def _script() -> dict:
    text = resources.files("attnlab.lab").joinpath("data/playback.json").read_text("utf-8")
    return json.loads(text)


def query_at(t: float) -> tuple[float, float]:
    """Return the script's q at time ``t`` seconds (linear between keyframes, held at the ends)."""
    keys = _script()["keyframes"]
    if t <= keys[0]["t"]:
        return tuple(float(x) for x in keys[0]["q"])
    for a, b in zip(keys, keys[1:]):
        if a["t"] <= t <= b["t"]:
            span = b["t"] - a["t"]
            f = 0.0 if span == 0 else (t - a["t"]) / span
            return tuple(float(x + (y - x) * f) for x, y in zip(a["q"], b["q"]))
    return tuple(float(x) for x in keys[-1]["q"])


def frame(t: float) -> dict:
    """Return the engine's numbers for the playback at ``t`` seconds.

    The frame carries what the explorer's drawings read (``trace``,
    ``geometry``, ``display``) less what never changes during the playback
    (keys, values, labels, the hull), which :func:`playback` sends once.
    """
    trace = trace_query(query_at(t), STARTING.keys, STARTING.values, labels=STARTING.labels)
    g = geometry(trace)
    return {
        "t": round(t, 6),
        "trace": {
            "q": list(trace.q),
            "scores": list(trace.scores),
            "weights": list(trace.weights),
            "output": list(trace.output),
        },
        "geometry": {"projections": g["projections"], "arrows": g["arrows"], "pie": g["pie"]},
        "display": {
            "q": fmt.vector(trace.q),
            "output": fmt.vector(trace.output),
            "sources": [
                {"index": i, "label": label, "percent": fmt.percent(w)}
                for i, (label, w) in enumerate(zip(trace.labels, trace.weights))
            ],
        },
    }


def _fill(text: str, f: dict) -> str:
    labels = list(STARTING.labels)

    def sub(match: re.Match) -> str:
        name = match.group(1)
        t = f["trace"]
        if name == "q":
            return fmt.vector(t["q"])
        if name == "output":
            return fmt.vector(t["output"])
        kind, label = name.split(":")
        i = labels.index(label)
        return fmt.rounded(t["scores"][i]) if kind == "score" else fmt.percent(t["weights"][i])

    return _PLACEHOLDER.sub(sub, text)


def playback() -> dict:
    """Return the whole playback: title, description, frames and filled captions.

    Frame ``i`` is at ``i / fps`` seconds; there are ``duration * fps + 1`` frames.
    Each caption names the frame it was filled from (``anchor_frame``), which a
    reduced-motion view shows as a still step.
    """
    s = _script()
    fps = int(s["fps"])
    n = round(s["duration"] * fps) + 1
    frames = [frame(i / fps) for i in range(n)]
    captions = []
    for number, c in enumerate(s["captions"], start=1):
        anchor = round(c["anchor"] * fps)
        captions.append(
            {
                "number": number,
                "start": c["start"],
                "end": c["end"],
                "phase": c["phase"],
                "anchor_frame": anchor,
                "text": _fill(c["text"], frames[anchor]),
            }
        )
    # One window per plane for the whole playback, so the planes hold still.
    first = trace_query(STARTING.queries[0], STARTING.keys, STARTING.values)
    key_view = plane_view(
        [*STARTING.keys, *(f["trace"]["q"] for f in frames)], min_half=KEY_MIN_HALF, centered=True
    )
    value_points = [*STARTING.values]
    for f in frames:
        value_points += [a["end"] for a in f["geometry"]["arrows"]]
    return {
        "title": s["title"],
        "description": s["description"],
        "duration": s["duration"],
        "fps": fps,
        "labels": list(STARTING.labels),
        "keys": [list(k) for k in STARTING.keys],
        "values": [list(v) for v in STARTING.values],
        "allowed": [True] * len(STARTING.keys),
        "hull": geometry(first)["hull"],
        "key_view": key_view,
        "value_view": plane_view(value_points, min_half=VALUE_MIN_HALF),
        "frames": frames,
        "captions": captions,
    }
