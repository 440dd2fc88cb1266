"""The page's one in-flight loop (static/js/shared/newest.js): one request on its way, the newest waits.

The explorer, the block and the connection labs all hold one. The loop is driven here with sends
the test resolves by hand, so each rule is seen in order; then the block's walk requests are held at
the network to see the rule on the page.
"""

from __future__ import annotations

import json

import pytest
from blockkit import wait_block
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

# A loop whose sends wait for the test: window.t.sent lists the jobs sent, t.answer(i) resolves send i,
# t.fail(i, offline) rejects it; t.taken lists what take() saw, t.changes the busy() after each change.
SETUP = """async ([mergeKind, stopOnFail]) => {
  const { newest } = await import("/static/js/shared/newest.js");
  const t = { sent: [], settle: [], taken: [], changes: [] };
  const merges = { newer: undefined, concat: (older, newer) => older.concat(newer) };
  t.line = newest({
    send(job) {
      t.sent.push(job);
      return new Promise((resolve, reject) => t.settle.push({ resolve, reject }));
    },
    take(job, answer, error) {
      t.taken.push([job, answer, error ? error.message : null]);
      if (error && stopOnFail) return false;
    },
    ...(merges[mergeKind] ? { merge: merges[mergeKind] } : {}),
    split: (job) => (job.length > 3 ? [job.slice(0, 3), job.slice(3)] : [job, null]),
    changed: () => t.changes.push(t.line.busy()),
  });
  const turn = () => new Promise((r) => setTimeout(r));
  t.answer = async (i, value) => { t.settle[i].resolve(value); await turn(); };
  t.fail = async (i) => { t.settle[i].reject(new Error("offline")); await turn(); };
  window.t = t;
}"""


def loop(page, merge: str = "newer", stop_on_fail: bool = False):
    page.evaluate(SETUP, [merge, stop_on_fail])
    return lambda expression: page.evaluate(f"async () => {{ const t = window.t; return {expression}; }}")


def test_asks_made_while_one_is_on_its_way_collapse_into_the_newest(lab):
    js = loop(lab.page)
    js("(t.line.ask(['a']), t.sent)")
    js("(t.line.ask(['b']), t.line.ask(['c']), null)")
    assert js("t.sent") == [["a"]]  # one on its way: b and c wait, and c replaced b
    assert js("t.line.waiting()") == ["c"]
    assert js("t.line.busy()") is True
    js("await t.answer(0, 1)")
    assert js("t.sent") == [["a"], ["c"]]
    assert js("t.line.waiting()") is None
    js("await t.answer(1, 2)")
    assert js("t.taken") == [[["a"], 1, None], [["c"], 2, None]]
    assert js("t.line.busy()") is False
    assert js("t.changes[t.changes.length - 1]") is False


def test_a_merge_keeps_every_waiting_ask_and_a_split_sends_the_rest_next(lab):
    js = loop(lab.page, merge="concat")
    js("(t.line.ask(['a']), t.line.ask(['b', 'c']), t.line.ask(['d', 'e']), null)")
    js("await t.answer(0, 1)")
    assert js("t.sent") == [["a"], ["b", "c", "d"]]  # the merged five less what goes later
    js("t.line.ask(['f'])")
    assert js("t.line.waiting()") == ["e", "f"]  # the split's rest waits first, then the newer ask
    js("await t.answer(1, 2)")
    js("await t.answer(2, 3)")
    assert js("t.sent") == [["a"], ["b", "c", "d"], ["e", "f"]]
    assert js("t.line.busy()") is False


def test_a_stop_keeps_the_job_for_resume_unless_a_newer_one_waits(lab):
    js = loop(lab.page, stop_on_fail=True)
    js("(t.line.ask(['a']), null)")
    js("await t.fail(0)")
    assert js("t.taken") == [[["a"], None, "offline"]]
    assert js("t.line.busy()") is False
    js("(t.line.keep(['a']), null)")  # the page keeps the job to retry
    assert js("t.line.waiting()") == ["a"] and js("t.sent.length") == 1
    js("(t.line.resume(), null)")
    assert js("t.sent") == [["a"], ["a"]]
    js("(t.line.ask(['b']), null)")
    js("await t.fail(1)")  # a newer ask waits: keep() leaves it
    js("(t.line.keep(['a']), null)")
    assert js("t.line.waiting()") == ["b"]


def test_idle_resolves_once_nothing_is_on_its_way(lab):
    js = loop(lab.page)
    assert js("(await t.line.idle(), 'idle')") == "idle"
    js("(t.line.ask(['a']), t.line.ask(['b']), null)")
    js("(t.done = false, t.line.idle().then(() => (t.done = true)), null)")
    js("await t.answer(0, 1)")
    assert js("t.done") is False  # b went: the line is still working
    js("await t.answer(1, 2)")
    assert js("t.done") is True


def test_the_blocks_edits_made_during_a_slow_answer_go_as_one_request(lab):
    """Three edits of X while the first answer is held: two requests, the second with the newest X."""
    page = lab.page
    wait_block(page)
    posts: list[dict] = []
    held: list = []

    def hold(route):
        posts.append(json.loads(route.request.post_data))
        if len(posts) == 1:
            held.append(route)  # answered below, after the other edits
        else:
            route.continue_()

    page.route("**/api/block", hold)
    page.locator("#block-edit-pick").select_option("wo")
    cell = page.locator('#block-edit-part input[data-field="weights.w_o[0][0]"]')
    for value in ("0.75", "0.25", "0.125"):
        cell.fill(value)
        cell.press("Enter")
    expect(page.locator("html")).to_have_attribute("data-block-pending", "1")
    page.wait_for_timeout(200)
    assert len(posts) == 1
    held[0].continue_()
    wait_block(page)
    assert len(posts) == 2
    assert posts[0]["weights"]["w_o"][0][0] == 0.75
    assert posts[1]["weights"]["w_o"][0][0] == 0.125  # 0.25 waited and was replaced
    expect(cell).to_have_value("0.125")
