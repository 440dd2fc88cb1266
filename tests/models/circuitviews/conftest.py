"""The circuits views' shared run: SmolLM2 on the Eiffel prompt, once per session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def eiffel(smollm2):
    from attnlab.models.circuits.runs import run

    return run(smollm2, smollm2.encode("The Eiffel Tower is in the city of"))
