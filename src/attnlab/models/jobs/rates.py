"""How long a model job takes: rates measured per kind, and the estimates made from them.

A kind's rate is seconds per unit of its work, per model (``Job.rate_key``): a trace's units
are its text's characters, a generation's its tokens, a patching sweep's its patches, any other
run one job. Each job that ends adds its active seconds (time a sweep spent making way for
another learner's job is not counted) and its units; the rate is their ratio over the last
:data:`SAMPLES` jobs of that key. Before any job of a key has ended, :data:`PRIOR_S` seconds a
job is assumed. The line's ``Retry-After`` and its waits are sums of these estimates.
"""

from __future__ import annotations

from collections import deque

SAMPLES = 8  # jobs of one kind and model a rate is measured over (the newest)
PRIOR_S = 5.0  # seconds a job is assumed to take before one of its kind has ended


class Rates:
    """Measured seconds per unit, by rate key (see the module)."""

    def __init__(self, *, samples: int = SAMPLES, prior_s: float = PRIOR_S) -> None:
        self.prior_s = prior_s
        self._samples = samples
        self._by_key: dict[tuple, deque[tuple[float, float]]] = {}

    def add(self, key: tuple, seconds: float, units: float) -> None:
        """A job of ``key`` took ``seconds`` for ``units`` of work."""
        if units > 0 and seconds >= 0:
            self._by_key.setdefault(key, deque(maxlen=self._samples)).append((seconds, units))

    def rate(self, key: tuple) -> float | None:
        """Seconds per unit measured for ``key``; ``None`` before one has ended."""
        found = self._by_key.get(key)
        if not found:
            return None
        return sum(s for s, _ in found) / sum(u for _, u in found)

    def seconds(self, key: tuple, units: float) -> float:
        """The estimated seconds of ``units`` of work of ``key``."""
        rate = self.rate(key)
        return self.prior_s if rate is None else rate * units
