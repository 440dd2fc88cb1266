"""The words of a circuits job's status line: its place in line, its progress, why it ended.

Plain values in (a job's kind, status, place, counts), strings out: the routes pass what
the job knows; nothing here reads a job.
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.status import place_words
from attnlab.lab.said import said

KINDS = {
    "ablation": "the ablation",
    "attribution": "the logit attribution",
    "lens": "the logit lens",
    "head": "the head's reads and writes",
    "patching": "the patching sweep",
}


def circuit_status(*, kind: str, status: str, title: str, place: int | None, done: int, total: int,
                   has_result: bool, message: str, cancel_asked: bool = False) -> dict:  # fmt: skip
    """Every string a circuits job's answer shows: ``stage_display``, ``progress`` (0..1) and its display.

    ``done``/``total``: a patching sweep's patches (``total`` 0 while unknown, and for the other kinds).
    """
    what = KINDS[kind]
    progress = 1.0 if status == "done" else (min(done, total) / total if total else 0.0)
    if status == "queued":
        where = place_words(place)
        line = said(f"Waiting: {where}" if where else "Waiting", place=place)
    elif status == "loading":
        line = said(f"Loading {title} (once per server)…", loading=True)
    elif status == "running" and cancel_asked:
        line = said(f"Cancelling: stopping after the patch under way ({min(done, total)} of {total} done)…",
                    done=min(done, total), total=total)  # fmt: skip
    elif status == "running" and total:
        shown = min(done, total)
        line = said(f"Patching: {shown} of {total} patches done…", done=shown, total=total)
    elif status == "running":
        line = said(f"Running {what} on {title}…", kind=kind)
    elif status == "done":
        line = said(f"Done: {total} patches." if total else "Done.", done=total, total=total)
    elif status == "cancelled" and has_result:
        line = said(f"Cancelled after {done} of {total} patches: the partial result is shown.", done=done,
                    total=total)  # fmt: skip
    elif status == "cancelled" and not message:
        line = said("Cancelled before it started.", done=0, total=total)
    else:
        line = said(message[:1].upper() + message[1:], status=status)
    return {
        "stage_display": line["text"],
        "stage": line,
        "progress": progress,
        "progress_display": fmt.percent(progress),
    }
