"""Attention weights a user brings, checked and turned into float64 ``(layers, H, L, S)``.

Accepted: a NumPy array or a torch tensor of shape ``(L, S)`` (one head),
``(H, L, S)`` (one layer) or ``(layers, H, L, S)``; a batch axis of size 1 in
front (``(1, H, L, S)`` per layer, or ``(layers, 1, H, L, S)``) is dropped; a
tuple or list of per-layer arrays (Hugging Face ``output_attentions=True``:
each ``(1, H, L, S)``) is stacked; so are the ``blocks.<l>.attn.hook_pattern``
entries of a TransformerLens ``ActivationCache`` (or any mapping with those names),
in layer order. Row = query, column = key.

Checks, each a ``ValueError`` that names the place: NaN or infinity; a
negative weight; a row whose sum is not 1 within ``ROW_SUM_TOL`` (1e-5, or
``HALF_ROW_SUM_TOL`` 1e-2 for float16 / bfloat16 tensors); a batch axis
larger than 1; queries != keys (the views draw self-attention); token count
!= keys. A fully zero row (e.g. a padded query) is rejected like any other
row that does not sum to 1: drop padding before drawing. The values drawn
are ``float64`` copies of the given ones (a float32 weight is widened
exactly, never rounded).

Masked cells (:func:`as_allowed`): ``allowed`` is a bool array broadcastable
to ``(L, S)``, True = may attend (the lab's mask polarity, as the engine's
``mask``); ``causal=True`` is the lower triangle including the diagonal
(key j <= query i). The views draw self-attention (L == S), where the engine's
two causal alignments (``"top_left"`` and ``"bottom_right"``, see
docs/engine-conventions.md) are the same triangle. Given both, they are ANDed,
as the engine combines masks. A blocked cell must be exactly 0 in every layer
and head (:func:`check_blocked`, an error naming the cell otherwise), so each
row sums to 1 over its allowed keys; a query allowed no key is refused.
"""

from __future__ import annotations

import re

import numpy as np

from attnlab.lab.numbers import plural

ROW_SUM_TOL = 1e-5
HALF_ROW_SUM_TOL = 1e-2


def _numpy(x) -> tuple[np.ndarray, bool]:
    """``(float64 array, was half precision)`` for a NumPy array, torch tensor or nested list."""
    half = False
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor, without importing torch
        half = str(getattr(x, "dtype", "")) in ("torch.float16", "torch.bfloat16")
        x = x.detach().cpu()
        if half or str(x.dtype) == "torch.bfloat16":
            x = x.float()  # NumPy has no bfloat16: widen exactly first
        x = x.numpy()
    arr = np.asarray(x)
    half = half or arr.dtype == np.float16
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"weights must be numbers; got dtype {arr.dtype}")
    return arr.astype(np.float64), half


def _drop_batch(arr: np.ndarray, where: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``arr[0]`` when its first axis (the batch) has size 1; ``shape`` is the given one, for the message."""
    if arr.shape[0] != 1:
        raise ValueError(
            f"{where} has a batch of {arr.shape[0]} (shape {tuple(shape or arr.shape)}); "
            "pass one example (e.g. attentions[0] or weights[i])"
        )
    return arr[0]


def _cache_patterns(cache) -> list:
    """A TransformerLens cache's attention patterns, layer 0 first (``blocks.<l>.attn.hook_pattern``)."""
    found = {}
    for name in cache.keys():
        match = re.fullmatch(r"blocks\.(\d+)\.attn\.hook_pattern", str(name))
        if match:
            found[int(match.group(1))] = name
    if not found:
        raise ValueError(
            "weights is a mapping with no blocks.<l>.attn.hook_pattern entries; pass an array, "
            "a tuple of per-layer arrays, or a TransformerLens cache run with the pattern hooks"
        )
    missing = sorted(set(range(max(found) + 1)) - set(found))
    if missing:
        raise ValueError(f"weights has no blocks.{missing[0]}.attn.hook_pattern; every layer from 0 is used")
    return [cache[found[layer]] for layer in range(len(found))]


def as_weights(weights) -> np.ndarray:
    """Return ``weights`` as float64 ``(layers, H, L, S)``; raise ``ValueError`` for bad ones."""
    if callable(getattr(weights, "keys", None)) and not hasattr(weights, "shape"):
        weights = _cache_patterns(weights)  # a TransformerLens ActivationCache or a dict like it
    if (
        isinstance(weights, (tuple, list))
        and weights
        and not np.isscalar(weights[0])
        and hasattr(weights[0], "shape")
    ):
        layers, half = [], False
        for i, layer in enumerate(weights):
            arr, was_half = _numpy(layer)
            half = half or was_half
            if arr.ndim == 4:
                arr = _drop_batch(arr, f"weights[{i}]")
            if arr.ndim != 3:
                raise ValueError(
                    f"weights[{i}] has shape {tuple(arr.shape)}; each layer must be (H, L, S) or (1, H, L, S)"
                )
            if i and arr.shape != layers[0].shape:
                raise ValueError(
                    f"weights[{i}] has shape {tuple(arr.shape)}; weights[0] has {layers[0].shape}"
                )
            layers.append(arr)
        arr = np.stack(layers)
    else:
        arr, half = _numpy(weights)
        if arr.ndim == 5:
            # (layers, 1, H, L, S) -> (layers, H, L, S)
            arr = _drop_batch(arr.swapaxes(0, 1), "weights", arr.shape)
        arr = arr.reshape((1,) * max(0, 4 - arr.ndim) + arr.shape) if 2 <= arr.ndim <= 4 else arr
        if arr.ndim != 4:
            raise ValueError(
                f"weights has shape {tuple(np.shape(arr))}; expected (L, S), (H, L, S) or (layers, H, L, S)"
            )
    check_weights(arr, ROW_SUM_TOL if not half else HALF_ROW_SUM_TOL)
    return arr


def check_weights(w: np.ndarray, tol: float) -> None:
    """Raise ``ValueError`` naming ``[layer, head, query(, key)]`` for the first bad weight or row."""
    n_layer, n_head, n_query, n_key = w.shape
    if 0 in w.shape:
        raise ValueError(f"weights has shape {w.shape}; every axis needs at least one entry")
    if n_query != n_key:
        raise ValueError(
            f"weights has {n_query} queries and {n_key} keys; the views draw self-attention (L == S)"
        )
    bad = np.argwhere(~np.isfinite(w))
    if bad.size:
        at = tuple(int(i) for i in bad[0])
        kind = "NaN" if np.isnan(w[at]) else "infinite"
        raise ValueError(f"weights at {_where(at)} is {kind}; every weight must be a finite number")
    bad = np.argwhere(w < 0)
    if bad.size:
        at = tuple(int(i) for i in bad[0])
        raise ValueError(
            f"weights at {_where(at)} is {float(w[at])!r}: negative; weights are shares in [0, 1]"
        )
    sums = w.sum(axis=-1)  # (layers, H, L)
    bad = np.argwhere(np.abs(sums - 1.0) > tol)
    if bad.size:
        at = tuple(int(i) for i in bad[0])
        raise ValueError(
            f"weights at {_where(at)} sum to {float(sums[at])!r}, not 1 (tolerance {tol:g}); "
            "each query's row must be a softmax (drop padded or fully masked rows)"
        )


def as_allowed(allowed, causal: bool, n: int) -> np.ndarray:
    """The ``(n, n)`` bool mask, True = may attend, from ``allowed`` (or None = all) and ``causal``."""
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be True or False; got {causal!r}")
    ok = np.ones((n, n), dtype=bool)
    if allowed is not None:
        if hasattr(allowed, "detach") and hasattr(allowed, "cpu"):  # a torch tensor
            allowed = allowed.detach().cpu().numpy()
        arr = np.asarray(allowed)
        if arr.dtype != np.bool_:
            raise ValueError(
                f"allowed must be booleans (True = may attend); got dtype {arr.dtype} "
                "(for an additive mask of 0 and -inf, pass mask == 0)"
            )
        try:
            ok = np.broadcast_to(arr, (n, n)).copy()
        except ValueError:
            raise ValueError(
                f"allowed has shape {arr.shape}; it must broadcast to (queries, keys) = ({n}, {n})"
            ) from None
    if causal:
        ok &= np.tril(np.ones((n, n), dtype=bool))
    empty = np.flatnonzero(~ok.any(axis=1))
    if empty.size:
        raise ValueError(f"allowed lets query {int(empty[0])} attend to no key; every query needs one")
    return ok


def check_blocked(w: np.ndarray, ok: np.ndarray) -> None:
    """Raise ``ValueError`` naming the first blocked cell of ``w`` (layers, H, L, S) that is not exactly 0."""
    bad = np.argwhere((w != 0) & ~ok)
    if bad.size:
        at = tuple(int(i) for i in bad[0])
        raise ValueError(
            f"weights at {_where(at)} is {float(w[at])!r}, but that key is blocked (allowed is False "
            "there); a blocked cell's weight must be exactly 0"
        )


def _where(at: tuple[int, ...]) -> str:
    """``layer 0, head 1, query 2, key 3`` for an index into (layers, H, L, S)."""
    return ", ".join(f"{name} {i}" for name, i in zip(("layer", "head", "query", "key"), at))


def check_names(names, count: int, what: str, field: str) -> list[str]:
    """``names`` as strings, ``count`` of them (``what`` names the axis for the message)."""
    names = [str(x) for x in names]
    if len(names) != count:
        raise ValueError(f"{field} has {plural(len(names), 'entry', 'entries')}; weights has {count} {what}")
    return names
