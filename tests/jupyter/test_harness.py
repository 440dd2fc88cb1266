"""The harness itself: a real JupyterLab runs the venv's kernel and syncs an anywidget both ways.

A minimal anywidget counter (its own ES module string, nothing of attnlab) proves
the pieces the widget tests stand on: the notebook opens and runs, a widget view
renders in the output area, a click in the browser reaches the kernel's trait, a
trait set from Python redraws the view, and nothing leaves the machine.
"""

from __future__ import annotations

import sys

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

COUNTER = '''
import anywidget
import traitlets


class Counter(anywidget.AnyWidget):
    _esm = """
    function render({ model, el }) {
      const button = document.createElement("button");
      button.className = "harness-counter";
      const draw = () => { button.textContent = `count is ${model.get("value")}`; };
      button.addEventListener("click", () => {
        model.set("value", model.get("value") + 1);
        model.save_changes();
      });
      model.on("change:value", draw);
      draw();
      el.appendChild(button);
    }
    export default { render };
    """
    value = traitlets.Int(0).tag(sync=True)


counter = Counter()
counter
'''
# An image on a host that does not exist (.invalid is reserved): the harness must
# catch the request and abort it before it leaves.
PROBE = "http://example.invalid/probe.png"
FOREIGN = f'from IPython.display import HTML\n\nHTML(\'<img alt="probe" src="{PROBE}">\')'


def test_a_counter_widget_syncs_both_ways_on_the_venvs_kernel(notebook_factory):
    nb = notebook_factory("harness", ["import sys\nprint(sys.executable)", COUNTER])
    nb.run_all()
    assert nb.text_output(0) == sys.executable  # the kernel is this very venv's Python

    button = nb.output(1).locator("button.harness-counter")
    expect(button).to_have_text("count is 0")
    button.click()
    expect(button).to_have_text("count is 1")
    button.click()
    expect(button).to_have_text("count is 2")
    # the clicks reached the kernel: the next cell reads the trait
    assert nb.run_new_cell("print(counter.value)") == "2"

    # a trait set from Python redraws the view
    nb.run_new_cell("counter.value = 41")
    expect(button).to_have_text("count is 41")
    # a cell that writes to stderr, or fails, fails the test, with what it said
    with pytest.raises(AssertionError, match="careful"):
        nb.run_new_cell("print('careful', file=sys.stderr)")
    with pytest.raises(AssertionError, match="ZeroDivisionError"):
        nb.run_new_cell("counter.value / 0")


def test_a_request_for_another_host_is_aborted_and_listed(notebook_factory):
    nb = notebook_factory("harness_probe", [FOREIGN])
    with nb.page.expect_event("requestfailed", predicate=lambda r: r.url == PROBE):
        nb.run_all()
    expect(nb.output(0).locator('img[alt="probe"]')).to_have_count(1)
    assert nb.recorder.outside() == [PROBE]
    assert set(nb.recorder.foreign) == {PROBE}  # the route aborted it (each try): it never left
    # Caught as it should be: excuse it (and the browser's "failed to load" line)
    # so that the fixture's own check at teardown passes.
    nb.recorder.excuse(PROBE)
    nb.recorder.allow(r"^Failed to load resource: net::ERR_FAILED$")
