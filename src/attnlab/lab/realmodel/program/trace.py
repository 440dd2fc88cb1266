"""The trace's own pieces: the model's blocks as a Real model trace runs them, up to a layer.

``pieces_for(src)`` gives the shared pieces a trace-path program needs, ending with
``run_trace(last)`` (embed, then blocks 0..last, every block's trace kept); ``axes(src)``
how a trace's arrays are indexed (MiniLM's carry a batch axis of one).
"""

from __future__ import annotations

from attnlab.lab.realmodel.program import pieces
from attnlab.lab.realmodel.program.number import Source

RUN_TRACE = '''

def run_trace(last):
    """1) embed the tokens, 2) run blocks 0..last as a trace does; return each block's trace."""
    x = embed(IDS)
    traces = []
    for i in range(last + 1):
        x, t = block(x, layer(i))
        traces.append(t)
    return traces
'''


def pieces_for(src: Source) -> list[str]:
    """The pieces of a trace-path program: the model file, its block, :data:`RUN_TRACE`."""
    if src.decoder:
        return [pieces.GGUF, pieces.RMS_NORM, pieces.ROPE, pieces.SMOLLM_REFERENCE, RUN_TRACE]
    return [pieces.SAFETENSORS, RUN_TRACE]


def batch(src: Source) -> str:
    """The index that drops a trace array's batch axis: ``""`` (SmolLM2) or ``"0, "`` (MiniLM)."""
    return "" if src.decoder else "0, "


def row_of(src: Source) -> str:
    """How a (T, d) row array is read from a trace's (1, T, d) (MiniLM) or (T, d) (SmolLM2) array."""
    return "" if src.decoder else "[0]"
