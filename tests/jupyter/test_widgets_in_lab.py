"""attnlab's notebook widgets in a real JupyterLab, driven in headless Chromium.

Each test writes a notebook, opens it in the session's JupyterLab server, runs
its cells on the venv's kernel and reads the widget's view in the output area.
The expected numbers are computed here, in the test process, by attnlab's engine
and lab code (for AttentionView: the very tensor the kernel's Hugging Face forward
pass handed the widget, which the kernel saves for the test): the widget must show
the kernel's numbers, never its own. At teardown each notebook checks that no request
left the machine and that no console error happened (``notebookpage.Recorder``).
"""

from __future__ import annotations

import ast
import re

import numpy as np
import pytest
from axe_playwright_python.sync_playwright import Axe
from labkit import plane_point
from playwright.sync_api import expect

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.explorer.words import explain

pytestmark = pytest.mark.browser

EXPLORER = "from attnlab.widgets import Explorer\n\nw = Explorer()\nw"


def engine(q):
    return trace_query(q, WORKED.keys, WORKED.values, labels=WORKED.labels)


def assert_explorer_shows(view, trace) -> None:
    """The caption, score table, summary, words and precise output equal the engine's strings."""
    expect(view.locator(".caption")).to_have_text(
        f"q = {fmt.vector(trace.q)} · Compare the query with each key."
    )
    for i in range(trace.n_sources):
        expect(view.locator(f'[data-field="score-{i}"]')).to_have_text(fmt.rounded(trace.scores[i]))
        expect(view.locator(f'[data-field="percent-{i}"]')).to_have_text(fmt.percents(trace.weights)[i])
    words = explain(trace)
    expect(view.locator('[data-field="summary"]')).to_have_text(words.summary)
    for sentence in (words.match, words.share, words.mix):
        expect(view.locator(".words")).to_contain_text(sentence)
    expect(view.locator('[data-field="precise-output"]')).to_have_text(
        "output=" + fmt.precise_vector(trace.output)
    )


def axe_violations(page, scope: str) -> list:
    """axe-core's violations inside ``scope`` (a CSS selector), as (id, impact, targets)."""
    results = Axe().run(page, context={"include": [[scope]]})
    return [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in results.response["violations"]
    ]


def worked_example_then_one_step_right(view):
    """The Explorer ``view`` shows the worked example; ArrowRight on q gives the engine's numbers at
    q = [2.1, 1.0]. Returns q's handle, focused."""
    expect(view.locator('[data-field="summary"]')).to_contain_text("Output o = [-0.004, 0.868].")
    assert_explorer_shows(view, engine(WORKED.q))
    handle = view.locator("svg .handle")
    handle.focus()
    handle.press("ArrowRight")
    assert_explorer_shows(view, engine([2.1, 1.0]))
    return handle


def test_explorer_shows_the_worked_example_and_arrow_keys_reach_w_q(notebook_factory):
    nb = notebook_factory("explorer_keys", [EXPLORER])
    nb.run_all()
    view = nb.output(0)
    handle = worked_example_then_one_step_right(view)
    handle.press("Shift+ArrowUp")
    assert_explorer_shows(view, engine([2.1, 2.0]))
    expect(handle).to_have_attribute("aria-label", re.compile(r"^Query q at \[2\.1, 2\]"))
    # The learner's keys reached the kernel: the next cell reads the new q.
    assert ast.literal_eval(nb.run_new_cell("print(w.q)")) == [2.1, 2.0]
    assert ast.literal_eval(nb.run_new_cell("print(list(w.trace.output))")) == list(engine([2.1, 2.0]).output)


def test_dragging_q_in_the_notebook_reaches_w_q_and_the_engines_numbers(notebook_factory):
    nb = notebook_factory("explorer_drag", [EXPLORER])
    nb.run_all()
    view = nb.output(0)
    assert_explorer_shows(view, engine(WORKED.q))
    plane = view.locator("svg.draggable")
    plane.scroll_into_view_if_needed()
    handle = view.locator("svg .handle").bounding_box()
    page = nb.page
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    page.mouse.move(*plane_point(plane, -1.5, 2.5), steps=8)
    page.mouse.up()
    # The kernel handles the widget's messages in order, before the next cell runs.
    q = ast.literal_eval(nb.run_new_cell("print(w.q)"))
    assert abs(q[0] + 1.5) < 0.2 and abs(q[1] - 2.5) < 0.2, q
    assert_explorer_shows(view, engine(q))


def test_setting_w_q_from_python_redraws_with_the_engines_numbers(notebook_factory):
    nb = notebook_factory("explorer_set_q", [EXPLORER])
    nb.run_all()
    view = nb.output(0)
    assert_explorer_shows(view, engine(WORKED.q))
    nb.run_new_cell("w.q = [0, 1]")
    assert_explorer_shows(view, engine([0.0, 1.0]))
    expect(view.locator('[data-field="summary"]')).to_contain_text("Output o = [0.868, -0.004].")
    expect(view.locator("svg .handle")).to_have_attribute("aria-label", re.compile(r"^Query q at \[0, 1\]"))
    assert axe_violations(nb.page, ".jp-OutputArea-output") == []


MINILM_FORWARD = """\
import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer
from transformers.utils import logging

from attnlab.models import files

logging.set_verbosity_error()
logging.disable_progress_bar()
folder = str(files.minilm_dir())
tokenizer = AutoTokenizer.from_pretrained(folder)
bert = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()  # eager returns the weights
batch = tokenizer("The cat sat on the mat.", return_tensors="pt")
with torch.no_grad():
    out = bert(**batch, output_attentions=True)
tokens = tokenizer.convert_ids_to_tokens(batch["input_ids"][0])
# The very tensor the widget is given, for the test to compare with what it shows.
np.save("minilm_attentions.npy", torch.stack([a[0] for a in out.attentions]).numpy())
print(len(out.attentions), tuple(out.attentions[0].shape), tokens)
"""
ATTENTION_VIEW = (
    "from attnlab.widgets import AttentionView\n\nview = AttentionView(out.attentions, tokens)\nview"
)
TOKENS = ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"]

# One cell of the heatmap as drawn: (query, key, weight attribute, hover title).
CELLS_JS = (
    "els => els.map(e => "
    "[+e.dataset.q, +e.dataset.k, e.dataset.weight, e.querySelector('title').textContent])"
)


def minilm_or_skip(*, oracle: bool) -> None:
    """Skip when MiniLM's package (or, for the ``oracle``, torch or transformers) is not installed."""
    from attnlab.models import files

    try:
        files.locate(files.MINILM)
    except files.ModelNotInstalled as error:
        pytest.skip(str(error))
    if oracle:
        pytest.importorskip("torch", reason="the oracle needs torch==2.13.0 (see scripts/test.sh)")
        pytest.importorskip("transformers", reason="the oracle needs transformers (see scripts/test.sh)")


def assert_head_shows(view, weights: np.ndarray, layer: int, head: int, focus: int) -> None:
    """Every heatmap cell and the focused query's row show the tensor's own values, exactly."""
    heatmap = view.locator("svg.rm-heatmap")
    expect(heatmap).to_have_attribute(
        "aria-label", f"Attention of layer {layer}, head {head}: rows are queries, columns are keys"
    )
    expect(view.locator(".rm-row h3")).to_contain_text(f"Query {focus} ({TOKENS[focus]})")
    n = len(TOKENS)
    cells = heatmap.locator("rect.rm-cell").evaluate_all(CELLS_JS)
    assert len(cells) == n * n
    for i, j, shown, title in cells:
        w = float(weights[layer, head, i, j])  # float32, widened exactly
        assert float(shown) == w, (i, j, shown, w)
        assert title.startswith(f"{TOKENS[i]} → {TOKENS[j]}: share {fmt.rounded(w, 2)} (exactly ")
        assert float(title.rsplit("(exactly ", 1)[1].rstrip(")")) == w
    precise = view.locator('.rm-row-table [data-field="precise"]')
    expect(precise).to_have_text([fmt.precise(float(w)) for w in weights[layer, head, focus]])


def test_attention_view_draws_a_real_hf_forward_pass_with_its_exact_numbers(notebook_factory):
    minilm_or_skip(oracle=True)
    nb = notebook_factory("attention_view", [MINILM_FORWARD, ATTENTION_VIEW])
    nb.run_all()
    assert nb.text_output(0).startswith("6 (1, 12, 9, 9) ")
    weights = np.load(nb.server.root / "minilm_attentions.npy")  # (layers, H, T, T), float32
    assert weights.shape == (6, 12, 9, 9) and weights.dtype == np.float32
    view = nb.output(1)
    expect(view.locator(".rm-token")).to_have_text(TOKENS)
    assert_head_shows(view, weights, layer=0, head=0, focus=0)

    # Pick layer 2's head 5 in the model view, then the query "sat" (hover).
    view.locator(".rm-heads").nth(2).locator('.rm-head-button[data-head="5"]').click()
    view.locator('.rm-token[data-index="3"]').hover()
    assert_head_shows(view, weights, layer=2, head=5, focus=3)
    assert nb.run_new_cell("print(view.layer, view.head, view.focus)") == "2 5 3"
    assert axe_violations(nb.page, ".jp-OutputArea-output") == []


def test_model_view_draws_our_engines_minilm_trace_run_in_the_kernel(notebook_factory):
    minilm_or_skip(oracle=False)
    from attnlab.models.registry import get_model

    text = "The cat sat on the mat."
    nb = notebook_factory(
        "model_view",
        [f"from attnlab.widgets import ModelView\n\nmv = ModelView(model='minilm', text={text!r})\nmv"],
    )
    nb.run_all()
    # The engine's trace, computed here in the test's process: bit for bit the kernel's
    # (the models hold BLAS to one thread; see tests/models/test_determinism.py).
    trace = get_model("minilm").trace(text, details=True)
    assert list(trace.tokens) == TOKENS
    view = nb.output(0)
    expect(view.locator(".rm-token")).to_have_text(TOKENS)
    weights = np.stack([trace.layer_weights(layer) for layer in range(trace.n_layer)])  # recomputed, exact
    assert_head_shows(view, weights, layer=0, head=0, focus=0)
    # Keyboard: the last layer's last head, then the last token (End on the token bar).
    view.locator(".rm-heads").nth(5).locator('.rm-head-button[data-head="11"]').click()
    view.locator('.rm-token[data-index="0"]').focus()
    nb.page.keyboard.press("End")
    assert_head_shows(view, weights, layer=5, head=11, focus=8)
    assert nb.run_new_cell("print(mv.layer, mv.head, mv.focus)") == "5 11 8"
    assert axe_violations(nb.page, ".jp-OutputArea-output") == []


# One number of the block walk as drawn: (its text, its full-precision attribute).
BLOCK_CELLS_JS = "els => els.map(e => [e.firstChild.textContent, e.dataset.precise])"


def assert_block_step_shows(view, page: dict, at: int) -> None:
    """The summary, the step's title and every number of its tensors equal ``block_page``'s strings."""
    steps = page["steps"]
    expect(view.locator(".block-summary")).to_have_text(page["summary"]["text"])
    assert steps[at]["heading"] == f"Step {at + 1} of {len(steps)} · {steps[at]['title']}"
    expect(view.locator(".block-step-title")).to_have_text(steps[at]["heading"])
    expected = [
        [shown, precise]
        for t in steps[at]["tensors"]
        for row_shown, row_precise in zip(t["display"], t["precise"])
        for shown, precise in zip(row_shown, row_precise)
    ]
    assert expected, f"step {at} has no numbers to compare"
    cells = view.locator(".block-tensors td.num")
    expect(cells).to_have_count(len(expected))
    assert cells.evaluate_all(BLOCK_CELLS_JS) == expected


def test_block_walks_the_labs_block_and_follows_python(notebook_factory):
    from attnlab.lab.block.page import block_page

    nb = notebook_factory("block", ["from attnlab.widgets import Block\n\nb = Block()\nb"])
    nb.run_all()
    view = nb.output(0)
    pre = block_page(norm="pre", positions="none", heads_on=(True, True))
    assert_block_step_shows(view, pre, 0)
    view.get_by_role("button", name="Next step").click()
    assert_block_step_shows(view, pre, 1)
    assert nb.run_new_cell("print(b.step)") == "1"
    nb.run_new_cell("b.norm = 'post'")
    post = block_page(norm="post", positions="none", heads_on=(True, True))
    assert post["summary"] != pre["summary"]
    assert_block_step_shows(view, post, 1)
    expect(view.locator("select").first).to_have_value("post")
    assert axe_violations(nb.page, ".jp-OutputArea-output") == []
