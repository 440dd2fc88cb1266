"""The head census of a kept trace, from the scores computed once with it.

The worker that makes a trace also makes its model view (``lab/realmodel/modelview.kept_views``:
every head's scores and kind) and, from that view's scores, the census of each score
(:func:`census_bodies`, sent with the trace as kept JSON bodies, ``"census:<score>"``): a
census request is then answered from a kept body, without recomputing any head's weights.
A trace kept without them (made elsewhere) gets them from its model view on first request
(:func:`census_body`). :func:`evidence_view` opens one head: its weights, recomputed from the
kept q and k (one layer, cached), and what its score averages.
"""

from __future__ import annotations

import json

from attnlab.lab.circuits.census import SCORES, census_view, evidence
from attnlab.lab.realmodel.modelview import model_view_body


def _body(data: dict) -> str:
    return json.dumps(data, allow_nan=False, separators=(",", ":"))


def census_bodies(job_id: str, trace, model_view: str) -> dict[str, str]:
    """Every score's census as a kept JSON body (``"census:<score>"``), from the model view's JSON."""
    view = json.loads(model_view)
    return {
        f"census:{score}": _body(census_view(
            view["heads"], score=score, n_layer=view["n_layer"], n_head=view["n_head"],
            n_tokens=view["n_tokens"], model=trace.model, job=job_id,
        ))  # fmt: skip
        for score in SCORES
    }


def census_body(job, score: str) -> str:
    """The census of ``score`` for trace job ``job`` (a finished ``TraceJob``), kept with it once made."""
    key = f"census:{score}"
    body = job.views.get(key)
    if body is None:
        view = job.views.get("model-view")
        if view is None:
            view = job.views["model-view"] = model_view_body(job.id, job.trace)
        job.views.update(census_bodies(job.id, job.trace, view))
        body = job.views[key]
    return body


def evidence_view(job, layer: int, head: int, score: str) -> dict:
    """Where head (``layer``, ``head``)'s ``score`` comes from, on trace job ``job``'s text."""
    t = job.trace
    t.check(layer=layer, head=head)
    return evidence(t.head_weights(layer, head), t.allowed, t.ids, t.tokens, layer=layer, head=head,
                    kv_head=t.kv_head(head), score=score, model=t.model, job=job.id)  # fmt: skip
