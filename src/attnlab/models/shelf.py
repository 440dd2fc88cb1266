"""Finished trace jobs kept in memory, least recently used dropped first beyond a byte cap.

A trace's size is the ``nbytes`` of its arrays (weights, allowed, q, k, v,
scores, logits, journey): its Python lists and strings are small beside them. The newest
trace always stays, even alone over the cap, so a job that just finished can
always be looked at.
"""

from __future__ import annotations

from collections import OrderedDict

from attnlab.models.jobkinds import TraceJob
from attnlab.models.traces import ModelTrace


def trace_nbytes(trace: ModelTrace) -> int:
    """The bytes of ``trace``'s arrays."""
    return sum(int(a.nbytes) for a in trace.arrays())


class TraceShelf:
    """Done trace jobs by id, oldest use first, within ``cap`` bytes."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept_bytes = 0
        self._jobs: OrderedDict[str, tuple[TraceJob, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._jobs)

    def add(self, job: TraceJob) -> list[TraceJob]:
        """Keep ``job`` (done, with its trace); return the jobs dropped to stay within the cap."""
        size = trace_nbytes(job.trace)
        self._jobs[job.id] = (job, size)
        self.kept_bytes += size
        dropped = []
        while self.kept_bytes > self.cap and len(self._jobs) > 1:
            _, (old, old_size) = self._jobs.popitem(last=False)
            self.kept_bytes -= old_size
            dropped.append(old)
        return dropped

    def touch(self, job_id: str) -> None:
        """Mark ``job_id`` as just used (no-op when it is not kept)."""
        if job_id in self._jobs:
            self._jobs.move_to_end(job_id)
