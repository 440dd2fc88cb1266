"""attnlab's notebook widgets in Notebook 7's own UI (``jupyter notebook``), driven in headless Chromium.

One notebook, one kernel, to keep the added time small: the Explorer (the worked
example's 0.868; an arrow key on q reaches ``w.q`` in the next cell) and an
AttentionView of a causal NumPy array (every allowed cell's exact number, every
blocked cell drawn and read as blocked). The expected numbers are computed here by
attnlab's engine, or read from the very array the kernel drew (it saves it for the
test). At teardown: no request left the machine, no console error (Notebook 7's own
load-time error is named in ``notebook7page.NOTEBOOK7_NOISE``).
"""

from __future__ import annotations

import ast

import numpy as np
import pytest
from playwright.sync_api import expect
from test_widgets_in_lab import EXPLORER, axe_violations, worked_example_then_one_step_right

from attnlab.lab import numbers as fmt

pytestmark = pytest.mark.browser

TOKENS = ["The", "cat", "sat", "on", "mats"]

CAUSAL_VIEW = f"""import numpy as np
from attnlab.widgets import AttentionView

rng = np.random.default_rng(7)
x = rng.normal(size=(2, 5, 5))  # (H, L, S): one layer, two heads
ok = np.tril(np.ones((5, 5), dtype=bool))  # a causal model: key <= query
e = np.where(ok, np.exp(x - x.max(axis=-1, keepdims=True)), 0.0)
weights = e / e.sum(axis=-1, keepdims=True)
np.save("causal.npy", weights)
view = AttentionView(weights, {TOKENS!r}, causal=True)
view"""


def test_explorer_and_a_causal_attention_view_in_notebook_7(notebook7_factory, jupyter_notebook):
    nb = notebook7_factory("notebook7", [EXPLORER, CAUSAL_VIEW])
    nb.run_all()

    # Explorer: the worked example, then an arrow key on q, read back from the kernel
    worked_example_then_one_step_right(nb.output(0))

    # AttentionView: head 0 of the array the kernel drew, cell by cell
    weights = np.load(jupyter_notebook.root / "causal.npy")
    heads = nb.output(1)
    cells = heads.locator(".rm-heatmap rect.rm-cell[data-q]")
    expect(cells).to_have_count(25)
    for i in range(5):
        for j in range(5):
            cell = heads.locator(f'.rm-heatmap rect.rm-cell[data-q="{i}"][data-k="{j}"]')
            if j <= i:
                expect(cell).not_to_have_class("rm-cell is-blocked")
                assert float(cell.get_attribute("data-weight")) == weights[0, i, j]
                expect(cell.locator("title")).to_contain_text(f"share {fmt.rounded(weights[0, i, j], 2)}")
            else:
                expect(cell).to_have_class("rm-cell is-blocked")
                expect(cell.locator("title")).to_have_text(f"{TOKENS[i]} may not see {TOKENS[j]}")
    # the focused query (0) sees only itself: every later key reads "blocked"
    rows = heads.locator(".rm-row-table tbody tr")
    expect(rows).to_have_count(5)
    expect(rows.nth(0).locator("td").first).to_have_text(fmt.percent(1.0))
    for j in range(1, 5):
        expect(rows.nth(j).locator("td").first).to_have_text("blocked")
    expect(heads.locator(".rm-legend")).to_contain_text("blocked")
    # an arrow key on the token bar (a Notebook 7 command-mode key too) moves the focused query
    heads.locator('.rm-token[data-index="0"]').focus()
    nb.page.keyboard.press("ArrowRight")
    expect(rows.nth(1).locator("td").first).to_have_text(fmt.percents(weights[0, 1, :2].tolist())[1])
    expect(rows.nth(2).locator("td").first).to_have_text("blocked")

    # the learner's keys reached the kernel
    assert ast.literal_eval(nb.run_new_cell("print((w.q, view.focus))")) == ([2.1, 1.0], 1)
    assert axe_violations(nb.page, ".jp-OutputArea-output") == []
