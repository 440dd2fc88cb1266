"""CensusView, LensView and PatchView: the kernel's answers are the page's, drawn by the page's modules.

Each widget's data is compared with what the page gets for the same input, made here the
page's way: the census as the server words it from the numbers the model worker sends with a
trace (``census_body`` of a job whose views hold the ``overview``, JSON), a head's evidence as its
route answers (``evidence_view``), and the lens and the patching sweep as the worker's circuits
jobs compute them (``models.jobs.circuits``) and the server words them (``lab.circuits.requests.view``).
A sweep's progress, its status line and its Cancel (the message the widget's button sends) are followed
patch by patch.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import traitlets

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits import requests
from attnlab.lab.circuits.census import census_body, evidence_view
from attnlab.lab.circuits.page import FILLS
from attnlab.lab.realmodel.probe import repeated_run
from attnlab.models.jobs import circuits as work
from attnlab.models.jobs.kinds import Stopped, trace_text
from attnlab.models.traces import overview
from attnlab.widgets import CensusView, LensView, PatchView
from attnlab.widgets.assets import module_graph

pytestmark = pytest.mark.models

CLEAN = "The Eiffel Tower is in the city of"
CORRUPT = "The Colosseum is in the city of"
ANSWERS = (" Paris", " Rome")


def quiet(*_) -> None:
    """A job's ``say`` that keeps nothing."""


def page_census(model, text: str, score: str) -> tuple[dict, object]:
    """The census the page reads for ``text`` (worded from the worker's numbers, no job id), and the trace."""
    trace = trace_text(model.name, text, model, quiet)
    job = SimpleNamespace(id=None, trace=trace, views={"overview": overview(trace)})
    return json.loads(census_body(job, score)), trace


def test_the_view_module_ships_the_circuits_pages_drawing_modules():
    names = [name for name, _ in module_graph(["widgets/circuits.js"])]
    assert names[-1] == "widgets/circuits.js"
    for page_module in ("circuits/census.js", "circuits/lens.js", "circuits/patching.js", "circuits/grid.js"):
        assert page_module in names


def test_census_on_the_probe_is_the_pages_census_and_a_pick_opens_the_pages_evidence(minilm):
    probe = repeated_run(7)
    view = CensusView("minilm", seed=7)
    assert view.text == probe["text"]
    assert view._probe == probe["note"] and view._probe["claims"]["seed"] == 7
    census, trace = page_census(minilm, probe["text"], "induction")
    assert view.census == census
    assert view.census["map"]["rows"] == [f"L{i}" for i in range(6)]
    assert view.census["map"]["columns"] == [f"H{j}" for j in range(12)]
    top = view.census["ranked"][0]
    assert view.census["summary"]["claims"]["top"][0] == [top["layer"], top["head"], top["value"]]
    assert view.evidence is None
    shown = ("census_title", "census_hint", "score_label", "evidence_hint")
    assert view._words == {k: FILLS[k] for k in shown}

    view.picked = [top["layer"], top["head"]]  # a click on the ranked list's first head
    job = SimpleNamespace(id=None, trace=trace, views={})
    assert view.evidence == evidence_view(job, top["layer"], top["head"], "induction")
    assert view.evidence["value"] == top["value"]  # the mean its rows average is the head's score

    view.score = "previous"  # the picker: a new census, and the open head's evidence for that score
    assert view.census == page_census(minilm, probe["text"], "previous")[0]
    assert view.evidence == evidence_view(job, top["layer"], top["head"], "previous")
    view.picked = []
    assert view.evidence is None


def test_census_of_a_text_and_its_refusals(minilm):
    text = "The cat sat on the mat. The cat sat on the mat."
    view = CensusView("minilm", text, score="duplicate")
    assert view.probe is None and view._probe == {}
    assert view.census == page_census(minilm, text, "duplicate")[0]
    with pytest.raises(FieldError) as info:
        view.score = "copying"
    assert info.value.loc == ("score",) and view.score == "duplicate"
    with pytest.raises(FieldError) as info:
        view.picked = [6, 0]  # MiniLM has layers 0..5
    assert info.value.loc == ("layer",) and view.picked == []
    with pytest.raises(ValueError, match="not both"):
        CensusView("minilm", text, seed=3)
    with pytest.raises(FieldError) as info:
        CensusView("minilm", "   ")
    assert info.value.loc == ("text",)


def test_the_probe_finds_smollm2s_induction_heads(smollm2):
    view = CensusView("smollm2", seed=7)
    assert view.census == page_census(smollm2, view.text, "induction")[0]
    assert [r["label"] for r in view.census["ranked"][:3]] == ["L18 H6", "L18 H7", "L17 H4"]
    assert view.census["ranked"][0]["kind"] == "induction"


def test_lens_is_the_pages_lens_and_the_picker_moves_it(smollm2):
    text = "The cat sat on the"
    view = LensView("smollm2", text)
    n = len(view.tokens)
    assert view.position == n - 1  # -1 kept from the start, as the page's picker lists it
    asked = {"job": None, "text": text, "token": None}
    assert view.lens == requests.view("lens", work.lens(smollm2, quiet, None, position=n - 1, **asked))
    assert view.lens["named"]["claims"]["first_top1"] == 29  # " cat" leads only after the last block
    assert [p["value"] for p in view._positions] == list(range(n))
    view.position = 2  # the widget's picker
    assert view.lens == requests.view("lens", work.lens(smollm2, quiet, None, position=2, **asked))
    with pytest.raises(FieldError) as info:
        view.position = n
    assert info.value.loc == ("position",) and view.position == 2
    with pytest.raises(FieldError) as info:
        LensView("minilm", text)
    assert info.value.loc == ("model",)


def page_patching(model, sweep: str, stop_after: int | None = None) -> dict:
    """The page's patching job on the pair: the worker's function, stopped after ``stop_after`` patches,
    its numbers worded as the server words them."""
    done = [0]

    def say(kind, value):
        if kind == "progress":
            done[0] = value

    stopped = (lambda: False) if stop_after is None else (lambda: done[0] >= stop_after)
    asked = {"clean": CLEAN, "corrupt": CORRUPT, "right": ANSWERS[0], "other": ANSWERS[1], "position": 8,
             "sweep": sweep, "site": "pre", "first_layer": None, "last_layer": None,
             "per_position": False}  # fmt: skip
    try:
        numbers = work.patching(model, say, stopped, job=None, **asked)
    except Stopped as stop:
        numbers = stop.result
    return requests.view("patching", numbers)


def test_a_sweep_runs_in_a_thread_with_its_progress_and_ends_as_the_pages(smollm2):
    class Followed(PatchView):
        seen: list = []

        @traitlets.observe("done")  # a class's observer: there before the sweep's thread starts
        def _seen(self, change):
            self.seen.append((change["new"], self.progress, self._status["stage_display"]))

    view = Followed("smollm2", CLEAN, CORRUPT, answers=ANSWERS, sweep="mlp")
    assert view.wait(timeout=600) == view.view == page_patching(smollm2, "mlp")
    assert view.status == "done" and view.total == 30 and view.done == 30 and view.progress == 1.0
    assert view._status["stage_display"] == "Done: 30 patches."
    assert Followed.seen == [(i, i / 30, f"Patching: {i} of 30 patches done…") for i in range(1, 31)]
    assert view._words == {k: FILLS[k] for k in ("patching_title", "patching_hint", "patch_cancel")}


def test_the_cancel_button_stops_the_sweep_with_the_pages_partial_answer(smollm2):
    class CancelledAtTwo(PatchView):
        lines: list = []

        @traitlets.observe("done")
        def _cancel_at_two(self, change):
            self.lines.append(self._status["stage_display"])
            if change["new"] == 2:
                self._handle_custom_msg({"event": "cancel"}, [])  # what the widget's Cancel button sends
                self.lines.append(self._status["stage_display"])

    view = CancelledAtTwo("smollm2", CLEAN, CORRUPT, answers=ANSWERS, sweep="heads")
    partial = view.wait(timeout=600)
    assert view.status == "cancelled" and view.cancel_asked and view.done == 2 and view.total == 270
    assert partial == page_patching(smollm2, "heads", stop_after=2)
    assert partial["sweep"]["cancelled"] and partial["sweep"]["done"] == 2
    assert CancelledAtTwo.lines == [
        "Patching: 1 of 270 patches done…",
        "Patching: 2 of 270 patches done…",
        "Cancelling: stopping after the patch under way (2 of 270 done)…",
    ]
    assert view._status["stage_display"] == "Cancelled after 2 of 270 patches: the partial result is shown."
    assert view.progress == 2 / 270
    view.cancel()  # after the end: nothing changes
    assert view.status == "cancelled"


def test_a_pair_is_checked_before_any_sweep_starts(smollm2):
    with pytest.raises(FieldError) as info:
        PatchView("smollm2", CLEAN, "The Colosseum in Rome is in the city of", answers=ANSWERS)
    assert info.value.loc == ("corrupt",)
    with pytest.raises(FieldError) as info:
        PatchView("smollm2", CLEAN, CORRUPT, answers=(" Paris", " Paris"))
    assert info.value.loc == ("other",)
    with pytest.raises(FieldError) as info:
        PatchView("smollm2", CLEAN, CORRUPT, answers=(" Parisian city", " Rome"))
    assert info.value.loc == ("right",)
    with pytest.raises(FieldError) as info:
        PatchView("smollm2", CLEAN, CORRUPT, answers=ANSWERS, sweep="attention")
    assert info.value.loc == ("sweep",)
    with pytest.raises(ValueError, match="two answer tokens"):
        PatchView("smollm2", CLEAN, CORRUPT)
