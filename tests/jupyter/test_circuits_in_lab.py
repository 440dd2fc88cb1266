"""CensusView and PatchView in a real JupyterLab, driven in headless Chromium.

One notebook, one kernel: MiniLM's census on the probe (seed 7) draws the layers × heads map and
the ranked heads with the words the lab answers here, in the test's process, for the same text;
a click on the first head opens its evidence and reaches ``cv.picked``. Then a SmolLM2 head
sweep runs in the kernel's thread: its progress reaches the page while the sweep runs, and the
widget's Cancel stops it. The sweep is held after its first patch until Cancel is asked (a
subclass in the notebook), so the test waits on events, never on the sweep's speed.
"""

from __future__ import annotations

import ast

import pytest
from playwright.sync_api import expect
from test_widgets_in_lab import axe_violations

from attnlab.lab.circuits.census import census_view
from attnlab.lab.realmodel.modelview import model_view
from attnlab.lab.realmodel.probe import repeated_run
from attnlab.models import files, registry
from attnlab.models.jobs.kinds import trace_text

pytestmark = [pytest.mark.browser, pytest.mark.models]

CENSUS = "from attnlab.widgets import CensusView\n\ncv = CensusView('minilm', seed=7)\ncv"
PATCH = """import traitlets
from attnlab.widgets import PatchView


class Held(PatchView):
    def _progressed(self, done, total):
        super()._progressed(done, total)  # the view is told first
        if done == 1:
            self._cancel.wait(120)  # then the sweep waits for Cancel


pv = Held("smollm2", "The Eiffel Tower is in the city of", "The Colosseum is in the city of",
          answers=(" Paris", " Rome"), sweep="heads")
pv"""


def test_census_draws_the_labs_heads_and_a_sweep_shows_progress_and_cancels(notebook_factory):
    for shipped in (files.MINILM, files.SMOLLM2):
        try:
            files.locate(shipped)
        except files.ModelNotInstalled as error:
            pytest.skip(str(error))
    text = repeated_run(7)["text"]
    trace = trace_text("minilm", text, registry.get_model("minilm"),
                       lambda *_: None)  # fmt: skip
    census = census_view(model_view(trace)["heads"], score="induction", n_layer=6, n_head=12,
                         n_tokens=len(trace.tokens), model="minilm")  # fmt: skip

    nb = notebook_factory("circuits", [CENSUS, PATCH])
    nb.run_all()
    view = nb.output(0)
    expect(view.locator(".ci-said").nth(1)).to_have_text(census["summary"]["text"])
    axis = view.locator(".ci-grid .ci-axis")
    expect(axis).to_have_text([*(f"L{i}" for i in range(6)), *(f"H{j}" for j in range(12))])
    ranked = view.locator(".ci-ranked button")
    expect(ranked).to_have_count(len(census["ranked"]))
    expect(ranked.locator("span:first-child")).to_have_text([r["label"] for r in census["ranked"]])
    first = census["ranked"][0]
    ranked.first.click()
    evidence = view.locator(".ci-evidence")
    expect(evidence).to_have_attribute("data-head", f"{first['layer']}/{first['head']}")
    expect(evidence.locator("h3")).to_have_text(f"Layer {first['layer']}, head {first['head']}: where its "
                                                "induction score comes from")  # fmt: skip
    assert ast.literal_eval(nb.run_new_cell("print(cv.picked)")) == [first["layer"], first["head"]]

    sweep = nb.output(1)
    status = sweep.get_by_role("status")
    expect(status).to_have_text("Patching: 1 of 270 patches done…")
    assert sweep.locator("progress").evaluate("p => p.value") == pytest.approx(1 / 270)
    sweep.get_by_role("button", name="Cancel").click()
    expect(status).to_have_text("Cancelled after 1 of 270 patches: the partial result is shown.")
    out = sweep.locator(".ci-out")
    expect(out).to_have_attribute("data-cancelled", "true")
    expect(out).to_have_attribute("data-done", "1")
    expect(sweep.get_by_role("button", name="Cancel")).to_be_disabled()
    assert nb.run_new_cell("print(pv.status, pv.done, pv.view['sweep']['done'])") == "cancelled 1 1"
    assert axe_violations(nb.page, ".jp-OutputArea-output") == []
