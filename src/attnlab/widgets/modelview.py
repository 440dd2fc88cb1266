"""``ModelView``: any model attnlab opens runs on a text in the kernel, drawn as on /real-model.

``model`` is a name (a shipped model's, or one ``attnlab models`` lists) or a path on this
computer: a folder with ``config.json``, ``*.safetensors`` and ``tokenizer.json``, or a ``.gguf``
file (:func:`attnlab.models.registry.resolve`: the notebook is the person's own computer).

The trace is the one the page's jobs make (``models.jobs.kinds.trace_text``: the registry's
shared model, its ``trace``), run here synchronously; the text is checked
against the model's token cap first (``models.jobs.texts.check_tokens``, the
tokenizer alone), so a long text is refused before any weights load. Errors
are the engine's ``FieldError`` (a ``ValueError``) naming ``model`` or ``text``.
"""

from __future__ import annotations

from attnlab.lab.realmodel.page import trace_names
from attnlab.models import registry
from attnlab.models.jobs.kinds import trace_text
from attnlab.models.jobs.texts import check_text, check_tokens
from attnlab.widgets.heads import HeadsWidget


class ModelView(HeadsWidget):
    """``ModelView(model="minilm" | "smollm2" | "org/name" | "/path/to/model", text=...)``: every layer's
    and head's attention on ``text``."""

    TITLE = "attnlab · real model"

    def __init__(self, model: str = "minilm", text: str = "The cat sat on the mat.") -> None:
        name = registry.resolve(model)
        check_text(text)  # the one text check every surface makes
        check_tokens(name, text)
        trace = trace_text(name, text, registry.get_model(name), lambda *_: None)
        names = trace_names(n_layer=trace.n_layer, kv_groups=trace.kv_groups, scale=trace.scale)
        super().__init__(trace, layer_names=names["layer_names"], head_names=names["head_names"])
        self.model_trace = trace
