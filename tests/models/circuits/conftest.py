"""Fixtures of the circuits tests: both SmolLM2 paths, the hooked oracles, and the Eiffel/Colosseum pair.

``decoder`` is parametrized over SmolLM2's two paths ("q4_1": the shared model on the
file's blocks; "float32": gguf's values from the weight cache). ``hf_decoder`` and
``hf_encoder`` are the hooked transformers peers (``hfpeer.py``) on the session's oracles.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))  # circuitkit and hfpeer, for the tests and the benchmark

from circuitkit import ANSWERS, CLEAN, CORRUPT  # noqa: E402


@pytest.fixture(scope="session")
def smollm2_f32(smollm2):
    """SmolLM2 on the float32 path (gguf's dequantized values, from the session's weight cache)."""
    return smollm2.with_dtype(np.float32)


@pytest.fixture(params=["q4_1", "float32"])
def decoder(request):
    """SmolLM2 on each path."""
    return request.getfixturevalue("smollm2" if request.param == "q4_1" else "smollm2_f32")


@pytest.fixture(scope="session")
def hf_decoder(hf_smollm2):
    from hfpeer import HFDecoder

    return HFDecoder(hf_smollm2[0])


@pytest.fixture(scope="session")
def hf_encoder(st_oracle):
    from hfpeer import HFEncoder

    return HFEncoder(st_oracle[0].auto_model)


@pytest.fixture(scope="session")
def eiffel():
    """``eiffel(model)``: the Eiffel/Colosseum pair on that model (answers " Paris", " Rome"), made once."""
    from attnlab.models.circuits.patching import pair

    made: dict = {}

    def make(model):
        key = id(model)
        if key not in made:
            right, other = (model.encode(a)[0] for a in ANSWERS)
            made[key] = pair(model, model.encode(CLEAN), model.encode(CORRUPT), answers=(right, other))
        return made[key]

    return make

