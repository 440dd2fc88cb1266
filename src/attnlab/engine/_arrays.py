"""Array-API plumbing shared by the engine: namespaces, dtypes and input checks.

The engine is written against the Python array API standard through
``array_api_compat``: the same code runs on NumPy, ``array_api_strict`` and,
where installed, PyTorch tensors. Lists and other non-arrays are turned into
NumPy float64 arrays. Every check raises ``FieldError`` (a ``ValueError``)
located at the argument it is about, ``loc = (field,)``, with a message that
names the field and its shape, so a person can act on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from array_api_compat import array_namespace, device, is_array_api_obj

from attnlab.engine.errors import FieldError

Array = Any  # any array-API array (numpy.ndarray, torch.Tensor, array_api_strict.Array)


def shape_of(x: Array) -> tuple[int, ...]:
    """Return ``x.shape`` as a plain tuple of ints (torch returns ``torch.Size``)."""
    shape = x.shape
    return shape if type(shape) is tuple else tuple(int(n) for n in shape)


def as_array(x: object, field: str) -> Array:
    """Return ``x`` if it is an array, else a NumPy float64 array made from it."""
    if type(x) is np.ndarray or is_array_api_obj(x):
        return x
    if isinstance(x, (str, bytes)):
        raise FieldError(field, f"must be an array of numbers, not {type(x).__name__}")
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise FieldError(field, f"must be an array of numbers: {error}") from None


_NUMPY = array_namespace(np.empty(0))


def namespace(*arrays: Array | None):
    """Return the array namespace shared by the non-``None`` arrays.

    Plain NumPy arrays, the common case, skip ``array_namespace``'s general
    search (it costs microseconds, and a decoding step calls this hundreds of times).
    """
    for a in arrays:
        if a is not None and type(a) is not np.ndarray:
            return array_namespace(*(a for a in arrays if a is not None))
    return _NUMPY


def float_dtype(xp, *arrays: Array):
    """Return the floating dtype to compute in: float64 unless every input is float32.

    Integer and boolean inputs count as float64 (the exact default); lower
    precisions (float16, bfloat16) are computed in float32 so the softmax never
    runs below float32.
    """
    dtypes = [a.dtype for a in arrays]
    if dtypes and all(d == xp.float32 or _is_low_float(xp, d) for d in dtypes):
        return xp.float32
    return xp.float64


def _is_low_float(xp, dtype) -> bool:
    if dtype in (xp.float32, xp.float64):
        return False
    try:
        return bool(xp.isdtype(dtype, "real floating"))
    except (TypeError, ValueError):
        return False


def to_float(xp, x: Array, dtype, field: str) -> Array:
    """Cast ``x`` to ``dtype`` after checking that it is numeric."""
    if x.dtype == dtype:
        return x
    if x.dtype == xp.bool or not xp.isdtype(x.dtype, ("integral", "real floating")):
        raise FieldError(field, f"must hold real numbers, not {x.dtype}")
    return xp.astype(x, dtype)


def check_finite(xp, x: Array, field: str) -> None:
    """Refuse NaN and +-inf anywhere in ``x`` (a mask does not clean its inputs)."""
    finite = xp.isfinite(x)
    if not bool(xp.all(finite)):
        bad = int(xp.sum(xp.astype(xp.logical_not(finite), xp.int64)))
        raise FieldError(
            field,
            f"of shape {shape_of(x)} has {bad} NaN or infinite entr"
            f"{'y' if bad == 1 else 'ies'}; every number must be finite"
        )


def broadcast_shape(*shapes: Sequence[int], fields: Sequence[str]) -> tuple[int, ...]:
    """Return the broadcast of ``shapes`` or raise ``FieldError`` naming them.

    The error is located at the first field whose size disagrees with an
    earlier field's on some axis.
    """
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(-ndim, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(sizes) > 1:
            listed = ", ".join(f"{f} {tuple(s)}" for f, s in zip(fields, shapes, strict=True))
            raise FieldError(_odd_one(shapes, fields, axis), f"leading dimensions do not broadcast: {listed}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _odd_one(shapes: Sequence[Sequence[int]], fields: Sequence[str], axis: int) -> str:
    first = None
    for f, s in zip(fields, shapes, strict=True):
        size = s[axis] if len(s) >= -axis else 1
        if size != 1 and first is None:
            first = size
        elif size not in (1, first):
            return f
    return fields[-1]  # pragma: no cover - only called when two sizes disagree


def fits(shape: Sequence[int], target: Sequence[int]) -> bool:
    """Return True when ``shape`` broadcasts to ``target`` without enlarging it."""
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(target), strict=False))


def arange(xp, n: int, like: Array, dtype=None) -> Array:
    """Return ``0, 1, ..., n-1`` on the same device as ``like``."""
    return xp.arange(n, dtype=dtype, device=device(like))


def default_scale(d_k: int, scale: float | None) -> float:
    """Return the softmax scale: ``1/sqrt(d_k)`` unless ``scale`` is given."""
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise FieldError("scale", f"must be a number, not {type(scale).__name__}")
    if not math.isfinite(scale):
        raise FieldError("scale", f"is {scale}; it must be finite")
    return float(scale)
