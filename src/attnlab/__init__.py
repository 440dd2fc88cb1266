"""attnlab: an exact, explorable lab for scaled dot-product attention.

``attnlab.engine`` computes; ``attnlab.lab`` holds the teaching content and its
logic; ``attnlab.web`` serves the page; ``attnlab.models`` runs real models.
"""

from attnlab.engine import QueryTrace, trace_query
from attnlab.lab.explorer.compare import compare
from attnlab.lab.explorer.program import to_python
from attnlab.lab.explorer.words import explain

__version__ = "0.1.0"

__all__ = ["QueryTrace", "compare", "explain", "to_python", "trace_query", "__version__"]
