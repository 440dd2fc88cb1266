"""The base of every attnlab widget: the loader, the page's modules and CSS, and ``to_html``.

A subclass names its view module (``VIEW``, a ``web/static/js/widgets/*.js``
file exporting ``mount(el, model)``) and the CSS files it needs; the view
reads its numbers from synced traits that Python computes. anywidget is
imported here, so importing this module without the ``jupyter`` extra raises
an ``ImportError`` that names the extra.
"""

from __future__ import annotations

from pathlib import Path

try:
    import anywidget
    import traitlets
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "attnlab.widgets needs anywidget: pip install 'attnlab[jupyter]' (or pip install anywidget)"
    ) from error

from attnlab.widgets.assets import module_graph, read_js, scoped_css


class LabWidget(anywidget.AnyWidget):
    """One attnlab view in a notebook; subclasses set ``VIEW`` and ``CSS_FILES``."""

    VIEW = ""
    CSS_FILES: tuple[str, ...] = ("lab.css",)

    _esm = read_js("widgets/entry.js")
    # [[name, source], ...] dependencies first: the page modules the view imports
    _modules = traitlets.List().tag(sync=True)
    _attnlab_view = traitlets.Unicode().tag(sync=True)

    def __init__(self, **kwargs) -> None:
        # Read at construction, so an edited page module reaches the next widget.
        kwargs.setdefault("_modules", module_graph([self.VIEW]))
        kwargs.setdefault("_attnlab_view", self.VIEW)
        super().__init__(**kwargs)

    def __init_subclass__(cls, **kwargs) -> None:
        # Only where a class names its CSS: ipywidgets' add_traits makes subclasses too.
        if "CSS_FILES" in cls.__dict__:
            cls._css = scoped_css(list(cls.CSS_FILES))
        super().__init_subclass__(**kwargs)

    def snapshot_state(self) -> dict:
        """The synced traits a frozen copy needs (everything the view reads)."""
        skip = ("_model_", "_view_", "_dom", "_esm", "_css", "_anywidget")
        names = [n for n in self.trait_names(sync=lambda v: v) if n not in ("layout", "tooltip", "tabbable")]
        return {n: getattr(self, n) for n in names if not n.startswith(skip)}

    def to_html(self, path: str | Path) -> Path:
        """Write a standalone HTML snapshot of this view with its numbers frozen; return the path.

        No kernel and no network: the modules, the CSS and the current numbers are
        inlined (see :mod:`attnlab.widgets.snapshot`).
        """
        from attnlab.widgets.snapshot import write_snapshot

        return write_snapshot(self, Path(path))
