"""The lab's views as notebook widgets (anywidget): ``Explorer``, ``AttentionView``, ``ModelView``, ``Block``,
and the Circuits page's ``CensusView``, ``PatchView``, ``LensView``.

Python computes, the widget draws: every number comes from attnlab's engine
and lab code in the kernel, and the widgets draw with the page's own ES
modules (``web/static/js``), read at runtime and never copied (see
:mod:`attnlab.widgets.assets`). Needs the ``jupyter`` extra
(``pip install 'attnlab[jupyter]'``); ``import attnlab`` alone never imports
anywidget, and this package imports it only when a widget class is asked for.
"""

from __future__ import annotations

_WHERE = {
    "Explorer": "attnlab.widgets.explorer",
    "AttentionView": "attnlab.widgets.heads",
    "ModelView": "attnlab.widgets.modelview",
    "Block": "attnlab.widgets.block",
    "CensusView": "attnlab.widgets.circuits",
    "PatchView": "attnlab.widgets.circuits",
    "LensView": "attnlab.widgets.circuits",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'attnlab.widgets' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_WHERE[name]), name)
