"""The explorer's routes: ``POST /api/trace`` and the drag socket."""
