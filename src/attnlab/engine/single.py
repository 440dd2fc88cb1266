"""One query through attention over N labelled sources, with every number kept.

This is the calculation the lab's explorer shows, done the way its generated
Python does it, so the two agree bit for bit:

- plain Python floats, never NumPy;
- every sum runs left to right and starts from ``0.0`` (``ordered_sum``);
- the default scale divides by ``math.sqrt(d_k)`` (an explicit ``scale``
  multiplies instead, exactly as the generated program does);
- the softmax subtracts the shared maximum ``m`` of the *allowed* scores,
  exponentiates with ``math.exp`` and divides by ``Z``, their ordered sum.

Mask polarity: ``allowed[i] is True`` means the query may attend to source i.
A blocked source still has its dot product and score computed (they are shown),
but gets an exp, weight and carry of exactly ``0.0`` and never enters a sum,
so its key and value cannot affect the output. An allowed source whose weight
merely underflows to ``0.0`` is *not* blocked; the trace keeps the two apart.

Limits of what the lab accepts: 1 to ``MAX_SOURCES`` (64) sources (a caller
that is not a learner's input may pass ``max_sources``: a real model's row of up
to 256 keys, :mod:`attnlab.models.rows`), 1 to ``MAX_DIM`` (64) coordinates in q,
each key and each value, and labels of
1 to ``MAX_LABEL_LENGTH`` (32) printable characters, all different.
Every bad input raises :class:`~attnlab.engine.errors.FieldError` (a
``ValueError``) whose ``loc`` is the field and index, ``("keys", 2)``, and
whose ``problem`` never names it (``has 3 coordinates; {first} has 2``, the
other field passed as a ref); ``str(error)`` reads ``keys[2] has 3
coordinates; keys[0] has 2``. Numbers derived from the inputs are located at
the input to change: overflowing scores at ``("q",)`` (the learner's control),
an overflowing output at ``("values",)``; their problems say which derived
number overflowed (``makes the score with {key} overflow: ...``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from numbers import Real

from attnlab.engine.errors import FieldError, Loc

MAX_SOURCES = 64
MAX_DIM = 64
MAX_LABEL_LENGTH = 32

Vector = tuple[float, ...]


def ordered_sum(terms: Iterable[float]) -> float:
    """Add ``terms`` left to right starting from ``0.0`` (the page's accumulation)."""
    total = 0.0
    for term in terms:
        total += term
    return total


def default_labels(n: int) -> tuple[str, ...]:
    """Return spreadsheet-style labels: A, B, ..., Z, AA, AB, ..."""
    labels = []
    for i in range(n):
        name = ""
        i += 1
        while i:
            i, rest = divmod(i - 1, 26)
            name = chr(ord("A") + rest) + name
        labels.append(name)
    return tuple(labels)


@dataclass(frozen=True)
class QueryTrace:
    """Every number of one query's attention, in source order.

    Shapes: ``q`` has d_k numbers; ``keys`` is N x d_k; ``values`` and
    ``carries`` are N x d_v; ``dots``, ``scores``, ``exps`` and ``weights``
    have N numbers; ``output`` has d_v. ``scale`` is ``None`` for the default
    division by ``sqrt(d_k)``. ``blocked`` lists the indices refused by
    ``allowed``; ``underflowed`` lists allowed indices whose weight is 0.0.
    """

    q: Vector
    keys: tuple[Vector, ...]
    values: tuple[Vector, ...]
    labels: tuple[str, ...]
    allowed: tuple[bool, ...]
    scale: float | None
    dots: Vector
    scores: Vector
    m: float
    exps: Vector
    z: float
    weights: Vector
    carries: tuple[Vector, ...]
    output: Vector
    blocked: tuple[int, ...]
    underflowed: tuple[int, ...]

    @property
    def d_k(self) -> int:
        return len(self.q)

    @property
    def d_v(self) -> int:
        return len(self.values[0])

    @property
    def n_sources(self) -> int:
        return len(self.keys)

    @property
    def allowed_indices(self) -> tuple[int, ...]:
        return tuple(i for i, ok in enumerate(self.allowed) if ok)

    def to_dict(self) -> dict:
        """Return the trace as plain JSON-ready data (floats at full precision)."""
        return {
            "q": list(self.q),
            "keys": [list(k) for k in self.keys],
            "values": [list(v) for v in self.values],
            "labels": list(self.labels),
            "allowed": list(self.allowed),
            "scale": self.scale,
            "d_k": self.d_k,
            "d_v": self.d_v,
            "dots": list(self.dots),
            "scores": list(self.scores),
            "m": self.m,
            "exps": list(self.exps),
            "z": self.z,
            "weights": list(self.weights),
            "carries": [list(c) for c in self.carries],
            "output": list(self.output),
            "blocked": list(self.blocked),
            "underflowed": list(self.underflowed),
        }


# --- validation -------------------------------------------------------------


def _number(x: object, loc: Loc) -> float:
    if isinstance(x, bool) or not isinstance(x, Real):
        raise FieldError(loc, f"must be a number, not {type(x).__name__} {x!r:.40}")
    try:
        value = float(x)
    except OverflowError:
        raise FieldError(loc, "is too large for a float") from None
    if math.isnan(value):
        raise FieldError(loc, "is NaN; every number must be finite")
    if math.isinf(value):
        raise FieldError(loc, f"is {'+' if value > 0 else '-'}inf; every number must be finite")
    return value


def _count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 coordinate``, ``2 coordinates``: the engine's own words (it cannot use ``lab.numbers.plural``)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _there_are(n: int) -> str:
    return f"there {'is' if n == 1 else 'are'} {_count(n, 'source')}"


def _vector(x: object, loc: Loc) -> Vector:
    if isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
        raise FieldError(loc, f"must be a list of numbers, not {type(x).__name__}")
    if len(x) == 0:
        raise FieldError(loc, "is empty; it needs at least 1 coordinate")
    if len(x) > MAX_DIM:
        raise FieldError(loc, f"has {_count(len(x), 'coordinate')}; the limit is {MAX_DIM}")
    # a finite Python float passes as it is (the common case, and a real model's 256 x 64
    # coordinates: checked without building a location per number); anything else is checked in full
    return tuple(
        c if type(c) is float and math.isfinite(c) else _number(c, (*loc, j)) for j, c in enumerate(x)
    )


def _matrix(x: object, loc: Loc, limit: int = MAX_SOURCES) -> tuple[Vector, ...]:
    if isinstance(x, (str, bytes)) or not isinstance(x, Sequence):
        raise FieldError(loc, f"must be a list of vectors, not {type(x).__name__}")
    if len(x) == 0:
        raise FieldError(loc, "is empty; attention needs at least 1 source")
    if len(x) > limit:
        raise FieldError(loc, f"has {_count(len(x), 'source')}; the limit is {limit}")
    rows = tuple(_vector(row, (*loc, i)) for i, row in enumerate(x))
    width = len(rows[0])
    for i, row in enumerate(rows):
        if len(row) != width:
            raise FieldError(
                (*loc, i),
                f"has {_count(len(row), 'coordinate')}; {{first}} has {width}",
                first=(*loc, 0),
            )
    return rows


def _labels(labels: object, n: int) -> tuple[str, ...]:
    if labels is None:
        return default_labels(n)
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence):
        raise FieldError("labels", f"must be a list of strings, not {type(labels).__name__}")
    if len(labels) != n:
        raise FieldError("labels", f"has {_count(len(labels), 'entry', 'entries')}; {_there_are(n)}")
    seen: dict[str, int] = {}
    for i, label in enumerate(labels):
        loc = ("labels", i)
        if not isinstance(label, str):
            raise FieldError(loc, f"must be a string, not {type(label).__name__}")
        if not label.strip():
            raise FieldError(loc, "is empty")
        if len(label) > MAX_LABEL_LENGTH:
            raise FieldError(
                loc, f"has {len(label)} characters; the limit is {MAX_LABEL_LENGTH}"
            )
        if not label.isprintable():
            raise FieldError(loc, "contains a control or unprintable character")
        if label in seen:
            raise FieldError(loc, f"repeats {{first}} ({label!r})", first=("labels", seen[label]))
        seen[label] = i
    return tuple(labels)


def _allowed(allowed: object, n: int) -> tuple[bool, ...]:
    if allowed is None:
        return (True,) * n
    if isinstance(allowed, (str, bytes)) or not isinstance(allowed, Sequence):
        raise FieldError("allowed", f"must be a list of booleans, not {type(allowed).__name__}")
    if len(allowed) != n:
        raise FieldError("allowed", f"has {_count(len(allowed), 'entry', 'entries')}; {_there_are(n)}")
    for i, ok in enumerate(allowed):
        if not isinstance(ok, bool):
            raise FieldError(("allowed", i), f"must be true or false, not {ok!r:.40}")
    if not any(allowed):
        raise FieldError("allowed", "blocks every source; at least 1 source must be allowed")
    return tuple(allowed)


def _scale(scale: object) -> float | None:
    if scale is None:
        return None
    value = _number(scale, ("scale",))
    if value <= 0.0:
        raise FieldError("scale", f"is {value!r}; it must be finite and positive")
    return value


# --- the calculation --------------------------------------------------------


def trace_query(
    q: Sequence[float],
    keys: Sequence[Sequence[float]],
    values: Sequence[Sequence[float]],
    labels: Sequence[str] | None = None,
    allowed: Sequence[bool] | None = None,
    scale: float | None = None,
    *,
    max_sources: int = MAX_SOURCES,
) -> QueryTrace:
    """Trace query ``q`` (d_k) over ``keys`` (N x d_k) and ``values`` (N x d_v).

    ``labels`` default to A, B, C, ...; ``allowed`` (True = may attend)
    defaults to every source; ``scale`` defaults to dividing by sqrt(d_k).
    ``max_sources`` is the explorer's cap on N (what a learner may type); a real
    model's row lifts it (the calculation is the same at any N).
    Raises ``FieldError`` naming the field and index for any bad input,
    including scores that overflow and a mask that blocks every source.
    """
    q_ = _vector(q, ("q",))
    keys_ = _matrix(keys, ("keys",), max_sources)
    values_ = _matrix(values, ("values",), max_sources)
    n = len(keys_)
    if len(q_) != len(keys_[0]):
        raise FieldError(
            ("keys", 0), f"has {_count(len(keys_[0]), 'coordinate')}; {{q}} has {len(q_)}", q=("q",)
        )
    if len(values_) != n:
        raise FieldError("values", f"has {_count(len(values_), 'source')}; {{keys}} has {n}", keys=("keys",))
    labels_ = _labels(labels, n)
    allowed_ = _allowed(allowed, n)
    scale_ = _scale(scale)
    d_k = len(q_)
    d_v = len(values_[0])

    # 1) Match: ordered dot products, then scale.
    dots = tuple(ordered_sum(qj * kj for qj, kj in zip(q_, k)) for k in keys_)
    if scale_ is None:
        root = math.sqrt(d_k)
        scores = tuple(s / root for s in dots)
    else:
        scores = tuple(s * scale_ for s in dots)
    for i, (dot, score) in enumerate(zip(dots, scores)):
        if not math.isfinite(dot) or not math.isfinite(score):
            # located at q: the scores are derived, and q is what the learner moves
            raise FieldError(
                "q",
                f"makes the score with {{key}} overflow: q·k is {dot!r} (scaled {score!r}); "
                "use smaller magnitudes",
                key=("keys", i),
            )

    # 2) Share: one shared maximum over the allowed scores, one denominator.
    m = max(s for s, ok in zip(scores, allowed_) if ok)
    exps = tuple(math.exp(s - m) if ok else 0.0 for s, ok in zip(scores, allowed_))
    z = ordered_sum(e for e, ok in zip(exps, allowed_) if ok)
    weights = tuple(e / z if ok else 0.0 for e, ok in zip(exps, allowed_))

    # 3) Mix: each allowed source carries w_i * v_i; the output sums the carries.
    carries = tuple(
        tuple(w * x for x in v) if ok else (0.0,) * d_v
        for w, v, ok in zip(weights, values_, allowed_)
    )
    output = tuple(
        ordered_sum(c[j] for c, ok in zip(carries, allowed_) if ok) for j in range(d_v)
    )
    for j, o in enumerate(output):
        if not math.isfinite(o):
            # located at values: the weights are at most 1, so only large values overflow it
            raise FieldError(
                "values", f"make output coordinate {j + 1} overflow; use smaller value magnitudes"
            )

    return QueryTrace(
        q=q_,
        keys=keys_,
        values=values_,
        labels=labels_,
        allowed=allowed_,
        scale=scale_,
        dots=dots,
        scores=scores,
        m=m,
        exps=exps,
        z=z,
        weights=weights,
        carries=carries,
        output=output,
        blocked=tuple(i for i, ok in enumerate(allowed_) if not ok),
        underflowed=tuple(i for i, (w, ok) in enumerate(zip(weights, allowed_)) if ok and w == 0.0),
    )
