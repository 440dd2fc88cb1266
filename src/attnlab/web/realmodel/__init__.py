"""The Real model view's routes (``/api/models``)."""
