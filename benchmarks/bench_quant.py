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
  count times one thread's best float32 GEMM rate here, for a prompt;
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


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_time(fn, repeats: int) -> float:
    fn()  # compiled, memory touched
    return statistics.median(timed(fn) for _ in range(repeats))


def read_bandwidth(smoke: bool) -> float:
    """Bytes a second one thread reads here: a NumPy reduction over 512 MB (median of 5; smoke: 16 MB)."""
    a = np.ones(1 << (21 if smoke else 26), dtype=np.uint64)
    return a.nbytes / median_time(lambda: np.bitwise_or.reduce(a), 1 if smoke else 5)


def sgemm_rate(smoke: bool) -> float:
    """FLOP/s of one thread's float32 GEMM here (NumPy's BLAS held to one thread; best of 7; smoke: 1)."""
    from attnlab.engine.threads import one_blas_thread

    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 1024)).astype(np.float32)
    b = rng.standard_normal((1024, 1024)).astype(np.float32)
    with one_blas_thread():
        a @ b
        best = min(timed(lambda: a @ b) for _ in range(1 if smoke else 7))
    return 2 * 256 * 1024 * 1024 / best


def bench_products(args, threads: int) -> None:
    from attnlab.engine.fast import quant
    from attnlab.engine.fast.quant import reference

    if not quant.kernel():
        print(f"skipped: products on blocks: {quant.reason()}")
        return
    rng = np.random.default_rng(0)
    n_in, n_out, tokens, reps = args.n_in, args.n_out, args.tokens, args.repeats
    bandwidth, rate = read_bandwidth(args.smoke), sgemm_rate(args.smoke)
    x = rng.standard_normal((1, n_in)).astype(np.float32)
    xs = rng.standard_normal((tokens, n_in)).astype(np.float32)
    print(f"\n## Products, W {n_in} x {n_out}, {threads} threads; read bandwidth {bandwidth / 1e9:.1f} GB/s, "
          f"one thread's sgemm {rate / 1e9:.0f} GFLOP/s\n")  # fmt: skip
    print("| type | MB | one row | one row, 1 thread | float32 one row (BLAS) | ratio | read floor | x floor "
          f"| prompt {tokens} | float32 prompt (BLAS) | ratio | multiply-add floor | x floor "
          "| in cache, 1 thread (Gweights/s) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    f32_floor = n_in * n_out * 4 / bandwidth
    prompt_floor = 2 * tokens * n_in * n_out / (threads * rate)
    for fmt in TYPES:
        blocks = reference.valid_blocks(rng, fmt, n_out, n_in // quant.BLOCK_WEIGHTS[quant.FORMATS[fmt]])
        figures = one_type(fmt, blocks, x, xs, threads, reps, args.smoke)
        row, row_1, peer_row, prompt, peer_prompt, nbytes, rate_1 = figures
        floor = nbytes / bandwidth
        print(f"| {fmt} | {nbytes / 1e6:.1f} | {row * MS:.3f} ms | {row_1 * MS:.3f} ms "
              f"| {peer_row * MS:.3f} ms | {row / peer_row:.2f} | {floor * MS:.3f} ms | {row / floor:.1f} "
              f"| {prompt * MS:.2f} ms "
              f"| {peer_prompt * MS:.2f} ms | {prompt / peer_prompt:.2f} | {prompt_floor * MS:.2f} ms "
              f"| {prompt / prompt_floor:.1f} | {rate_1 / 1e9:.1f} |", flush=True)  # fmt: skip
    print(f"\n(float32's read floor for this W: {f32_floor * MS:.3f} ms a row)")


def copies(array: np.ndarray, smoke: bool) -> list[np.ndarray]:
    """Copies of ``array`` that together pass the last-level cache (256 MB, 2 copies at least; smoke: 1):
    cycling through them, each product reads its weights from memory, as a model's decoding step does."""
    if smoke:
        return [array]
    return [array.copy() for _ in range(max(2, -(-(256 << 20) // array.nbytes)))]


def per_product(fn, items: list, reps: int) -> float:
    """Median seconds of ``fn(item)``, the items taken in turn (each pass over all of them timed)."""
    return median_time(lambda: [fn(item) for item in items], reps) / len(items)


def one_type(fmt: str, blocks: np.ndarray, x, xs, threads: int, reps: int, smoke: bool) -> tuple[float, ...]:
    """Seconds: one row (attnlab's threads, one thread, the float32 BLAS peer), a prompt (attnlab, the peer),
    and W's stored bytes."""
    from threadpoolctl import threadpool_limits

    from attnlab.engine.fast import quant

    ws = [quant.QuantMatrix(fmt, b) for b in copies(blocks, smoke)]
    values = copies(np.ascontiguousarray(ws[0].values()), smoke)  # (n_in, n_out) float32: the peer's W
    with threadpool_limits(threads, user_api="blas"):
        peer_row = per_product(lambda v: x @ v, values, reps)
        peer_prompt = per_product(lambda v: xs @ v, values, max(1, reps // 5))
    del values
    row = per_product(lambda w: x @ w, ws, reps)
    alone = quant.CORES
    quant.CORES = 1
    try:
        row_1 = per_product(lambda w: x @ w, ws, reps)
    finally:
        quant.CORES = alone
    prompt = per_product(lambda w: xs @ w, ws, max(1, reps // 5))
    return row, row_1, peer_row, prompt, peer_prompt, ws[0].nbytes, in_cache(ws[0], x, reps)


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
        theirs = median_time(lambda: GGUFReader(str(path)), 1) if not args.no_reader else None
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
