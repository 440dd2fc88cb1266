"""The Real model view's views of a kept trace, and token counting as the learner types.

Under ``/api/models`` beside ``jobs.py`` and ``bridge.py`` (the contract: docs/real-model-api.md):

- ``POST /{model}/tokens``: the count by the model's tokenizer alone (no model load);
- ``GET /probe``: the repeated-run probe text for a seed (``lab/realmodel/probe.py``);
- ``GET /jobs/{id}/heads/{layer}/{head}``: one head's weights, kind and legend;
- ``GET /jobs/{id}/model-view``: every head's thumbnail and kind (computed once per trace);
- ``GET /jobs/{id}/neuron/{layer}/{head}/{query}/{key}``: q, k, products, the ordered sum,
  scale, score, the row's softmax, the explorer's words and the plane of q and its top key;
- ``GET /jobs/{id}/next/{position}``: next-token probabilities with temperature, top-k, top-p;
- ``GET /jobs/{id}/journey/{index}``: one token's path through the blocks.

All but ``tokens`` answer from the trace kept in this process: no model work.
Large answers are serialised once with ``json`` (no NaN: ``allow_nan=False``).
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query
from fastapi.responses import Response
from pydantic import Field
from starlette.convertors import PathConvertor, register_url_convertor

from attnlab.engine.errors import FieldError
from attnlab.lab import limits
from attnlab.lab.fields import no_journey, no_next_tokens
from attnlab.lab.realmodel.journey import journey_view
from attnlab.lab.realmodel.modelview import head_view, model_view_body
from attnlab.lab.realmodel.neuron import neuron_view
from attnlab.lab.realmodel.nexttoken import MAX_TOKENS_SHOWN, trace_next
from attnlab.lab.realmodel.probe import MAX_SEED, N_WORDS, new_seed, repeated_run, words
from attnlab.lab.realmodel.status import token_count
from attnlab.models import registry
from attnlab.models.jobs.texts import count_text
from attnlab.web.realmodel import line
from attnlab.web.realmodel.line import ERRORS, Index, JobId
from attnlab.web.realmodel.schema import (
    HeadView,
    JourneyView,
    ModelView,
    NeuronView,
    NextView,
    ProbeOut,
    TokensOut,
)
from attnlab.web.schema import Strict

router = APIRouter(prefix="/api/models", tags=["models"])


class TokensIn(Strict):
    text: Annotated[str, Field(max_length=registry.DEFAULT_MAX_CHARS * 4)]


def _json(data: dict) -> Response:
    return Response(json.dumps(data, allow_nan=False, separators=(",", ":")), media_type="application/json")


class AnyName(PathConvertor):
    """A model's name in a path: slashes allowed (``org/name``), and any other character, a line break
    included (Starlette's ``path`` stops at one, and the URL then matched no route: a bare 404), so
    that a name no model has is refused at ``model`` in words."""

    regex = r"[\s\S]+"


register_url_convertor("anyname", AnyName())


def _conflict(field: str, msg: str) -> HTTPException:
    return HTTPException(
        status_code=409,
        detail=[{"loc": ["path", field], "field": field, "msg": msg, "type": "not_available"}],
    )


@router.post("/{model:anyname}/tokens", response_model=TokensOut, responses={422: ERRORS[422]})
def count_tokens(model: Annotated[str, Path(max_length=400)], body: TokensIn) -> TokensOut:
    """How many tokens ``text`` is for ``model``, counted by its tokenizer alone (the model is not loaded).

    ``model`` is a name ``GET /api/models`` lists (a found model's may hold slashes: ``org/name``)."""
    try:
        tokens = count_text(model, body.text)
    except FieldError as error:
        raise line.refused(error, where="path" if error.loc == ("model",) else "body") from None
    spec = registry.spec(model)
    return TokensOut(**token_count(model=model, tokens=tokens, cap=spec.max_tokens, title=spec.title))


@router.get("/probe", response_model=ProbeOut, responses={422: ERRORS[422]})
def probe(
    seed: Annotated[int | None, Query(ge=0, le=MAX_SEED)] = None,
    n_words: Annotated[int, Query(ge=2, le=len(words()))] = N_WORDS,
) -> ProbeOut:
    """The standard probe for induction heads: a random run of words written 3 times (a new seed if none)."""
    return ProbeOut(**repeated_run(new_seed() if seed is None else seed, n_words=n_words))


@router.get(
    "/jobs/{job_id}/heads/{layer}/{head}",
    response_model=None,
    responses={200: {"model": HeadView}, **ERRORS},
)
def job_head(job_id: JobId, layer: Index, head: Index, packed: bool = False) -> Response:
    """One head's weights (row = query token; ``null`` = blocked), their display strings, kind, legend.

    ``packed=true``: ``weights_f32`` (base64, little-endian float32, NaN = blocked) instead of
    ``weights``: the same numbers, as the page fetches them (decimal JSON of 65,536 floats
    costs the server tens of milliseconds).
    """
    job = line.done(job_id)
    return _json({"job": job.id, **line.checked(lambda: head_view(job.trace, layer, head, packed=packed))})


@router.get("/jobs/{job_id}/model-view", response_model=None, responses={200: {"model": ModelView}, **ERRORS})
def job_model_view(job_id: JobId) -> Response:
    """Every layer's and head's thumbnail, with its kind: computed with the trace, then kept."""
    job = line.done(job_id)
    body = job.views.get("model-view")  # worded once, from the numbers the worker sent with the trace
    if body is None:
        body = job.views["model-view"] = model_view_body(job.id, job.trace, job.views.get("overview"))
    return Response(body, media_type="application/json")


@router.get(
    "/jobs/{job_id}/neuron/{layer}/{head}/{query}/{key}",
    response_model=None,
    responses={200: {"model": NeuronView}, **ERRORS},
)
def job_neuron(job_id: JobId, layer: Index, head: Index, query: Index, key: Index) -> Response:
    """The q and k coordinates behind one score, their products and ordered sum, then the row's softmax."""
    job = line.done(job_id)
    return _json({"job": job.id, **line.checked(lambda: neuron_view(job.trace, layer, head, query, key))})


@router.get(
    "/jobs/{job_id}/next/{position}", response_model=None, responses={200: {"model": NextView}, **ERRORS}
)
def job_next(
    job_id: JobId,
    position: Index,
    temperature: Annotated[
        float, Query(ge=limits.TEMPERATURE_MIN, le=limits.TEMPERATURE_MAX, allow_inf_nan=False)
    ] = 1.0,
    top_k: Annotated[int, Query(ge=0, le=limits.TOP_K_MAX)] = 0,
    top_p: Annotated[float, Query(gt=0, le=limits.TOP_P_MAX, allow_inf_nan=False)] = 1.0,
    top: Annotated[int, Query(ge=1, le=MAX_TOKENS_SHOWN)] = 10,
) -> Response:
    """The next-token distribution after token ``position``, recomputed from the kept logits."""
    job = line.done(job_id)
    t = job.trace
    if t.logits is None:
        raise _conflict("model", no_next_tokens(registry.title(t.model)))
    view = line.checked(
        lambda: trace_next(t, position, temperature=temperature, top_k=top_k, top_p=top_p, top=top)
    )
    return _json({"job": job.id, **view})


@router.get(
    "/jobs/{job_id}/journey/{index}", response_model=None, responses={200: {"model": JourneyView}, **ERRORS}
)
def job_journey(job_id: JobId, index: Index) -> Response:
    """Token ``index``'s path through the blocks: residual norms, attention and MLP, norms, top MLP units."""
    job = line.done(job_id)
    if job.trace.journey is None:
        raise _conflict("job_id", no_journey())
    return _json({"job": job.id, **line.checked(lambda: journey_view(job.trace, index))})
