"""The census kept with a trace: made once from the model view's scores, answered from the kept body;
a head's evidence from its recomputed weights (the toy model: no weights to load)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from attnlab.lab.circuits.census import SCORES, census_view
from attnlab.lab.realmodel.modelview import model_view, model_view_body
from attnlab.models import toy
from attnlab.models.circuitviews.census import census_bodies, census_body, evidence_view


def test_the_census_is_made_from_the_model_views_scores_and_kept():
    trace = toy.ToyModel("smollm2").trace("a b c a b c a b", details=True)
    bodies = census_bodies("j1", trace, model_view_body("j1", trace))
    assert set(bodies) == {f"census:{s}" for s in SCORES}
    view = model_view(trace)
    for score in SCORES:
        expected = census_view(view["heads"], score=score, n_layer=2, n_head=2, n_tokens=8, model="smollm2",
                               job="j1")  # fmt: skip
        assert json.loads(bodies[f"census:{score}"]) == json.loads(json.dumps(expected))
    job = SimpleNamespace(id="j2", trace=trace, views={})
    body = census_body(job, "previous")  # a trace kept without them: made from its model view, then kept
    assert set(job.views) == {"model-view", *bodies}
    assert census_body(job, "previous") is body
    assert json.loads(body)["job"] == "j2"


def test_a_heads_evidence_reads_its_weights():
    trace = toy.ToyModel("smollm2").trace("a b c a b c", details=True)
    job = SimpleNamespace(id="j", trace=trace, views={})
    e = evidence_view(job, 1, 0, "induction")
    assert (e["layer"], e["head"], e["kv_head"], e["job"]) == (1, 0, 0, "j")
    w = trace.head_weights(1, 0)
    assert e["queries"][3]["value"] == float(w[3, 1])  # "a" again at 3: the token after its first "a" is 1
