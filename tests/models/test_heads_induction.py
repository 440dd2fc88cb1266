"""Head kinds on real models: SmolLM2's induction heads on the repeated-run probe, MiniLM's scores."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.kinds import THRESHOLDS, layer_profiles
from attnlab.lab.realmodel.modelview import model_view
from attnlab.lab.realmodel.probe import repeated_run

pytestmark = pytest.mark.models

SEED = 0  # the probe's text: 16 different words, written 3 times


@pytest.mark.parametrize("seed", [SEED, 1])
def test_smollm2s_strongest_layer_17_and_18_heads_on_the_probe_read_induction(smollm2, seed):
    trace = smollm2.trace(repeated_run(seed)["text"])
    heads = [(layer, h, p) for layer in (17, 18) for h, p in enumerate(layer_profiles(trace, layer))]
    top = sorted(heads, key=lambda x: -x[2]["induction"])[:3]
    assert (top[0][0], top[0][1]) == (18, 6)  # the head: about 90% on the token after
    for layer, h, p in top:
        assert p["induction"] >= 0.6, (layer, h, p)
        assert p["kind"] == "induction", (layer, h, p)
        assert p["sentence"]["claims"] == {"kind": "induction", "score": p["induction"], "threshold": 0.4}
    # the model view says it too: the label and the induction score on the thumbnail
    view = model_view(trace)
    thumb = view["heads"][18 * 9 + 6]
    assert thumb["kind"] == "induction" and thumb["label"] == "L18 H6 · induction"
    assert f"induction {thumb['induction_display']}" in thumb["title"]


def test_minilm_gets_every_score_and_a_kind_for_every_head(minilm):
    text = repeated_run(SEED, n_words=8)["text"]
    trace = minilm.trace(text)
    for layer in range(trace.n_layer):
        for p in layer_profiles(trace, layer):
            for key in ("previous", "first", "induction", "duplicate", "self", "breadth"):
                assert 0.0 <= p[key] <= 1.0 + 1e-9, (layer, key, p[key])
            assert p["kind"] in THRESHOLDS or p["kind"] == "focused"
    # [CLS] and [SEP] appear once: the text without repeats has no induction score
    alone = minilm.trace("The cat sat on a mat.")
    p = layer_profiles(alone, 0)[0]
    assert p["induction"] is None and p["duplicate"] is None
    assert np.isfinite(p["breadth"])


def test_attnlab_heads_prints_each_heads_kind_with_its_score(smollm2, capsys):
    from attnlab.cli import main

    text = repeated_run(SEED)["text"]
    assert main(["heads", text, "--model", "smollm2", "--layer", "18"]) == 0
    lines = capsys.readouterr().out.splitlines()
    p = layer_profiles(smollm2.trace(text), 18)[6]
    row = lines[2 + 6].split()
    assert row[:3] == ["6", "induction", fmt.percent(p["induction"])]
    assert row[5] == fmt.percent(p["induction"])  # the induction column
    assert main(["heads", text, "--model", "smollm2", "--layer", "18", "--head", "6"]) == 0
    heading = capsys.readouterr().out.splitlines()[1]
    assert heading.startswith(
        f"head 6 of 0..8 (shares KV head 2): an induction head: tokens that repeat an "
        f"earlier token put {fmt.percent(p['induction'])} of their attention"
    )
