"""The head views for any attention weights: one head's heatmap and lines, every head, every number.

:class:`HeadsWidget` holds a :class:`~attnlab.models.traces.ModelTrace`
(float64 weights ``(layers, H, T, T)``, row = query, column = key; ``allowed``
``(T, T)``, True = may attend) in the kernel and sends the browser what the
Real model page's API sends it, from the same functions: the model view
(``lab.realmodel.modelview.model_view``: every head's thumbnail, kind and scores) once,
the selected head (``lab.realmodel.modelview.head_view``: its full weights, ``None``
where blocked, and their display strings) and the focused query's row at
full precision (``precise_row``). The learner's picks (``layer``, ``head``,
``focus``) are synced traits; each pick recomputes the JSON here.
:class:`AttentionView` (a user's array) and ``ModelView`` (our engine's
forward pass) are both this widget.
"""

from __future__ import annotations

import numpy as np
import traitlets

from attnlab.lab.realmodel.modelview import head_view, model_view, named_caption, precise_row, widget_tokens
from attnlab.lab.realmodel.page import kv_group_names, trace_names, widget_words
from attnlab.models.traces import ModelTrace
from attnlab.widgets.arrays import as_allowed, as_weights, check_blocked, check_names
from attnlab.widgets.base import LabWidget


class HeadsWidget(LabWidget):
    """Attention weights drawn by the Real model page's own modules (heatmap, lines, head thumbnails)."""

    VIEW = "widgets/heads.js"
    CSS_FILES = ("lab.css", "realmodel.css")
    TITLE = "attnlab · attention heads"

    layer = traitlets.Int(0).tag(sync=True)
    head = traitlets.Int(0).tag(sync=True)
    focus = traitlets.Int(0).tag(sync=True)
    _tokens = traitlets.List().tag(sync=True)
    _names = traitlets.Dict().tag(sync=True)
    _model = traitlets.Dict().tag(sync=True)
    _head = traitlets.Dict().tag(sync=True)
    _row = traitlets.Dict().tag(sync=True)

    def __init__(self, trace: ModelTrace, *, layer_names: list[str], head_names: list[str], **kwargs) -> None:
        self._trace = trace
        names = {"layers": layer_names, "heads": head_names, "kv_groups": [list(g) for g in trace.kv_groups],
                 "kv_group_names": kv_group_names(trace.kv_groups), "words": widget_words()}  # fmt: skip
        tokens = widget_tokens(list(trace.tokens))  # each visible (␣, ⏎, ⇥), its exact text on hover
        super().__init__(_tokens=tokens, _names=names, _model=model_view(trace), **kwargs)
        self._refresh()

    @property
    def weights(self) -> np.ndarray:
        """The weights drawn, ``(layers, H, T, T)`` (a read-only view)."""
        view = self._trace.all_weights().view()
        view.flags.writeable = False
        return view

    @traitlets.validate("layer", "head", "focus")
    def _in_range(self, proposal):
        name, value = proposal["trait"].name, proposal["value"]
        t = self._trace
        limit = {"layer": t.n_layer, "head": t.n_head, "focus": len(t.tokens)}[name]
        if isinstance(value, bool) or not 0 <= value < limit:
            raise ValueError(f"{name} must be 0 to {limit - 1}; got {value!r}")
        return value

    @traitlets.observe("layer", "head", "focus")
    def _picked(self, _change) -> None:
        self._refresh()

    def _refresh(self) -> None:
        head = head_view(self._trace, self.layer, self.head)
        names = self._names
        head.update(named_caption(names["layers"][self.layer], names["heads"][self.head]))
        self._head = head
        self._row = precise_row(self._trace, self.layer, self.head, self.focus)


def _ids(tokens: list[str]) -> list[int]:
    """One id per distinct token text (its first position): a repeated token can score as induction."""
    first: dict[str, int] = {}
    return [first.setdefault(t, i) for i, t in enumerate(tokens)]


class AttentionView(HeadsWidget):
    """The head views for attention weights you bring (NumPy or torch); see :mod:`attnlab.widgets.arrays`.

    ``AttentionView(weights, tokens, *, layer_names=None, head_names=None, allowed=None, causal=False)``:
    ``weights`` ``(L, S)``, ``(H, L, S)``, ``(layers, H, L, S)`` or a tuple of
    per-layer ``(1, H, L, S)`` tensors (Hugging Face ``output_attentions=True``);
    ``tokens`` has one label per key. By default every query may see every
    key. ``allowed`` (bool, broadcastable to ``(L, S)``, True = may attend)
    and/or ``causal=True`` (key <= query) mark the blocked cells, which must be
    exactly 0 and are drawn as "blocked", as on the Real model page; see
    :func:`attnlab.widgets.arrays.as_allowed`.
    """

    def __init__(
        self, weights, tokens, *, layer_names=None, head_names=None, allowed=None, causal=False
    ) -> None:
        w = as_weights(weights)
        n_layer, n_head, _, n_key = w.shape
        ok = as_allowed(allowed, causal, n_key)
        check_blocked(w, ok)
        if isinstance(tokens, str) or not hasattr(tokens, "__len__"):
            raise ValueError("tokens must be a list of strings, one per key")
        tokens = check_names(tokens, n_key, "keys", "tokens")
        names = trace_names(n_layer=n_layer, kv_groups=[[h] for h in range(n_head)], scale=1.0)  # the page's
        layer_names = check_names(layer_names or names["layer_names"], n_layer, "layers", "layer_names")
        head_names = check_names(head_names or names["head_names"], n_head, "heads", "head_names")
        trace = ModelTrace(
            model="your attention",
            tokens=tokens,
            ids=_ids(tokens),
            weights=w,
            allowed=ok,
            scale=float("nan"),  # not known, and not needed to draw weights
            kv_groups=[[h] for h in range(n_head)],
        )
        super().__init__(trace, layer_names=layer_names, head_names=head_names)
