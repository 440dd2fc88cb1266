"""Products on every GGUF block type vs the float32 product and the machine's floors, same run, medians.

    python benchmarks/bench_quant.py [--repeats 15] [--n-in 2048] [--n-out 8192] [--tokens 64]
    python benchmarks/bench_quant.py --smoke   # tiny: checks that it runs (its figures mean nothing)

For each type attnlab multiplies on (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
Q4_K, Q5_K, Q6_K), one matrix W of n_in x n_out random valid blocks (the shape of a
~1B model's MLP projection by default), and:

- one row: ``x @ W`` for x (1, n_in), a decoding step's product, on attnlab's
  threads (the spinning helpers) and on one thread; W is one of several copies
  that together pass the last-level cache (256 MB), taken in turn, so its bytes
  come from memory as a model's do;
- a prompt: ``X @ W`` for X (tokens, n_in), a prompt pass's product;
- the peer: NumPy's float32 BLAS product on the same values, float32 (the float32
  model's product), with as many BLAS threads as attnlab has;
- the floors: the stored bytes over the read bandwidth this machine shows (a
  NumPy reduction over 512 MB), for one row; the multiply-adds over the thread
  count times one thread's float32 GEMM rate here, for a prompt. All of these
  are measured in turn, rep after rep (medians), so a busy machine weighs on
  each alike;
- the kernels' arithmetic rate: weights a second one thread multiplies (one row)
  on 128 stored rows that sit in cache, best of many: a busy machine moves it least.

Then the GGUF header: a file with a 262,144-token vocabulary (Gemma 3's) written
with gguf's GGUFWriter, read by attnlab's memory-mapped reader and by
``gguf.GGUFReader`` (the peer), each in its own run.

llama.cpp is the product peer that matters for GGUF files, but llama-cpp-python
exposes no matrix product (only whole models: ``bench_models.py`` compares those
where it is installed); it is reported absent or model-level here.
Timings go to docs/performance.md, never into tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

SMOKE_HELP = "a tiny run (small sizes, one repeat) that checks the benchmark runs; its figures mean nothing"
TYPES = ("F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K")
MS = 1e3
PAUSE_S = 0.05  # between two measured runs: our helpers spin ~1-2 ms after a product, OpenBLAS's threads too


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_time(fn, repeats: int) -> float:
    fn()  # compiled, memory touched
    return statistics.median(timed(fn) for _ in range(repeats))


class Floors:
    """The machine's floors, measured beside each product (interleaved, so a busy machine weighs on both):
    ``read()`` one thread's NumPy reduction over 512 MB (smoke: 16 MB); ``sgemm()`` one thread's float32
    GEMM (NumPy's BLAS held to one thread), 256 x 1024 x 1024."""

    def __init__(self, smoke: bool) -> None:
        rng = np.random.default_rng(0)
        self.big = np.ones(1 << (21 if smoke else 26), dtype=np.uint64)
        self.a = rng.standard_normal((256, 1024)).astype(np.float32)
        self.b = rng.standard_normal((1024, 1024)).astype(np.float32)

    def read(self) -> None:
        np.bitwise_or.reduce(self.big)

    def sgemm(self) -> None:
        from attnlab.engine.threads import one_blas_thread

        with one_blas_thread():
            self.a @ self.b

    def bandwidth(self, seconds: float) -> float:
        return self.big.nbytes / seconds

    def rate(self, seconds: float) -> float:
        return 2 * 256 * 1024 * 1024 / seconds


def interleaved(runs: dict, reps: int, few: set, few_reps: int) -> dict[str, float]:
    """Median seconds of each of ``runs`` (name -> function), taken in turn rep after rep so that all of them
    see the same machine; those in ``few`` run only in the first ``few_reps`` reps. A pause before each run
    lets the last one's spinning threads (our helpers', OpenBLAS's) go idle first."""
    for fn in runs.values():
        fn()  # compiled, memory touched
    times: dict[str, list[float]] = {name: [] for name in runs}
    for rep in range(reps):
        for name, fn in runs.items():
            if name not in few or rep < few_reps:
                time.sleep(PAUSE_S)
                times[name].append(timed(fn))
    return {name: statistics.median(t) for name, t in times.items()}


def bench_products(args, threads: int) -> None:
    from attnlab.engine.fast import quant
    from attnlab.engine.fast.quant import reference

    if not quant.kernel():
        print(f"skipped: products on blocks: {quant.reason()}")
        return
    rng = np.random.default_rng(0)
    n_in, n_out, tokens = args.n_in, args.n_out, args.tokens
    x = rng.standard_normal((1, n_in)).astype(np.float32)
    xs = rng.standard_normal((tokens, n_in)).astype(np.float32)
    floors = Floors(args.smoke)
    print(f"\n## Products, W {n_in} x {n_out}, {threads} threads\n")
    print("| type | MB | one row | one row, 1 thread | float32 one row (BLAS) | ratio | read floor | x floor "
          f"| prompt {tokens} | float32 prompt (BLAS) | ratio | multiply-add floor | x floor "
          "| in cache, 1 thread (Gweights/s) | read GB/s | sgemm GFLOP/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for fmt in TYPES:
        blocks = reference.valid_blocks(rng, fmt, n_out, n_in // quant.BLOCK_WEIGHTS[quant.FORMATS[fmt]])
        t, nbytes, rate_1 = one_type(fmt, blocks, x, xs, threads, floors, args)
        bandwidth, rate = floors.bandwidth(t["read"]), floors.rate(t["sgemm"])
        floor, prompt_floor = nbytes / bandwidth, 2 * tokens * n_in * n_out / (threads * rate)
        print(f"| {fmt} | {nbytes / 1e6:.1f} | {t['row'] * MS:.3f} ms | {t['row_1'] * MS:.3f} ms "
              f"| {t['peer_row'] * MS:.3f} ms | {t['row'] / t['peer_row']:.2f} | {floor * MS:.3f} ms "
              f"| {t['row'] / floor:.1f} | {t['prompt'] * MS:.2f} ms | {t['peer_prompt'] * MS:.2f} ms "
              f"| {t['prompt'] / t['peer_prompt']:.2f} | {prompt_floor * MS:.2f} ms "
              f"| {t['prompt'] / prompt_floor:.1f} | {rate_1 / 1e9:.1f} | {bandwidth / 1e9:.1f} "
              f"| {rate / 1e9:.0f} |", flush=True)  # fmt: skip


def copies(array: np.ndarray, smoke: bool) -> list[np.ndarray]:
    """Copies of ``array`` that together pass the last-level cache (256 MB, 2 copies at least; smoke: 1):
    cycling through them, each product reads its weights from memory, as a model's decoding step does."""
    if smoke:
        return [array]
    return [array.copy() for _ in range(max(2, -(-(256 << 20) // array.nbytes)))]


def one_type(fmt: str, blocks: np.ndarray, x, xs, threads: int, floors: Floors, args) -> tuple:
    """Median seconds, interleaved: one row (attnlab's threads, one thread, the float32 BLAS peer: a product,
    W one of copies past the cache in turn), a prompt (attnlab, the peer), the floors' measures; W's
    stored bytes; the in-cache rate."""
    from threadpoolctl import threadpool_limits

    from attnlab.engine.fast import quant

    ws = [quant.QuantMatrix(fmt, b) for b in copies(blocks, args.smoke)]
    values = copies(np.ascontiguousarray(ws[0].values()), args.smoke)  # (n_in, n_out) float32: the peer's W

    def one_thread() -> None:
        alone = quant.CORES
        quant.CORES = 1
        try:
            for w in ws:
                x @ w
        finally:
            quant.CORES = alone

    def blas(a, matrices) -> None:  # (BLAS on ``threads`` threads: set around the runs below)
        for v in matrices:
            a @ v

    runs = {
        "row": lambda: [x @ w for w in ws], "row_1": one_thread, "peer_row": lambda: blas(x, values),
        "prompt": lambda: xs @ ws[0], "peer_prompt": lambda: blas(xs, values[:1]),
        "read": floors.read, "sgemm": floors.sgemm,
    }  # fmt: skip
    reps = args.repeats
    with threadpool_limits(threads, user_api="blas"):
        t = interleaved(runs, reps, {"prompt", "peer_prompt"}, max(1, reps // 3))
    for name in ("row", "row_1", "peer_row"):
        t[name] /= len(ws)
    return t, ws[0].nbytes, in_cache(ws[0], x, reps)


def in_cache(w, x, reps: int) -> float:
    """Weights a second one thread multiplies when they sit in cache (W's first 128 stored rows, best of
    10 * reps): the kernels' arithmetic rate, which a busy machine disturbs least."""
    from attnlab.engine.fast import quant

    small = quant.QuantMatrix(w.fmt, w.parts[0][:128])
    alone = quant.CORES
    quant.CORES = 1
    try:
        x @ small
        best = min(timed(lambda: x @ small) for _ in range(10 * reps))
    finally:
        quant.CORES = alone
    return small.n_in * small.n_out / best


def write_vocabulary(path: Path, n: int) -> None:
    from gguf import GGUFWriter

    w = GGUFWriter(str(path), "gemma3")
    w.add_tokenizer_model("llama")
    w.add_token_list([f"▁tok{i}" if i % 7 else f"<unused{i}>" for i in range(n)])
    w.add_token_scores([float(-i) for i in range(n)])
    w.add_token_types([1] * n)
    w.add_tensor("token_embd.weight", np.zeros((2, 32), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def bench_header(args) -> None:
    from gguf import GGUFReader

    from attnlab.models.gguf_file import GGUFFile

    n = 4096 if args.smoke else 262_144
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "vocabulary.gguf"
        write_vocabulary(path, n)
        ours = median_time(lambda: GGUFFile(path), 1 if args.smoke else 5)
        theirs = timed(lambda: GGUFReader(str(path))) if not args.no_reader else None  # once: it is slow
        print(f"\n## GGUF header with a {n:,}-token vocabulary ({path.stat().st_size / 1e6:.1f} MB)\n")
        print("| reader | time | ratio |\n|---|---:|---:|")
        print(f"| attnlab GGUFFile (memory map) | {ours * MS:.0f} ms | 1 |")
        if theirs is None:
            print("| gguf.GGUFReader | skipped (--no-reader) | |")
        else:
            print(f"| gguf.GGUFReader | {theirs * MS:.0f} ms | {theirs / ours:.0f}x attnlab's |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--n-in", type=int, default=2048, help="a multiple of 256 (the K-quants' blocks)")
    parser.add_argument("--n-out", type=int, default=8192)
    parser.add_argument("--tokens", type=int, default=64, help="a prompt's rows")
    parser.add_argument("--no-reader", action="store_true", help="leave out gguf.GGUFReader (slow)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeats, args.n_in, args.n_out, args.tokens = 1, 256, 96, 5
    if args.n_in % 256:
        parser.error("--n-in must be a multiple of 256")
    from attnlab.engine.threads import CORES

    print(f"# bench_quant: {os.cpu_count()} CPUs here, attnlab on {CORES} threads")
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        print("skipped: llama.cpp: llama-cpp-python is not installed")
    else:
        print("skipped: llama.cpp: llama-cpp-python has no matrix product (bench_models.py: whole models)")
    bench_products(args, CORES)
    bench_header(args)


if __name__ == "__main__":
    main()
