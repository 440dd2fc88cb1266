"""Benchmark attnlab's attention against PyTorch's scaled_dot_product_attention on the CPU.

    python benchmarks/bench_attention.py            # the full table and memory checks
    python benchmarks/bench_attention.py --quick    # a fast run (smaller sizes, fewer repeats)
    python benchmarks/bench_attention.py --threads 1  # both libraries on one thread
    python benchmarks/bench_attention.py --smoke    # tiny: checks that it runs (tests/benchmarks)

1. Speed: batch 1, 8 heads, head dim 64, float32, L = 512 .. 4096, causal and not.
   Ours is the best path (``tiled_attention``'s NumPy backend with its default tiles:
   in float32, the block kernel compiled with numba, engine/fast/compiled.py);
   the peer is ``torch.nn.functional.scaled_dot_product_attention``,
   measured in the same run, alternating call by call so both see the same load.
   torch's OpenMP threads busy-wait for ~15 ms after each call here (libgomp's
   default spin), which took a core away from the next call of ours; the script
   sets ``OMP_WAIT_POLICY=PASSIVE`` unless the environment sets a policy (it
   prints which), so torch's threads sleep once its call returns. torch's own
   SDPA time was no slower for it here (one parallel region per call).
   Prints median wall milliseconds and the ratio ours / torch (target: <= 1.25 at
   L >= 1024), and the same for CPU time, which other processes on a shared machine
   disturb less.
2. Memory: peak resident memory (VmHWM) of plain ``attention`` vs ``tiled_attention`` at
   L = 16384 (one head, d = 64, float32), each in its own process; then tiled at
   L = 65536, which must stay under 1 GiB (plain would need 16 GiB for one L x L
   float32 matrix alone). "before" is the process's resident memory just before the call
   (the inputs; for tiled also numba and the compiled kernel, ~150 MiB, loaded first so
   that "extra" is the attention's own working memory). A run that fails exits with 1.

Without torch the speed table (its peer) is skipped, with the reason printed. ``--smoke``:
L = 64 and 128, one timed call, memory at L = 1024 and 2048.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

from smoke import add_flag, missing, skipped

# before torch is imported: libgomp reads it once (see the docstring)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

NEEDS = ()  # what its smoke run needs beyond the test extra (tests/benchmarks)

HEADS, HEAD_DIM = 8, 64
BLOCK_Q, BLOCK_K = 512, 512  # the kernel's default tile (for the matmul rates): 1 MiB of float32 scores


def _rss_now_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_rss_mib() -> float:
    """Return this process's peak resident memory (VmHWM).

    Not ``getrusage``'s ru_maxrss: Linux carries it over from the parent through
    fork and exec, so a child of a big process would report the parent's size.
    """
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # pragma: no cover


def child(kind: str, n: int) -> None:
    """Run one attention in this process and print its memory figures as JSON."""
    from attnlab.engine import attention
    from attnlab.engine.fast.tiled import tiled_attention

    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, n, HEAD_DIM), dtype=np.float32) for _ in range(3))
    if kind == "tiled":
        from attnlab.engine.fast import compiled

        compiled.kernel()  # numba and its machine code count in the peak, not in "extra"
    before = _rss_now_mib()
    start = time.perf_counter()
    if kind == "plain":
        out = attention(q, k, v).output
    else:
        out = tiled_attention(q, k, v).output  # its default tiles
    seconds = time.perf_counter() - start
    assert out.shape == (1, n, HEAD_DIM) and np.isfinite(out).all()
    print(
        json.dumps(
            {"kind": kind, "L": n, "before_mib": before, "peak_mib": _peak_rss_mib(), "seconds": seconds}
        )
    )


def measure_memory(kind: str, n: int) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, str(n)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        return {"kind": kind, "L": n, "error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def speed_table(lengths: list[int], repeats: int, threads: int | None = None) -> list[dict]:
    import torch
    import torch.nn.functional as F

    from attnlab.engine.fast.tiled import tiled_attention

    rows = []
    for n in lengths:
        rng = np.random.default_rng(n)
        q, k, v = (rng.standard_normal((1, HEADS, n, HEAD_DIM), dtype=np.float32) for _ in range(3))
        tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
        for causal in (False, True):

            def ours(q=q, k=k, v=v, causal=causal):
                alignment = "top_left" if causal else None
                return tiled_attention(q, k, v, causal=alignment, threads=threads).output  # default tiles

            def peer(tq=tq, tk=tk, tv=tv, causal=causal):
                with torch.no_grad():
                    return F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)

            diff = float(np.max(np.abs(ours() - peer().numpy())))  # warm-up and sanity check
            products = tile_products(q[0], k[0], v[0], causal)
            ours_ms, peer_ms, ours_cpu, peer_cpu, floor_cpu = [], [], [], [], []
            for _ in range(repeats):  # alternate so both see the same background load
                t0, c0 = time.perf_counter(), time.process_time()
                ours()
                t1, c1 = time.perf_counter(), time.process_time()
                peer()
                t2, c2 = time.perf_counter(), time.process_time()
                products()
                c3 = time.process_time()
                ours_ms.append((t1 - t0) * 1e3)
                peer_ms.append((t2 - t1) * 1e3)
                ours_cpu.append((c1 - c0) * 1e3)
                peer_cpu.append((c2 - c1) * 1e3)
                floor_cpu.append((c3 - c2) * 1e3)
            o, p = statistics.median(ours_ms), statistics.median(peer_ms)
            oc, pc, fc = (statistics.median(x) for x in (ours_cpu, peer_cpu, floor_cpu))
            rows.append({"L": n, "causal": causal, "ours_ms": o, "torch_ms": p, "ratio": o / p})
            print(
                f"{n:>6} {'yes' if causal else 'no':>6} {o:>9.2f} {p:>9.2f} {o / p:>6.2f}"
                f" {oc:>9.1f} {pc:>9.1f} {oc / pc:>6.2f} {fc:>9.1f} {fc / pc:>6.2f} {diff:>9.1e}",
                flush=True,
            )
    return rows


def tile_products(q, k, v, causal: bool):
    """Return a function doing only the kernel's two matrix products, tile by tile, on one thread.

    The same tiles as ``tiled_attention``'s defaults (512 x 512; under a causal
    mask, the tiles left of the diagonal, then the diagonal in 128-row pieces
    up to each piece's last key) and the same operands (q, k and v as they are),
    with no exp, no row sums, no mask and no bookkeeping: the CPU time NumPy's
    BLAS alone needs, a floor under the kernel's CPU time.
    """
    from threadpoolctl import threadpool_limits

    heads, n, d = q.shape
    block, piece = 512, 128
    flat = np.empty(block * block, np.float32)
    acc = np.empty((block, d), np.float32)

    def products(h, r0, r1, j0, j1) -> None:
        s = flat[: (r1 - r0) * (j1 - j0)].reshape(r1 - r0, j1 - j0)
        np.matmul(q[h, r0:r1], k[h, j0:j1].T, out=s)
        np.matmul(s, v[h, j0:j1], out=acc[: r1 - r0])

    def run() -> None:
        with threadpool_limits(1, user_api="blas"):
            for h in range(heads):
                for i0 in range(0, n, block):
                    i1 = min(n, i0 + block)
                    full = i0 if causal else n  # keys every row of the block sees (as the kernel)
                    for j0 in range(0, full, block):
                        products(h, i0, i1, j0, min(full, j0 + block))
                    if causal:
                        for r0 in range(i0, i1, piece):
                            products(h, r0, min(i1, r0 + piece), full, min(i1, r0 + piece))

    return run


def matmul_rates(repeats: int) -> tuple[float, float]:
    """Return single-thread GFLOP/s of NumPy's BLAS and of torch on the kernel's q @ k^T tile.

    Context for the ratio: both attentions are mostly these products, so the
    BLAS each library ships bounds how close the two can get.
    """
    import torch
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a = rng.standard_normal((BLOCK_Q, HEAD_DIM), dtype=np.float32)
    b = rng.standard_normal((BLOCK_K, HEAD_DIM), dtype=np.float32)
    out = np.empty((BLOCK_Q, BLOCK_K), np.float32)
    ta, tb, tout = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(out)
    flops = 2 * BLOCK_Q * BLOCK_K * HEAD_DIM
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    np_s, torch_s = [], []
    try:
        with threadpool_limits(1, user_api="blas"):
            for _ in range(repeats * 50):
                t0 = time.thread_time()
                np.matmul(a, b.T, out=out)
                t1 = time.thread_time()
                torch.matmul(ta, tb.T, out=tout)
                t2 = time.thread_time()
                np_s.append(t1 - t0)
                torch_s.append(t2 - t1)
    finally:
        torch.set_num_threads(threads)
    return flops / statistics.median(np_s) / 1e9, flops / statistics.median(torch_s) / 1e9


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats")
    parser.add_argument("--repeats", type=int, default=None, help="timed calls per cell (15; quick: 3)")
    parser.add_argument(
        "--threads", type=int, default=None,
        help="threads for both libraries (default: torch's default and ours, the CPU count); "
        "1 compares the two kernels without the second core's swings",
    )  # fmt: skip
    parser.add_argument("--child", nargs=2, metavar=("KIND", "L"), help=argparse.SUPPRESS)
    add_flag(parser)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0
    if reason := missing("torch"):
        skipped("the speed table (its peer is torch's scaled_dot_product_attention)", reason)
    else:
        speed(args)
    return memory(args)


def speed(args) -> None:
    """The speed table, ours against torch's, and the two libraries' matrix-product rates."""
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    lengths = [64, 128] if args.smoke else [512, 1024] if args.quick else [512, 1024, 2048, 4096]
    repeats = 1 if args.smoke else args.repeats or (3 if args.quick else 15)
    print(
        f"attention, batch 1, {HEADS} heads, head dim {HEAD_DIM}, float32; median of {repeats} calls; "
        f"torch {torch.__version__} with {torch.get_num_threads()} threads, "
        f"ours with {args.threads or os.cpu_count()}, {os.cpu_count()} CPUs, "
        f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}"
    )
    from attnlab.engine.fast import compiled

    path = "the compiled float32 kernel" if compiled.kernel() else f"the NumPy code ({compiled.reason()})"
    print(f"ours runs {path}")
    print("wall: median milliseconds per call; cpu: median CPU milliseconds of the process (all threads)")
    print("products: CPU ms of our kernel's two matrix products alone (NumPy's BLAS), ratio to torch's cpu")
    head = f"{'L':>6} {'causal':>6} {'ours ms':>9} {'torch ms':>9} {'ratio':>6}"
    head += f" {'ours cpu':>9} {'torch cpu':>9} {'ratio':>6} {'products':>9} {'ratio':>6} {'max diff':>9}"
    print(head)
    speed_table(lengths, repeats, args.threads)
    numpy_rate, torch_rate = matmul_rates(repeats)
    print(
        f"one thread, ({BLOCK_Q} x {HEAD_DIM}) @ ({HEAD_DIM} x {BLOCK_K}) float32: "
        f"NumPy's BLAS {numpy_rate:.0f} GFLOP/s, torch {torch_rate:.0f} GFLOP/s"
    )


def memory(args) -> int:
    """The peak-memory table, each run in its own process; 1 when a run failed."""
    mem_n = 1024 if args.smoke else 4096 if args.quick else 16384
    big_n = 2048 if args.smoke else 16384 if args.quick else 65536
    failed = 0
    print(f"\npeak memory, one head, d={HEAD_DIM}, float32, each run in its own process")
    print(f"{'kind':>6} {'L':>6} {'before MiB':>11} {'peak MiB':>9} {'extra MiB':>10} {'seconds':>8}")
    for kind, n in (("plain", mem_n), ("tiled", mem_n), ("tiled", big_n)):
        r = measure_memory(kind, n)
        if "error" in r:
            print(f"{kind:>6} {n:>6} failed: {r['error']}")
            failed = 1
            continue
        extra = r["peak_mib"] - r["before_mib"]
        figures = f"{r['before_mib']:>11.0f} {r['peak_mib']:>9.0f} {extra:>10.0f} {r['seconds']:>8.2f}"
        print(f"{kind:>6} {n:>6} {figures}")
        if kind == "tiled" and n == big_n:
            verdict = "under" if r["peak_mib"] < 1024 else "OVER"
            print(f"tiled attention at L={n}: peak {r['peak_mib']:.0f} MiB, {verdict} 1 GiB")
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
