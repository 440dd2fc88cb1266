"""The guided playback "Watch Match → Share → Mix" as data plus engine frames.

The script (duration, keyframes of q, captions with their time ranges) lives
in ``lab/data/playback.json``. This module samples it at ``fps`` frames per
second: q is interpolated linearly between keyframes (pure timing, no
attention maths), and every frame's scores, shares and output come from
:func:`attnlab.engine.trace_query` on the starting A/B/C example, its
projections, arrows and pie from :mod:`attnlab.lab.explorer.geometry` (the explorer's).

q moves in every caption's time range, so every step animates the pictures:
q travels, the pie re-splits and the arrows re-add as it goes.

Caption and picture come from the same frame: each frame carries its
caption's text with the placeholders (``{q}``, ``{output}``, ``{score:B}``,
``{share:B}``) filled from that frame's own display strings, the very strings
the pictures label themselves with. A caption's words are therefore written
to hold for every frame of its range ("at q = {q} B takes {share:B}"). The
reduced-motion view shows each caption as a still step: its ``anchor_frame``.

The playback always uses the starting example: it neither reads nor changes
the learner's experiment.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources

from attnlab.engine.single import QueryTrace, trace_query
from attnlab.lab.explorer.display import display_strings
from attnlab.lab.explorer.geometry import KEY_MIN_HALF, VALUE_MIN_HALF, geometry, plane_view
from attnlab.lab.explorer.sequence import STARTING

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


def caption_index(t: float) -> int:
    """Return the index of the caption shown at ``t`` (``start <= t < end``; the last holds its end)."""
    caps = _script()["captions"]
    for i, c in enumerate(caps):
        if c["start"] <= t < c["end"]:
            return i
    return len(caps) - 1


def fill(text: str, display: dict) -> str:
    """Fill a caption's placeholders from one frame's display strings (the pictures' labels)."""
    index = {s["label"]: s for s in display["sources"]}

    def sub(match: re.Match) -> str:
        name = match.group(1)
        if name in ("q", "output"):
            return display[name]
        kind, label = name.split(":")
        return index[label]["score" if kind == "score" else "percent"]

    return _PLACEHOLDER.sub(sub, text)


def _trace(t: float) -> QueryTrace:
    return trace_query(query_at(t), STARTING.keys, STARTING.values, labels=STARTING.labels)


def frame(t: float, caption: int | None = None) -> dict:
    """Return the playback at ``t`` seconds: the engine's numbers, the pictures and the words.

    The frame carries what the explorer's drawings read (``trace``,
    ``geometry``, ``display``) less what never changes during the playback
    (keys, values, labels, the hull), which :func:`playback` sends once, plus
    ``caption`` (its index) and ``text``, filled from this frame's ``display``.
    ``caption`` defaults to the one shown at ``t``.
    """
    trace = _trace(t)
    g = geometry(trace)
    full = display_strings(trace)  # the explorer's strings: the pictures label themselves with these
    display = {
        "q": full["q"],
        "output": full["output"],
        "sources": [
            {"index": s["index"], "label": s["label"], "percent": s["percent"], "score": s["score"]}
            for s in full["sources"]
        ],
    }
    n = caption_index(t) if caption is None else caption
    return {
        "t": round(t, 6),
        "trace": {
            "q": list(trace.q),
            "scores": list(trace.scores),
            "weights": list(trace.weights),
            "output": list(trace.output),
        },
        "geometry": {"projections": g["projections"], "arrows": g["arrows"], "pie": g["pie"]},
        "display": display,
        "caption": n,
        "text": fill(_script()["captions"][n]["text"], display),
    }


def playback() -> dict:
    """Return the whole playback: title, description, frames and captions.

    Frame ``i`` is at ``i / fps`` seconds; there are ``duration * fps + 1``
    frames, each with its caption's words filled from itself. Each caption
    names its still step's frame (``anchor_frame``) and that frame's words
    (``text``), which the reduced-motion view shows.
    """
    s = _script()
    fps = int(s["fps"])
    n = round(s["duration"] * fps) + 1
    frames = [frame(i / fps) for i in range(n)]
    captions = []
    for number, c in enumerate(s["captions"], start=1):
        anchor = round(c["anchor"] * fps)
        still = frames[anchor]
        if still["caption"] != number - 1:  # an anchor on its range's end: same picture, this caption
            still = frame(anchor / fps, caption=number - 1)
        captions.append(
            {
                "number": number,
                "start": c["start"],
                "end": c["end"],
                "phase": c["phase"],
                "anchor_frame": anchor,
                "text": still["text"],
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
