"""The block section: one transformer block walked on the A/B/C tokens."""
