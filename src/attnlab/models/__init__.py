"""Loaders for real pretrained transformers, run by attnlab's own engine."""
