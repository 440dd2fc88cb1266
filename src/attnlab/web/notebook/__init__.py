"""The notebook's routes (``/api/notebook``)."""
