"""The circuits' own pieces: a run that keeps every activation, with interventions (models/circuits).

``pieces_for(src)`` gives what a circuits program needs, ending with ``run(x, start,
hooks, points)``: the blocks from ``start`` on, as :mod:`attnlab.models.circuits.runs`
runs them (SmolLM2 on the fast path, MiniLM on the reference block, a batch of one),
keeping each block's residual stream, mid point, heads' outputs z, attention output and
MLP output; ``hooks[i]`` edits block i (``{"z": f, "mid": f, "mlp": f}``), ``points[p]``
the residual stream at point p (entering block p).
"""

from __future__ import annotations

from attnlab.lab.realmodel.program import pieces
from attnlab.lab.realmodel.program.number import Source

RUN_DECODER = '''

def run(x, start=0, hooks=None, points=None):
    """The circuits' run (models/circuits/runs.py) from x (T, d) entering block ``start``: every block
    from there on the fast path. Keeps, per block i: resid[i] (entering it), mid[i], z[i] (T, H · d_head),
    attn[i], mlp[i]; and resid[N_LAYER], the residual stream leaving the last block."""
    hooks, points = hooks or {}, points or {}
    kept = {"resid": {}, "mid": {}, "z": {}, "attn": {}, "mlp": {}}
    x = points[start](x) if start in points else x
    kept["resid"][start] = x
    for i in range(start, N_LAYER):
        h = hooks.get(i, {})
        x, z, attn, mid, ff = fast_block(x, layer(i), h.get("z"), h.get("mid"), h.get("mlp"))
        x = points[i + 1](x) if i + 1 in points else x
        kept["z"][i], kept["attn"][i], kept["mid"][i], kept["mlp"][i] = z, attn, mid, ff
        kept["resid"][i + 1] = x
    return kept


def final_rms(x):
    """The final RMSNorm's divisor per row, sqrt(mean(x²) + eps), as the model computes it: (T,)."""
    return np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS)[..., 0]
'''

RUN_ENCODER = '''

def run(x, start=0, hooks=None, points=None):
    """The circuits' run (models/circuits/runs.py) from x (1, T, d) entering block ``start``: every block
    from there on, a batch of one. Keeps, per block i (rows (T, d)): resid[i] (entering it), mid[i], z[i]
    (T, H · d_head), attn[i], mlp[i]; and resid[N_LAYER], the residual stream leaving the last block."""
    hooks, points = hooks or {}, points or {}
    kept = {"resid": {}, "mid": {}, "z": {}, "attn": {}, "mlp": {}, "x": None}
    x = points[start](x) if start in points else x
    kept["resid"][start] = x[0]
    for i in range(start, N_LAYER):
        h = hooks.get(i, {})
        x, t = block(x, layer(i), h.get("z"), h.get("mid"), h.get("mlp"))
        x = points[i + 1](x) if i + 1 in points else x
        kept["z"][i], kept["attn"][i] = t["attn"]["concat"][0], t["attn"]["output"][0]
        kept["mid"][i], kept["mlp"][i] = t["mid"][0], t["mlp"][0]
        kept["resid"][i + 1] = x[0]
    kept["x"] = x  # (1, T, d): what the sentence embedding pools
    return kept
'''

REPLACE = '''

def replacing(rows, cols, value):
    """An intervention: a copy of its argument with [..., rows, cols] := value[rows] (never in place)."""
    def edit(a):
        out = np.array(a, dtype=a.dtype, order="C", copy=True)
        out[..., rows, cols] = value[rows]
        return out
    return edit
'''


def pieces_for(src: Source) -> list[str]:
    """The pieces of a circuits program on ``src``: the model file, its blocks, ``run``."""
    if src.decoder:
        fast = pieces.fast_pieces(src.n_tokens, src.compiled)
        return [pieces.GGUF, pieces.RMS_NORM, pieces.ROPE, *fast, pieces.OUTPUT, RUN_DECODER, REPLACE]
    return [pieces.SAFETENSORS, RUN_ENCODER, REPLACE]


def embedded(src: Source, ids: str = "IDS") -> str:
    """The expression for the residual stream entering block 0 (MiniLM: a batch of one)."""
    return f"embed({ids})"
