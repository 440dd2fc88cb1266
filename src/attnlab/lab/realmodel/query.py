"""One query row of a kept trace as the explorer computes it, with the explorer's labels for its tokens.

:func:`row_labels` names a trace's tokens as the explorer's rows need them: unique, short and
printable (``"3 cat"``, ``"4 ⏎"``: :func:`attnlab.lab.realmodel.tokens.row_label`, so every token a
tokenizer makes is a label the explorer accepts). :func:`query_row` runs the explorer's calculation
(:func:`attnlab.models.rows.explorer_row`: ``trace_query``, exact ordered sums) on one query's real
q, keys and values, so its shares equal the trace's weights of that row up to the model's float32
rounding. The neuron view, the bridge, the row panel and the next-token view all start from these.
"""

from __future__ import annotations

from attnlab.engine.single import QueryTrace
from attnlab.lab.realmodel.tokens import row_label
from attnlab.models.rows import explorer_row


def row_labels(trace) -> list[str]:
    """Unique, short, printable labels for ``trace``'s tokens: ``"3 cat"``, ``"4 ⏎"``."""
    return [row_label(i, t) for i, t in enumerate(trace.tokens)]


def query_row(trace, layer: int, head: int, index: int) -> QueryTrace:
    """Token ``index``'s query in ``layer``/``head`` of ``trace`` (made with details) as the explorer
    computes one query; a bad index is refused at its field (``layer``, ``head``, ``index``)."""
    trace.check(layer=layer, head=head)
    if trace.q is None or trace.k is None or trace.v is None:
        raise ValueError("this trace has no q, k, v: make it with details=True")
    trace.check_token("index", index)
    g = trace.kv_head(head)
    return explorer_row(
        trace.q[layer, head, index].astype(float).tolist(),
        trace.k[layer, g].astype(float).tolist(),
        trace.v[layer, g].astype(float).tolist(),
        labels=row_labels(trace),
        allowed=trace.allowed[index].tolist(),
        scale=trace.scale,
    )
