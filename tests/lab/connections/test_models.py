"""The live labs' model choice (lab/connections/models.py): SmolLM2 first, then every found decoder.

With the registry pointed at a fake Hugging Face cache of tiny models (tests/hubkit.py), the KV cache,
speculative decoding and serving labs offer every model that writes, the RoPE lab every one whose
positions are rotary (not GPT-2's); what a lab asks of the model names the chosen one; a name not
offered (a path on the server, say) is refused at the control, in its label's words.
"""

from __future__ import annotations

import pytest

from attnlab.lab.connections import registry as labs
from attnlab.lab.connections.controls import ControlError, read, views
from attnlab.models import registry
from hubkit import GGUF, GPT2, QWEN2, SHORT

WRITERS = ("kv", "speculate", "serving")


@pytest.mark.parametrize("name", [*WRITERS, "rope"])
def test_the_choice_offers_smollm2_first_and_the_found_models(found_models, name):
    lab = labs.lab(name)
    values = read(lab.controls, {}, "query")
    assert values["model"] == "smollm2"
    [control] = [v for v in views(lab.controls, values) if v["name"] == "model"]
    offered = [o["value"] for o in control["options"]]
    assert offered[0] == "smollm2" and {QWEN2, SHORT, GGUF} <= set(offered)
    assert (GPT2 in offered) == (name != "rope")  # GPT-2's positions are learned: it has no RoPE
    assert "minilm" not in offered  # an encoder writes nothing
    assert control["options"][0]["text"] == registry.title("smollm2")


def test_what_a_lab_asks_names_the_chosen_model(found_models):
    given = {"live": "on", "model": QWEN2}
    asked = labs.lab("kv").ask(read(labs.lab("kv").controls, given, "query"))
    assert [(a.run, a.model) for a in asked] == [("shapes", QWEN2), ("kv", QWEN2)]
    spec = labs.lab("speculate")
    assert [a.model for a in spec.ask(read(spec.controls, {"model": GGUF}, "query"))] == [GGUF]
    rope = labs.lab("rope")
    assert [a.model for a in rope.ask(read(rope.controls, {"own": "on", "model": SHORT}, "query"))] == [SHORT]


def test_a_path_is_refused_at_the_control(found_models, families):
    folder = str(families.folder("qwen2"))
    with pytest.raises(ControlError) as err:
        read(labs.lab("serving").controls, {"model": folder}, "query")
    item = err.value.item()
    assert item["field"] == "model" and item["msg"].startswith("Model must be one of smollm2, ")
    with pytest.raises(ControlError):
        read(labs.lab("rope").controls, {"model": GPT2}, "query")
