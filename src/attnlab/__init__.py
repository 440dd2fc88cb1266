"""attnlab: an exact, explorable lab for scaled dot-product attention.

``attnlab.engine`` computes; ``attnlab.lab`` holds the teaching content and its
logic; ``attnlab.web`` serves the page; ``attnlab.models`` runs real models:
``attnlab.load("smollm2")``, ``attnlab.load("minilm")`` or ``attnlab.load(PATH)`` (a model
folder or a .gguf file: :func:`attnlab.models.load.load`), imported when first called.
"""

from attnlab.engine import QueryTrace, trace_query
from attnlab.lab import refusals  # noqa: F401 - the model layer's refusals get the lab's words
from attnlab.lab.explorer.compare import compare
from attnlab.lab.explorer.program import to_python
from attnlab.lab.explorer.words import explain

__version__ = "0.1.0"


def load(model, *, weights: str = "auto"):
    """A model by name or path, with TransformerLens's hooks API: see :func:`attnlab.models.load.load`."""
    from attnlab.models.load import load as load_model

    return load_model(model, weights=weights)


__all__ = ["QueryTrace", "compare", "explain", "load", "to_python", "trace_query", "__version__"]
