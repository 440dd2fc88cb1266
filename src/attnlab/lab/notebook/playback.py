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
to hold for every frame of its range ("at q = {q} B takes {share:B}"). Each
frame also carries its caption's ``claims``: the numbers its placeholders
show, and the numbers behind the facts the caption declares in the script
(``facts``: the shares total one, the output stays in the triangle, q moves
further along B's key, the pie evens out, q returns to [2, 1]), which
``tests/lab/notebook/test_playback.py`` checks over every frame. The
reduced-motion view shows each caption as a still step: its ``anchor_frame``.

The playback always uses the starting example: it neither reads nor changes
the learner's experiment.
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from importlib import resources

from attnlab.engine.single import QueryTrace, trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.display import display_strings, hull_claims
from attnlab.lab.explorer.geometry import KEY_MIN_HALF, VALUE_MIN_HALF, geometry, plane_view
from attnlab.lab.explorer.sequence import STARTING

_PLACEHOLDER = re.compile(r"\{(q|output|score:\w+|share:\w+)\}")


@cache
def _script() -> dict:
    text = resources.files("attnlab.lab").joinpath("data/playback.json").read_text("utf-8")
    return json.loads(text)


def script_summary() -> dict:
    """The script's title, description and duration in seconds (no frames computed)."""
    s = _script()
    return {"title": s["title"], "description": s["description"], "duration": s["duration"]}


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


def claims(caption: dict, trace: QueryTrace) -> dict:
    """What ``caption`` says of ``trace``'s frame: its placeholders' numbers and its facts' numbers."""
    text = caption["text"]
    out: dict = {}
    for name in _PLACEHOLDER.findall(text):
        if name in ("q", "output"):
            out[name] = list(getattr(trace, name))
        else:
            kind, label = name.split(":")
            i = trace.labels.index(label)
            out.setdefault("scores" if kind == "score" else "shares", {})[label] = (
                trace.scores[i] if kind == "score" else trace.weights[i]
            )
    facts = caption.get("facts", {})
    if "sources" in facts:
        out["sources"] = list(trace.labels)
    if "total" in facts:
        out["total"] = math.fsum(trace.weights)
    if "inside" in facts:
        out["hull"] = hull_claims(trace)
        out["output"] = list(trace.output)
    if "towards" in facts:
        i = trace.labels.index(facts["towards"])
        out["towards"] = facts["towards"]
        out["along_key"] = trace.dots[i]  # how far q reaches along the key: q·k
        out["distance_to_value"] = math.dist(trace.output, trace.values[i])
    if "evens_out" in facts:
        out["spread"] = max(trace.scores) - min(trace.scores)
    if "zero_average" in facts:
        zero = trace_query([0.0, 0.0], trace.keys, trace.values, labels=trace.labels)
        out["at_zero"] = {"scores": list(zero.scores), "output": list(zero.output)}
    if "returns_to" in facts:
        out["returns_to"] = [float(x) for x in facts["returns_to"]]
        out["end_q"] = list(query_at(caption["end"]))
    return out


def time_words(t: float, duration: float) -> dict:
    """The clock as the page shows it by the slider (``1.2 s of 31 s``) and reads it out."""
    shown, total = f"{t:.1f}", fmt.rounded(duration)
    return {"text": f"{shown} s of {total} s", "spoken": f"{shown} seconds of {total}"}


def frame(t: float, caption: int | None = None) -> dict:
    """Return the playback at ``t`` seconds: the engine's numbers, the pictures and the words.

    The frame carries what the explorer's drawings read (``trace``,
    ``geometry``, ``display``) less what never changes during the playback
    (keys, values, labels, the hull, the sources' names on the planes), which
    :func:`playback` sends once, plus ``caption`` (its index), ``text``, filled
    from this frame's ``display``, its ``claims`` and the clock's words (``time``).
    ``caption`` defaults to the one shown at ``t``.
    """
    trace = _trace(t)
    g = geometry(trace)
    full = display_strings(trace)  # the explorer's strings: the pictures label themselves with these
    display = {
        "q": full["q"],
        "q_mark": full["q_mark"],
        "output": full["output"],
        "output_mark": full["output_mark"],
        "sources": [
            {k: src[k] for k in ("index", "label", "percent", "score", "share_mark")}
            for src in full["sources"]
        ],
    }
    n = caption_index(t) if caption is None else caption
    script = _script()
    return {
        "t": round(t, 6),
        "time": time_words(t, script["duration"]),
        "trace": {
            "q": list(trace.q),
            "scores": list(trace.scores),
            "weights": list(trace.weights),
            "output": list(trace.output),
        },
        "geometry": {"projections": g["projections"], "arrows": g["arrows"], "pie": g["pie"]},
        "display": display,
        "caption": n,
        "text": fill(script["captions"][n]["text"], display),
        "claims": claims(script["captions"][n], trace),
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
                "title": f"Step {number} of {len(s['captions'])}",
                "start": c["start"],
                "end": c["end"],
                "phase": c["phase"],
                "anchor_frame": anchor,
                "text": still["text"],
                "claims": still["claims"],
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
        "start_time": time_words(0.0, s["duration"]),
        "fps": fps,
        "labels": list(STARTING.labels),
        "keys": [list(k) for k in STARTING.keys],
        "values": [list(v) for v in STARTING.values],
        "allowed": [True] * len(STARTING.keys),
        "hull": geometry(first)["hull"],
        # what the pictures name and never changes: each source's key and value, the fixed words
        "display": {
            "sources": [
                {k: src[k] for k in ("key_mark", "value_mark")} for src in display_strings(first)["sources"]
            ],
            "words": display_strings(first)["words"],
            "off": display_strings(first)["off"],
        },
        "key_view": key_view,
        "value_view": plane_view(value_points, min_half=VALUE_MIN_HALF),
        "frames": frames,
        "captions": captions,
    }
