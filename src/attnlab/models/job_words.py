"""The words of a job's status line: its place in line and what it is doing now."""

from __future__ import annotations

from attnlab.models import registry
from attnlab.models.jobs import GenerationJob, Jobs, TraceJob


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def place_words(jobs: Jobs, job: TraceJob | GenerationJob) -> tuple[int | None, str]:
    """(place, words): 0 is "at the model now"; None when the job is not waiting."""
    place = jobs.place(job)
    if place is None:
        return None, ""
    return place, "at the model now" if place == 0 else f"{ordinal(place)} in line"


def stage_display(job: TraceJob, place_display: str) -> str:
    """The status line: what the job is doing now, counted so it never passes the last layer."""
    title = registry.SPECS[job.model].title if job.model in registry.SPECS else job.model
    if job.status == "queued":
        return f"Waiting: {place_display}" if place_display else "Waiting"
    if job.status == "loading":
        return f"Loading {title} (once per server)…"
    if job.status == "running":
        if not job.n_layer:
            return "Starting"
        return f"Running layer {min(job.layers_done + 1, job.n_layer)} of {job.n_layer}"
    if job.status == "done":
        return f"Done: {job.n_layer} layers"
    return job.message
