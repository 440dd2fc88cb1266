"""The circuits views as model-worker jobs (:class:`~.kinds.CircuitJob`): a text in, a view out.

Each function here is called in the worker as ``function(model, say, check, job=id,
**arguments)`` (``CircuitJob.work``): it reads the text as the model does
(``models/circuitviews/texts``), finds the text's run (or the two prompts' pair) among those
the worker keeps (:mod:`.kept`: run once, reused by the next view of the same text), and
returns the view as JSON-ready data; a ``Cache`` or ``Pair`` never crosses the pipe. A
patching sweep reports ``say("running", total)`` and ``say("progress", done)`` after each
patch and calls ``check()`` before each: there it makes way for other learners' jobs, and once
it is cancelled it raises :class:`~.kinds.Stopped` with its partial view.

The server names them by :data:`FUNCTIONS` (``Jobs.circuit(model, FUNCTIONS["lens"], ...)``).
"""

from __future__ import annotations

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits.patching import KINDS
from attnlab.lab.circuits.problems import lengths_differ, same_answer, unknown_choice
from attnlab.lab.realmodel.tokens import token_label
from attnlab.models.circuitviews.ablation import ablation_view
from attnlab.models.circuitviews.attribution import attribution_view
from attnlab.models.circuitviews.head import head_view
from attnlab.models.circuitviews.lens import lens_view
from attnlab.models.circuitviews.patching import patch_count, patching_view, sweep_layers
from attnlab.models.circuitviews.texts import answer_id, is_encoder, tokenize
from attnlab.models.jobs.kept import cache_of, pair_of
from attnlab.models.jobs.kinds import Stopped

FUNCTIONS = {name: f"attnlab.models.jobs.circuits:{name}"
             for name in ("ablation", "attribution", "lens", "head", "patching")}  # fmt: skip


def ablation(model, say, check, *, job: str, text: str, heads: tuple, how: str,
             layer: int | None) -> dict:  # fmt: skip
    ids, tokens = tokenize(model, text)
    say("running", 0)
    cache = cache_of(model, ids)
    return ablation_view(model, cache, list(heads), how=how, layer=layer, tokens=tokens, job=job)


def attribution(model, say, check, *, job: str, text: str, position: int, token: int | None) -> dict:
    ids, tokens = tokenize(model, text)
    say("running", 0)
    return attribution_view(model, cache_of(model, ids), position, token, tokens=tokens, job=job)


def lens(model, say, check, *, job: str, text: str, position: int, token: int | None) -> dict:
    ids, tokens = tokenize(model, text)
    say("running", 0)
    return lens_view(model, cache_of(model, ids), position, token, tokens=tokens, job=job)


def head(model, say, check, *, job: str, text: str, layer: int, head: int, position: int) -> dict:
    ids, tokens = tokenize(model, text)
    say("running", 0)
    return head_view(model, cache_of(model, ids), layer, head, position, tokens=tokens, job=job)


def patching(model, say, check, *, job: str, clean: str, corrupt: str, right: str | None,
             other: str | None, position: int, sweep: str, site: str, first_layer: int | None,
             last_layer: int | None, per_position: bool) -> dict:  # fmt: skip
    """One patching sweep of two prompts (``circuitviews.patching.patching_view``): progress, Cancel."""
    if sweep not in KINDS:
        raise FieldError(("sweep",), unknown_choice(sweep, KINDS))
    clean_ids, _ = tokenize(model, clean, field="clean")
    corrupt_ids, _ = tokenize(model, corrupt, field="corrupt")
    if len(clean_ids) != len(corrupt_ids):
        raise FieldError(("corrupt",), lengths_differ(len(clean_ids), len(corrupt_ids)))
    layers = sweep_layers(model, first_layer, last_layer)
    answers = texts = None
    if not is_encoder(model):
        answers = (answer_id(model, right, field="right"), answer_id(model, other, field="other"))
        if answers[0] == answers[1]:
            raise FieldError(("other",), same_answer(token_label(right)["label"]))
        texts = (right, other)
    p = pair_of(model, clean_ids, corrupt_ids, answers=answers, position=position)
    say("running", patch_count(model, p, sweep, layers, per_position))
    view = patching_view(
        model, p, sweep=sweep, site=site, layers=layers, per_position=per_position,
        progress=lambda done, total: say("progress", done), cancel=check, answers=texts, job=job,
    )  # fmt: skip
    if view["sweep"]["cancelled"]:
        raise Stopped(view)
    return view


patching.makes_way = True  # between two patches, another learner's job may run (models/jobs/work.py)
patching.stops = True  # cancelled, it stops before its next patch and keeps the partial sweep
