"""The block section's routes (``/api/block``)."""
