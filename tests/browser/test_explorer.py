"""The explorer in headless Chromium against the real server.

The expected numbers come from attnlab's engine run here in the test on the
query the page reports, formatted with attnlab.lab.numbers: the page must show
exactly the engine's numbers, never its own.
"""

from __future__ import annotations

import re
import subprocess
import sys

import httpx
import pytest
from playwright.sync_api import expect

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.explorer.words import explain

pytestmark = pytest.mark.browser


def engine(q, values=WORKED.values):
    return trace_query(q, WORKED.keys, values, labels=WORKED.labels)


def assert_page_shows(lab, trace):
    """The score table, summary, words and caption equal the engine's strings."""
    page = lab.page
    lab.wait_for_query(fmt.vector(trace.q))
    shown = fmt.percents(trace.weights)  # the shares as one set, adding up to 100
    for i in range(trace.n_sources):
        expect(page.locator(f'#score-table [data-field="score-{i}"]')).to_have_text(
            fmt.rounded(trace.scores[i])
        )
        expect(page.locator(f'#score-table [data-field="percent-{i}"]')).to_have_text(shown[i])
    words = explain(trace)
    expect(page.locator("#summary")).to_have_text(words.summary)
    expect(page.locator("#words-match")).to_have_text(words.match)
    expect(page.locator("#words-share")).to_have_text(words.share)
    expect(page.locator("#words-mix")).to_have_text(words.mix)


def test_first_render_is_the_worked_example(lab):
    assert_page_shows(lab, engine(WORKED.q))
    expect(lab.page.locator("#summary")).to_have_text(
        "q lines up most with B's key (score 1.414), so B takes 58% of the attention; "
        "C gets 28% and A gets 14%. Output o = [-0.004, 0.868]."
    )
    expect(lab.page.locator("#row-label")).to_have_text("Row 0 (A) · unmasked projection.")


def test_drag_q_with_the_mouse_shows_the_engines_numbers(lab):
    lab.drag_to(-1.5, 2.5)
    q = lab.precise_q()
    assert q != [2.0, 1.0]
    assert abs(q[0] + 1.5) < 0.2 and abs(q[1] - 2.5) < 0.2
    trace = engine(q)
    assert_page_shows(lab, trace)
    expect(lab.page.locator('[data-field="precise-output"]')).to_have_text(
        "output=" + fmt.precise_vector(trace.output)
    )


def test_arrow_keys_move_q_with_shift_for_bigger_steps(lab):
    handle = lab.page.locator("#match-plot .handle")
    handle.focus()
    handle.press("ArrowRight")
    lab.wait_for_query("[2.1, 1]")
    assert_page_shows(lab, engine([2.1, 1.0]))
    handle.press("Shift+ArrowUp")
    lab.wait_for_query("[2.1, 2]")
    handle.press("ArrowLeft")
    handle.press("ArrowDown")
    lab.wait_for_query("[2, 1.9]")
    assert lab.precise_q() == [2.0, 1.9]
    assert_page_shows(lab, engine([2.0, 1.9]))
    expect(handle).to_have_attribute("aria-label", re.compile(r"^Query q at \[2, 1\.9\]"))


def test_dragging_far_along_b_meets_the_challenge(lab):
    page = lab.page
    challenge = page.locator("#challenge")
    expect(challenge).not_to_have_class(re.compile(r"\bmet\b"))
    expect(page.locator("#challenge-badge")).to_be_hidden()
    lab.drag_to(3.8, -0.3)
    q = lab.precise_q()
    trace = engine(q)
    assert trace.weights[1] > 0.9
    expect(challenge).to_have_class(re.compile(r"\bmet\b"))
    expect(page.locator("#challenge-badge")).to_be_visible()
    expect(page.locator("#challenge-badge")).to_have_text("✓ Challenge complete")
    expect(page.locator("#challenge-status")).to_have_text(
        f"Done: B takes {fmt.percents(trace.weights)[1]} of the attention, more than 90%."
    )


def test_copied_python_prints_the_numbers_on_the_page(lab, tmp_path):
    page = lab.page
    lab.drag_to(-2.2, -0.7)
    q = lab.precise_q()
    lab.open("python")
    page.locator("#copy-python").click()
    expect(page.locator("#python-status")).to_have_text("Copied the program to the clipboard.")
    program = page.evaluate("() => navigator.clipboard.readText()")
    assert program == page.locator("#python-code").inner_text()
    script = tmp_path / "copied.py"
    script.write_text(program, encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    # The rounded numbers in the page's score table, as the program prints them.
    trace = engine(q)
    for i, label in enumerate(WORKED.labels):
        shown_score = page.locator(f'#score-table [data-field="score-{i}"]').inner_text()
        line = next(line for line in out if line.startswith(f"{label} "))
        assert line.split()[2] == shown_score
        assert line.split()[1] == fmt.rounded(trace.dots[i])
    shown_output = re.search(r"Output o = (\[.*\])\.$", page.locator("#summary").inner_text())[1]
    assert f"output {shown_output}" in out
    # The full-precision numbers the page shows are the program's, character for character.
    precise_output = page.locator('[data-field="precise-output"]').inner_text()
    assert precise_output in out
    m_z = page.locator("#precise-list li").nth(4).inner_text()
    assert m_z.startswith("m=") and m_z in out


def test_comparison_borders_appear_after_a_change_and_clear_after_reset(lab):
    page = lab.page
    lab.open("every-number")
    changed = page.locator("#every-number .cmp-changed")
    same = page.locator("#every-number .cmp-same")
    expect(page.locator("#comparison")).to_have_text(
        "Compared with q = [2, 1]: Scores same; shares same; output same."
    )
    assert changed.count() == 0 and same.count() == 0
    assert page.locator("#match-plot .ring").count() == 0
    handle = page.locator("#match-plot .handle")
    handle.focus()
    handle.press("ArrowRight")
    lab.wait_for_query("[2.1, 1]")
    expect(page.locator("#comparison")).to_have_text(
        "Compared with q = [2, 1]: Scores changed; shares changed; output changed."
    )
    # k_C = [0, 1] ignores q's x: C's dot and score stay; m (B's score) changes.
    expect(page.locator('[data-field="card-dot-2"]')).to_have_class(re.compile("cmp-same"))
    expect(page.locator('[data-field="card-score-2"]')).to_have_class(re.compile("cmp-same"))
    expect(page.locator('[data-field="m"]')).to_have_class(re.compile("cmp-changed"))
    # to_have_css retries: a redraw may replace the element between lookup and reading.
    m_box = page.locator('[data-field="m"]')
    expect(m_box).to_have_css("border-top-style", "solid")
    expect(m_box).to_have_css("border-top-color", "rgb(168, 79, 6)")  # amber
    dot_box = page.locator('[data-field="card-dot-2"]')
    expect(dot_box).to_have_css("border-top-style", "dashed")
    expect(dot_box).to_have_css("border-top-color", "rgb(15, 107, 99)")  # teal
    # The reference q = [2, 1] and its output as hollow rings, its shares as dashed lines.
    expect(page.locator("#match-plot .ring.amber")).to_have_count(1)
    expect(page.locator("#mix-plot .ring.teal")).to_have_count(1)
    expect(page.locator("#strip .ref-line")).to_have_count(2)
    page.locator("#reset").click()
    lab.wait_for_query("[2, 1]")
    expect(changed).to_have_count(0)
    expect(same).to_have_count(0)
    expect(page.locator("#match-plot .ring")).to_have_count(0)
    expect(page.locator("#comparison")).to_have_text(
        "Compared with q = [2, 1]: Scores same; shares same; output same."
    )


def test_bad_q_input_shows_the_message_and_keeps_the_state(lab):
    page = lab.page
    lab.recorder.allow(r"status of 422")  # the server refuses a q the planes cannot draw, as it should
    lab.open("every-number")
    field = page.locator('input[data-field="q[0]"]')
    error = page.locator('[data-error-for="q[0]"]')
    before = page.locator("#summary").inner_text()
    field.fill("two")
    field.press("Enter")
    expect(error).to_contain_text("is not a number")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_value("two")  # the learner's text stays to be fixed
    lab.wait_for_query("[2, 1]")
    assert page.locator("#summary").inner_text() == before
    # A number past the lab's one drawing limit: the server's message lands next to q.
    field.fill("1e308")
    field.press("Enter")
    expect(error).to_have_text("Query q · x must be at most 1,000,000")  # the control's own words
    other = page.locator('input[data-field="q[1]"]')
    other.fill("-1e300")
    other.press("Enter")
    expect(page.locator('[data-error-for="q[1]"]')).to_have_text("Query q · y must be at least -1,000,000")
    lab.wait_for_query("[2, 1]")  # the last state accepted; the pictures show the same q
    assert "NaN" not in page.locator("main").inner_text()
    # Fixing the field clears the message and takes the new q.
    other.fill("1")
    other.press("Enter")
    field.fill("3")
    field.press("Enter")
    lab.wait_for_query("[3, 1]")
    expect(error).to_have_text("")
    expect(field).not_to_have_attribute("aria-invalid", "true")
    assert_page_shows(lab, engine([3.0, 1.0]))


def test_values_are_editable_and_reset_restores_only_q_and_the_first_x(lab):
    page = lab.page
    lab.open("current")
    handle = page.locator("#match-plot .handle")
    handle.focus()
    handle.press("Shift+ArrowDown")
    lab.wait_for_query("[2, 0]")
    for path, value in (("values[0][0]", "5"), ("values[1][1]", "-3.5")):
        box = page.locator(f'input[data-field="{path}"]')
        box.fill(value)
        box.press("Enter")
    values = ((5.0, 0.0), (0.0, -3.5), (-1.0, -1.0))
    trace = engine([2.0, 0.0], values)
    expect(page.locator("#summary")).to_have_text(explain(trace).summary)
    bad = page.locator('input[data-field="values[2][0]"]')
    bad.fill("--1")
    bad.press("Enter")
    expect(page.locator('[data-error-for="values[2][0]"]')).to_contain_text("is not a number")
    expect(page.locator("#summary")).to_have_text(explain(trace).summary)
    page.locator("#reset").click()
    lab.wait_for_query("[2, 1]")
    reset = engine([2.0, 1.0], ((2.0, 0.0), (0.0, -3.5), (-1.0, -1.0)))
    expect(page.locator("#summary")).to_have_text(explain(reset).summary)
    expect(page.locator('input[data-field="values[0][0]"]')).to_have_value("2")
    expect(page.locator('input[data-field="values[1][1]"]')).to_have_value("-3.5")


def test_state_survives_a_reload_in_the_same_visit(lab):
    handle = lab.page.locator("#match-plot .handle")
    handle.focus()
    handle.press("Shift+ArrowLeft")
    lab.wait_for_query("[1, 1]")
    lab.page.reload()
    lab.wait_drawn()
    lab.wait_for_query("[1, 1]")


def test_labels_are_escaped(lab, live_server):
    # A hostile label, traced by the real server, drawn by the page's own views.
    hostile = '<img src=x onerror="__owned=1">'
    state = {
        "q": [2, 1],
        "keys": [list(k) for k in WORKED.keys],
        "values": [list(v) for v in WORKED.values],
        "labels": [hostile, "B", "C"],
    }
    result = httpx.post(live_server.url + "api/trace", json=state).json()
    lab.page.evaluate(
        """async (result) => {
            const share = await import('/static/js/explorer/share.js');
            const words = await import('/static/js/explorer/words.js');
            share.drawScoreTable(document.getElementById('score-table'), result);
            words.drawWords({match: document.getElementById('words-match'),
                             share: document.getElementById('words-share'),
                             mix: document.getElementById('words-mix')}, result);
        }""",
        result,
    )
    expect(lab.page.locator("#score-table tbody th").first).to_have_text(hostile)
    expect(lab.page.locator("#words-match")).to_contain_text(hostile)
    assert lab.page.locator("main img").count() == 0
    assert lab.page.evaluate("() => window.__owned === undefined")


def test_a_refused_saved_state_falls_back_to_the_example(lab):
    lab.recorder.allow(r"status of 422")
    lab.page.evaluate(
        """() => sessionStorage.setItem('attnlab.explorer.v1', JSON.stringify({
            q: [2, 1], keys: [[-1, 2], [1, 0], [0, 1]], values: [[2, 0], [0, 2], [-1, -1]],
            labels: ['A', 'A', 'C'], allowed: [true, true, true], scale: null}))"""
    )
    lab.page.reload()
    lab.wait_drawn()
    assert_page_shows(lab, engine(WORKED.q))


def test_a_typed_minus_zero_reaches_the_engine_and_survives_a_reload(lab):
    """-0 is kept where supplied: in the request, in the engine's trace and across a reload."""
    page = lab.page
    lab.open("current")
    box = page.locator('input[data-field="values[1][0]"]')
    box.fill("-0")
    box.press("Enter")
    values = ((2.0, 0.0), (-0.0, 2.0), (-1.0, -1.0))
    trace = engine(list(WORKED.q), values)
    assert str(trace.values[1][0]) == "-0.0" and str(trace.carries[1][0]) == "-0.0"
    line = f"value={fmt.precise_vector(trace.values[1])}; "
    carry = f"contribution={fmt.precise_vector(trace.carries[1])}"
    assert line == "value=[-0, 2]; " and carry.startswith("contribution=[-0, ")
    lab.open("precise")
    precise_b = page.locator('#precise-list [data-field="precise-1"]')
    expect(precise_b).to_contain_text(line)
    expect(precise_b).to_contain_text(carry)
    lab.wait_settled()
    saved = page.evaluate("() => sessionStorage.getItem('attnlab.held.v1')")  # the one state
    assert '"values":[[2,0],[-0.0,2],[-1,-1]]' in saved

    page.reload()
    lab.wait_drawn()
    lab.open("precise")
    lab.open("current")
    expect(page.locator('#precise-list [data-field="precise-1"]')).to_contain_text(line)
    expect(page.locator('input[data-field="values[1][0]"]')).to_have_value("-0")
    # the held sequence followed the edit and kept the sign in its own saved copy
    held = page.evaluate(
        "() => Object.entries(sessionStorage).filter(([k]) => k !== 'attnlab.explorer.v1')"
    )
    assert any("[-0.0,2]" in text for _key, text in held), held


# --- the words on the first screen and the scale's one meaning ----------------------

STRAY = re.compile(r"^[=;:,.)\]·\-–—]")
FIRST_SCREEN_LINES = """() => {
  const blocks = "p, h1, h2, h3, h4, li, figcaption, th, td, legend, label, summary, button, caption, dt, dd";
  const lines = [];
  for (const el of document.querySelectorAll(blocks)) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.bottom <= 0 || box.top >= innerHeight) continue;
    if (el.closest("[hidden], svg")) continue;
    for (const line of el.innerText.split("\\n")) if (line.trim()) lines.push(line.trim());
  }
  return lines;
}"""


def test_no_line_on_the_first_screen_starts_with_stray_punctuation(lab):
    lines = lab.page.evaluate(FIRST_SCREEN_LINES)
    row = "This is token A's query in the held sequence below, unmasked: it may attend to every source"
    row += " (A, B, C)."
    assert row in lines
    assert [line for line in lines if STRAY.match(line)] == []


def own_example(page, keys, values, scale):
    """Use an own example of len(keys) sources (A, B, ...) with q = [2, 1] and this scale."""
    page.locator("#own-example summary").click()
    while page.locator("[data-remove]").count() > len(keys):
        page.locator(f"[data-remove='{page.locator('[data-remove]').count() - 1}']").click()
    while page.locator("[data-remove]").count() < len(keys):
        page.locator("#own-add").click()
    for i, (k, v) in enumerate(zip(keys, values)):
        for j in range(2):
            page.locator(f'[data-own="keys[{i}][{j}]"]').fill(str(k[j]))
            page.locator(f'[data-own="values[{i}][{j}]"]').fill(str(v[j]))
    page.locator("#own-scale").fill(scale)
    page.locator("#own-use").click()


def test_an_explicit_scale_is_a_multiplier_in_every_label(lab):
    page = lab.page
    keys, values = [[-1, 2], [1, 0]], [[2, 0], [0, 2]]
    own_example(page, keys, values, "0.5")
    want = trace_query([2, 1], keys, values, scale=0.5)
    expect(page.locator("#summary")).to_contain_text(f"Output o = {fmt.vector(want.output)}")
    expect(page.locator("#score-table thead")).to_contain_text("Score q·k × 0.5")
    expect(page.locator('#score-table [data-field="score-1"]')).to_have_text(fmt.rounded(want.scores[1]))
    assert want.scores[1] == 2 * 0.5  # q·k_B = 2, times the scale
    lab.open("every-number")
    expect(page.locator("#score-axis-title")).to_have_text("Scaled scores · s = q·k × 0.5")
    expect(page.locator("#formula-scale")).to_have_text("sᵢ = (q · kᵢ) × 0.5")
    note = "The scale here multiplies each dot product by 0.5."
    expect(page.locator("#formula-scale-2")).to_have_text(note)
    text = page.locator("#explorer").inner_text() + page.locator("#every-number").inner_text()
    assert "/0.5" not in text and "/ 0.5" not in text
    # two allowed sources: the output stays on a segment, and no triangle is named
    expect(page.locator("#mix-hint")).to_contain_text(
        "The output can never leave the segment between the two allowed values."
    )
    assert "triangle" not in page.locator("#mix-hint").inner_text()
    expect(page.locator("#explorer-eyebrow")).to_have_text("One query · two sources · one continuous example")


def test_four_sources_get_the_convex_hull_not_a_triangle(lab):
    page = lab.page
    keys = [[-1, 2], [1, 0], [0, 1], [1, 1]]
    values = [[2, 0], [0, 2], [-1, -1], [2, 2]]
    own_example(page, keys, values, "")
    expect(page.locator("#mix-hint")).to_have_text(
        "Coloured arrows add w·v for each allowed source, tip to tail. The output can never leave "
        "the convex hull (the shaded shape) of the allowed values. The view fits the values with "
        "equal units on both axes."
    )
    expect(page.locator("#score-table thead")).to_contain_text("Score q·k / √2")


def test_the_worked_example_names_its_triangle(lab):
    expect(lab.page.locator("#mix-hint")).to_contain_text(
        "The output can never leave the shaded triangle of the three allowed values."
    )
