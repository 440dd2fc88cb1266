"""The tiny models of every family (``families``, tests/familykit.py), for the tests under tests/models."""

from familykit import families  # noqa: F401  (a fixture: pytest finds it by name here)
