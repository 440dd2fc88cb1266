"""Position interpolation for RoPE (Chen et al., 2023): rotate as if every position were divided by s.

A model trained on positions 0 .. L-1 has only seen the rotation angles
``p × base^(-2i/d)`` for p < L. To run it on up to s × L positions without
new angles, position interpolation rotates position p by the angles of
p / s (a fraction, between the trained integers), so offsets up to s × L map
back inside the trained range. ``s = 1`` is plain RoPE. Shapes as
:meth:`attnlab.engine.positions.RoPE.rotate`; float64.
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.errors import FieldError
from attnlab.engine.positions import RoPE


def interpolated_angles(rope: RoPE, positions, factor: float) -> np.ndarray:
    """The angles (L, head_dim/2) of positions / ``factor``."""
    if not factor >= 1.0:
        raise FieldError("factor", f"is {factor!r}; position interpolation divides by at least 1")
    pos = np.asarray(positions, dtype=np.float64) / float(factor)  # (L,) fractions of positions
    return pos[:, None] * rope.inverse_frequencies[None, :]


def rotate_interpolated(rope: RoPE, x, positions, factor: float) -> np.ndarray:
    """Rotate ``x`` (L, head_dim) as RoPE would at ``positions / factor``."""
    angles = interpolated_angles(rope, positions, factor)
    return rope.rotate(np.asarray(x, dtype=np.float64), np.cos(angles), np.sin(angles))
