"""The arguments every command that runs a model shares: which model, what its products run on, where to look.

``--model`` takes a model's name (a shipped one, or one ``attnlab models`` lists) or a path on this
computer: a folder with ``config.json``, ``*.safetensors`` and ``tokenizer.json``, or a ``.gguf``
file. :func:`prepare` (``attnlab.cli.main`` calls it before any command) makes a path a registry
entry, so every command, the circuits ones too, reads ``args.model`` as a registry name.
``--models-dir DIR`` adds a folder to the places discovery searches besides the Hugging Face cache.
"""

from __future__ import annotations

import argparse

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel.command import WEIGHTS_HELP
from attnlab.lab.realmodel.sources import MODELS_DIR_HELP
from attnlab.models import registry
from attnlab.models.files import ModelNotInstalled


def add_weights(p: argparse.ArgumentParser) -> None:
    """The shared model arguments: ``--weights auto|q4_1|float32`` and ``--models-dir DIR`` (the lab's
    words)."""
    p.add_argument("--weights", choices=registry.WEIGHTS, default="auto", help=WEIGHTS_HELP)
    add_models_dir(p)


def add_models_dir(p: argparse.ArgumentParser) -> None:
    """``--models-dir DIR``: a folder of models to search besides the Hugging Face cache."""
    p.add_argument("--models-dir", metavar="DIR", default=None, help=MODELS_DIR_HELP)


def prepare(args: argparse.Namespace) -> None:
    """Before a command runs: search ``--models-dir`` too, and make a ``--model`` that is a path on disk a
    registry entry (``args.model`` becomes its name). A path that is no model is refused in one line."""
    folder = getattr(args, "models_dir", None)
    if folder is not None:
        registry.use_models_dir(folder)
    model = getattr(args, "model", None)
    if isinstance(model, str) and registry.looks_like_a_path(model) and model not in registry.SPECS:
        try:
            args.model = registry.resolve(model)
        except FieldError as error:  # a refusal at model: its problem, said after the flag
            raise ValueError(f"--model {error.problem}") from None
        except ValueError as error:  # opening's typed refusals: their line starts with the path
            raise ValueError(f"--model {error}") from None


def open_model(name: str, weights: str = "auto"):
    """The shared model ``name`` (a name or a path) on ``weights``; a missing package or a path the model
    has not is one line."""
    try:
        return registry.get_model(registry.resolve(name), weights)
    except ModelNotInstalled as error:
        raise ValueError(str(error)) from None
