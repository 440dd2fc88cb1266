"""The block section: the walk's numbers, head ablation, pre/post-norm and RoPE, against the API.

Every comparison fetches ``POST /api/block`` in the test and compares the
strings on the page with the strings in the answer.
"""

from __future__ import annotations

import pytest
from blockkit import api, go_to_step, shown_tensor, switch_to, wait_block
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_every_step_shows_the_apis_numbers(lab, live_server, artifacts):
    page = lab.page
    answer = api(live_server.url, "", {})
    wait_block(page, answer["summary"])
    page.locator("#block-walk").scroll_into_view_if_needed()
    for i, step in enumerate(answer["steps"]):
        if i:
            page.locator("#block-next").click()
        expect(page.locator("#block-step-tensors")).to_have_attribute("data-step", step["id"])
        expect(page.locator("#block-step-title")).to_have_text(f"Step {i + 1} of 8 · {step['title']}")
        assert step["heading"] == f"Step {i + 1} of 8 · {step['title']}"
        expect(page.locator("#block-step-caption")).to_have_text(step["caption"]["text"])
        names = page.locator("#block-step-tensors [data-tensor]").evaluate_all(
            "els => els.map(e => e.dataset.tensor)"
        )
        assert names == [t["name"] for t in step["tensors"]]
        for t in step["tensors"]:
            display, precise = shown_tensor(page, "#block-step-tensors", t["name"])
            assert display == t["display"], t["name"]
            assert precise == t["precise"], t["name"]
        if step["id"] == "combine":
            page.locator("#block-walk").screenshot(path=artifacts / "block-walk-combine.png")
    expect(page.locator("#block-next")).to_be_disabled()
    # the Left and Right arrow keys move the stepper too
    page.locator("#block-prev").focus()
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#block-step-tensors")).to_have_attribute("data-step", answer["steps"][-2]["id"])
    page.keyboard.press("ArrowRight")
    expect(page.locator("#block-step-tensors")).to_have_attribute("data-step", answer["steps"][-1]["id"])


def test_a_products_ordered_sum_shows_on_focus_and_the_arrow_keys_move(lab, live_server):
    page = lab.page
    answer = api(live_server.url, "", {})
    wait_block(page)
    go_to_step(page, "project")
    step = next(s for s in answer["steps"] if s["id"] == "project")
    q = next(t for t in step["tensors"] if t["name"] == "head1.q")
    first = page.locator('#block-step-tensors [data-tensor="head1.q"] td[data-row="0"][data-col="0"]')
    first.focus()
    summed = page.locator('#block-step-tensors [data-tensor="head1.q"] .block-sum')
    expect(summed).to_contain_text(q["expansions"][0][0])
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    expect(summed).to_contain_text(q["expansions"][1][1])
    expect(
        page.locator('#block-step-tensors [data-tensor="head1.q"] td[data-row="1"][data-col="1"]')
    ).to_be_focused()


def test_switching_a_head_off_changes_the_output_as_the_api_says(lab, live_server, artifacts):
    page = lab.page
    full = api(live_server.url, "", {})
    wait_block(page, full["summary"])
    sentence = page.locator('[data-sentence="1"]')
    expect(sentence).to_have_text(full["heads"][1]["sentence"]["text"])
    lost = next(a for a in full["ablation"] if a["head"] == 1)
    expect(page.locator('[data-ablation="1"]')).to_contain_text(lost["sentence"]["text"])

    off = api(live_server.url, "", {"heads_on": [True, False]})
    page.locator("#block-head-on-1").uncheck()
    wait_block(page, off["summary"])
    assert off["output_display"] == lost["output_display"]  # the API's own promise: ablation = switched off
    go_to_step(page, "add-norm-2")
    display, _ = shown_tensor(page, "#block-step-tensors", "output")
    assert display == off["output_display"]
    assert display != full["output_display"]
    go_to_step(page, "combine")
    concat, _ = shown_tensor(page, "#block-step-tensors", "concat")
    assert [row[2:] for row in concat] == [["0", "0"]] * 3  # head 2's columns write zeros
    page.locator("#block-heads-part").screenshot(path=artifacts / "block-head-2-off.png")


def test_the_pre_post_toggle_shows_both_placements_side_by_side(lab, live_server, artifacts):
    page = lab.page
    post = switch_to(page, live_server.url, "#block-norm-post", {"norm": "post"})
    go_to_step(page, "add-norm-1")
    step = next(s for s in post["steps"] if s["id"] == "add-norm-1")
    for t in step["tensors"]:
        display, _ = shown_tensor(page, "#block-side-here", t["name"])
        assert display == t["display"]
    twin = next(s for s in post["norm_compare"]["steps"] if s["id"] == "add-norm-1")
    changed_cells = 0
    for t in twin["tensors"]:
        display, _ = shown_tensor(page, "#block-side-other", t["name"])
        assert display == t["display"]
        mask = post["norm_compare"]["changed"].get(t["name"])
        changed_cells += sum(sum(row) for row in mask) if mask else 0
    marked = page.locator("#block-side-other td.cmp-changed")
    expect(marked).to_have_count(changed_cells)
    assert changed_cells > 0
    expect(page.locator("#block-norm-summary")).to_have_text(post["norm_compare"]["summary"]["text"])
    # the embed step is the same in both placements: nothing marked
    go_to_step(page, "embed")
    expect(page.locator("#block-side-here td.cmp-changed")).to_have_count(0)
    expect(page.locator("#block-side-here h4")).to_have_text("Post-norm · Embed")
    expect(page.locator("#block-side-other h4")).to_have_text("Pre-norm · Embed")
    page.locator("#block-norm-part").screenshot(path=artifacts / "block-pre-post.png")


def test_rope_is_drawn_as_a_rotation_and_its_score_depends_only_on_the_offset(lab, live_server, artifacts):
    page = lab.page
    rope = switch_to(page, live_server.url, "#block-positions-rope", {"positions": "rope"})
    expect(page.locator("#block-rope-status")).to_contain_text("RoPE is on")
    go_to_step(page, "project")
    names = page.locator("#block-step-tensors [data-tensor]").evaluate_all(
        "els => els.map(e => e.dataset.tensor)"
    )
    assert "head1.q_rotated" in names and "head2.k_rotated" in names
    demo = rope["rope"]["demo"]
    expect(page.locator("#block-rope-sentence")).to_have_text(demo["sentence"]["text"])
    rows = page.locator("#block-rope-pairs tbody tr")
    expect(rows).to_have_count(len(demo["pairs"]))
    by_offset: dict[str, set[str]] = {}
    for row in rows.all():
        cells = [c.inner_text() for c in row.locator("td").all()]
        by_offset.setdefault(cells[2], set()).add(cells[3])
    assert by_offset["1"] == {p["display"] for p in demo["pairs"] if p["offset"] == 1}
    assert len(by_offset["1"]) == 1  # the same score at every position with offset 1
    assert by_offset["2"] != by_offset["1"]
    # the picture: token C of head 2, before and after its rotation, with the API's vectors in the note
    page.locator("#block-rope-head").select_option("1")
    page.locator("#block-rope-token").select_option("2")
    rot = rope["rope"]["rotations"][1][2]
    note = page.locator("#block-rope-note")
    expect(note).to_contain_text(f"q = {rot['display']['q']} turns to {rot['display']['q_rotated']}")
    expect(page.locator("#block-rope-plane .rope-arc")).to_have_count(2)
    expect(page.locator("#block-rope-plane .rope-vec")).to_have_count(4)
    page.locator("#block-rope-part").screenshot(path=artifacts / "block-rope.png")


def test_the_rope_picture_opens_on_a_vector_that_turns(lab, live_server):
    """Not head 1's A, q = [0, 0] at position 0 "turned by angle 0": the picture opens on the head and
    token the server names, whose q and k both turn (head 1's B, by 1 radian), in the plane and the note."""
    page = lab.page
    rope = switch_to(page, live_server.url, "#block-positions-rope", {"positions": "rope"})["rope"]
    assert rope["shown"] == {"head": 0, "token": 1}
    page.locator("#block-rope-part").scroll_into_view_if_needed()
    expect(page.locator("#block-rope-head")).to_have_value("0")
    expect(page.locator("#block-rope-token")).to_have_value("1")
    note = page.locator("#block-rope-note")
    expect(note).to_have_text(rope["rotations"][0][1]["note"]["text"])
    expect(note).not_to_contain_text("q = [0, 0]")
    tips = page.locator("#block-rope-plane .rope-vec circle").evaluate_all(
        "cs => cs.map(c => [c.getAttribute('cx'), c.getAttribute('cy')])"
    )
    assert tips[2] != tips[3]  # q's tip before and after: it moved


def test_a_head_switched_off_is_still_measured_against_the_block_with_it_on(lab, live_server):
    """Untick Head 1: its card must not say it changes nothing; the change is against Head 1 on."""
    page = lab.page
    full = api(live_server.url, "", {})
    wait_block(page, full["summary"])
    off = api(live_server.url, "", {"heads_on": [False, True]})
    page.locator("#block-head-on-0").uncheck()
    wait_block(page, off["summary"])
    card = page.locator('[data-ablation="0"]')
    said = off["ablation"][0]["sentence"]
    expect(card).to_contain_text(said["text"])
    expect(card).not_to_contain_text("changes no output number")
    assert said["claims"]["baseline_heads_on"] == [True, True]
    assert off["ablation"][0]["change"] == full["ablation"][0]["change"]  # the same comparison, on or off now
    display, _ = shown_tensor(page, '[data-ablation="0"]', "ablate-0")
    assert display == full["ablation"][0]["change_display"] and display != [["0"] * 4] * 3


def test_the_sections_headings_labels_and_hints_are_the_apis_words(lab, live_server):
    """Every fixed word of the section is the lab's (answer.words, the practice's words)."""
    page = lab.page
    answer = api(live_server.url, "", {})
    words, practice = answer["words"], api(live_server.url, "/practice")["words"]
    wait_block(page, answer["summary"])
    for key, part in words["parts"].items():
        expect(page.locator(f"#block-{key}-part > h3")).to_have_text(part["title"])
        for intro in part["intro"]:
            expect(page.locator(f"#block-{key}-part > p.hint").first).to_have_text(intro)
    expect(page.locator("#block-norm legend")).to_have_text(words["switches"]["norm"])
    expect(page.locator("#block-norm-post + label")).to_have_text(answer["choices"]["norm"][1][1])
    expect(page.locator("#block-prev")).to_have_text(words["walk"]["previous"])
    steps = page.locator("#block-walk .block-steps")
    expect(steps).to_have_attribute("aria-label", words["walk"]["steps_label"])
    expect(page.locator("#block-norm-part")).to_contain_text(words["norm_compare"]["hint"]["text"])
    expect(page.locator("#block-reset")).to_have_text(words["edit"]["reset"])
    expect(page.locator("#block-edit-part")).to_contain_text(words["edit"]["reset_hint"]["text"])
    expect(page.locator("#block-play-mode")).to_have_text(words["play"]["moving"]["text"])
    expect(page.locator("#block-play")).to_have_text(words["play"]["play"])
    expect(page.locator("label[for=block-rope-token]")).to_have_text(words["rope"]["token"])
    expect(page.locator("#block-python > summary")).to_have_text(words["python"]["summary"])
    exports = page.locator("[data-block-export]")
    expect(exports).to_have_text([e["label"] for e in words["python"]["exports"]])
    expect(page.locator('[data-head="0"] .block-open .hint')).to_have_text(words["heads"]["open"])
    body = page.locator("#block-challenge-silent-head")
    expect(body.locator('[data-action="check"]')).to_have_text(practice["check"])
    expect(body.locator('[data-action="answer"]')).to_have_text(practice["reveal"])
    expect(page.locator("#block-history").locator("xpath=preceding-sibling::h4[1]")).to_have_text(
        practice["history_heading"]
    )


def test_the_exports_download_the_apis_text_and_say_so_in_the_labs_words(lab, live_server, tmp_path):
    page = lab.page
    answer = switch_to(page, live_server.url, "#block-norm-post", {"norm": "post"})
    markdown = next(e for e in answer["words"]["python"]["exports"] if e["kind"] == "markdown")
    with page.expect_download() as info:
        page.locator('[data-block-export="markdown"]').click()
    d = info.value
    assert d.suggested_filename == markdown["file"]
    d.save_as(tmp_path / markdown["file"])
    assert "Settings: post-norm" in (tmp_path / markdown["file"]).read_text(encoding="utf-8")
    expect(page.locator("#block-export-status")).to_have_text(markdown["done"])
