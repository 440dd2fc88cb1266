"""Pure numerics: attention and transformer layers. No I/O, no web.

``trace_query`` is the exact one-query calculation behind the lab's explorer.
"""

from attnlab.engine.single import (
    MAX_DIM,
    MAX_LABEL_LENGTH,
    MAX_SOURCES,
    QueryTrace,
    default_labels,
    ordered_sum,
    trace_query,
)

__all__ = [
    "MAX_DIM",
    "MAX_LABEL_LENGTH",
    "MAX_SOURCES",
    "QueryTrace",
    "default_labels",
    "ordered_sum",
    "trace_query",
]
