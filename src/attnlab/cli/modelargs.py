"""The arguments every command that runs a model shares: which model, and what its products run on."""

from __future__ import annotations

import argparse

from attnlab.lab.realmodel.command import WEIGHTS_HELP
from attnlab.models import registry
from attnlab.models.files import ModelNotInstalled


def add_weights(p: argparse.ArgumentParser) -> None:
    """``--weights auto|q4_1|float32`` (the lab's words)."""
    p.add_argument("--weights", choices=registry.WEIGHTS, default="auto", help=WEIGHTS_HELP)


def open_model(name: str, weights: str = "auto"):
    """The shared model ``name`` on ``weights``; a missing package or a path the model has not is one line."""
    try:
        return registry.get_model(registry.check_name(name), weights)
    except ModelNotInstalled as error:
        raise ValueError(str(error)) from None
