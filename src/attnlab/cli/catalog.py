"""The ``attnlab models`` command: the models attnlab can open here, and the files it skipped, with why.

It lists the shipped models and those found on this computer (the Hugging Face cache, and the
folder ``--models-dir`` names): each one's name (what ``--model`` takes), family, parameters,
dtype or quantisation and whether it has a chat template; then each file that looks like a
model but cannot be offered, and why; then where it looked. Headers only: nothing is loaded or
downloaded. ``--json`` prints the same as one JSON object. Every line is the lab's
(:mod:`attnlab.lab.realmodel.catalog`, :mod:`attnlab.lab.realmodel.sources`).
"""

from __future__ import annotations

import argparse
import json

from attnlab.cli.modelargs import add_models_dir
from attnlab.lab.realmodel import catalog
from attnlab.lab.realmodel.sources import MODELS_HELP


def add_models_arguments(p: argparse.ArgumentParser) -> None:
    add_models_dir(p)
    p.add_argument("--json", action="store_true", help=MODELS_HELP["--json"])


def run_models(args: argparse.Namespace) -> int:
    found = catalog.lines()
    if args.json:
        keys = ("name", "title", "family", "architecture", "origin", "parameters", "dtype", "chat",
                "installed")  # fmt: skip
        models = [{k: m.get(k) for k in keys} | {"path": m.get("path_on_disk"), "text": m["line"]["text"]}
                  for m in found["models"]]  # fmt: skip
        skipped = [{"name": s["claims"]["name"], "kind": s["claims"]["kind"], "path": s["path"],
                    "why": s["text"]} for s in found["skipped"]]  # fmt: skip
        out = {"models": models, "skipped": skipped, "searched": found["searched"]["claims"]["places"]}
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    print(found["heading"])
    for m in found["models"]:
        print("  " + m["line"]["text"])
    for s in found["skipped"]:
        print("  " + s["text"])
    print(found["searched"]["text"])
    return 0
