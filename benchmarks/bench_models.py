"""Real models on attnlab's engine vs their reference implementations, same run, medians.

    python benchmarks/bench_models.py [--repeats 7] [--decode-steps 20]

- MiniLM: sentences per second encoding a batch of 32 sentences (~12 tokens
  each) vs sentence-transformers (float32, CPU). Target: ratio >= 0.9.
- SmolLM2: prefill of a 22-token prompt and decode time per token with a KV
  cache vs Hugging Face transformers (same GGUF, dequantized to float32, its
  own cache). Target: decode time ratio <= 0.5. A third line times a decode
  step's matrix-vector products alone (our float32 weights streamed once) against
  HF's whole step: the floor that float32 weights put under any decoder here.

Measurements alternate ours / theirs so both see the same machine load.
By default each side runs as a user gets it: torch with its own threads, and
attnlab as it ships (its forward passes hold BLAS to one thread, so that the
numbers never depend on the thread count, and share the output layer's fixed
slices and a prompt's fixed column blocks among its own threads; see
``attnlab.engine.threads`` and ``attnlab.models.smollm``).
``--threads 1`` limits both sides to one thread (NumPy's OpenBLAS through
threadpoolctl, torch through ``set_num_threads``): on a busy machine,
multi-threaded BLAS on tiny decode products slows down badly.
Needs torch, sentence-transformers and transformers (the test oracles).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SENTENCES = [
    "The cat sat quietly on the warm mat by the door.",
    "A man is playing a guitar in the park today.",
    "Stock markets fell sharply after the surprise announcement.",
    "She baked fresh bread for her neighbours this morning.",
    "The train to the city leaves at half past seven.",
    "Scientists found water ice near the lunar south pole.",
    "Our team won the final match after extra time.",
    "Please remember to water the plants while I am away.",
]
BATCH = (SENTENCES * 4)[:32]
PROMPT_22 = (
    "Once upon a time, in a small village by the sea, there lived an old fisherman who sold fresh fish"
)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_minilm(repeats: int) -> list[tuple[str, float, float, str]]:
    from sentence_transformers import SentenceTransformer

    from attnlab.models import files
    from attnlab.models.minilm import MiniLM

    ours = MiniLM.load()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = SentenceTransformer(str(files.minilm_dir()), device="cpu")
    n_tok = ours.tokenize(BATCH).mask.sum(axis=1).mean()
    ours.encode(BATCH), theirs.encode(BATCH, batch_size=32)  # warm up
    a, b = [], []
    for _ in range(repeats):
        a.append(timed(lambda: ours.encode(BATCH, batch_size=32)))
        b.append(timed(lambda: theirs.encode(BATCH, batch_size=32)))
    sa, sb = len(BATCH) / statistics.median(a), len(BATCH) / statistics.median(b)
    note = f"batch 32, {n_tok:.1f} tokens/sentence; higher is better, target ratio >= 0.9"
    return [("MiniLM encode (sentences/s)", sa, sb, note)]


def bench_smollm2(repeats: int, steps: int) -> list[tuple[str, float, float, str]]:
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    from attnlab.models import files
    from attnlab.models.smollm import SmolLM2

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    ours = SmolLM2.load()
    path = files.smollm2_gguf()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    hf.eval()
    ids = ours.encode(PROMPT_22)
    assert len(ids) == 22, len(ids)
    tokens = torch.tensor([ids])

    def ours_prefill():
        cache = ours.new_cache()
        return ours.forward(ids, cache=cache), cache

    def hf_prefill():
        with torch.no_grad():
            return hf(tokens, use_cache=True)

    def ours_decode():
        logits, cache = ours_prefill()
        token = int(logits[-1].argmax())
        times = []
        for _ in range(steps):
            times.append(timed(lambda: ours.forward([token], cache=cache)))
        return statistics.median(times)

    def hf_decode():
        out = hf_prefill()
        past, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
        times = []
        with torch.no_grad():
            for _ in range(steps):
                start = time.perf_counter()
                out = hf(token, past_key_values=past, use_cache=True)
                times.append(time.perf_counter() - start)
                past = out.past_key_values
        return statistics.median(times)

    ours_prefill(), hf_prefill()  # warm up
    pa, pb, da, db, fa = [], [], [], [], []
    for _ in range(repeats):
        pa.append(timed(ours_prefill))
        pb.append(timed(hf_prefill))
        da.append(ours_decode())
        db.append(hf_decode())
        fa.append(statistics.median(timed(weight_reads(ours)) for _ in range(steps)))
    ms = 1000.0
    return [
        (
            "SmolLM2 prefill, 22 tokens (ms)",
            statistics.median(pa) * ms,
            statistics.median(pb) * ms,
            "lower is better",
        ),
        (
            "SmolLM2 decode (ms/token)",
            statistics.median(da) * ms,
            statistics.median(db) * ms,
            f"median of {steps} steps x {repeats}; lower is better, target ratio <= 0.5",
        ),
        (
            "SmolLM2 weight reads alone (ms)",
            statistics.median(fa) * ms,
            statistics.median(db) * ms,
            "a decode step's matrix products and nothing else, vs HF's whole step: the float32 floor",
        ),
    ]


def weight_reads(model):
    """Return a function doing one decoding step's matrix-vector products, and nothing else.

    The same products on the same float32 weights in the same layout (q|k|v and
    gate|up side by side) as a decoding step, with the output layer: the time
    it takes to stream the 135 M float32 parameters through the cores once, a
    floor for any decoder that reads them in float32 once per token.
    """
    import numpy as np

    from attnlab.engine.decode import joined_projections

    cfg = model.config
    x = np.ones((1, cfg.d_model), np.float32)
    hidden = np.ones((1, cfg.d_ff), np.float32)
    layers = [(*joined_projections(p), p.attn.w_o, p.mlp.w_down) for p in model.layers]

    def step():
        for qkv, gate_up, w_o, w_down in layers:
            x @ qkv, x @ w_o, x @ gate_up, hidden @ w_down
        model.embedding @ x[0]

    return step


@contextlib.contextmanager
def threads(n: int | None):
    """Limit NumPy's BLAS and torch to ``n`` threads (None: leave both as they are)."""
    if n is None:
        yield
        return
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        with threadpool_limits(n, user_api="blas"):
            yield
    finally:
        torch.set_num_threads(before)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--decode-steps", type=int, default=20)
    parser.add_argument("--only", choices=("minilm", "smollm2"))
    parser.add_argument("--threads", type=int, help="limit NumPy's BLAS and torch to this many threads")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # the peers' deprecation notices would bury the table
    import numpy as np
    import torch

    rows = []
    with threads(args.threads):
        if args.only in (None, "minilm"):
            rows += bench_minilm(args.repeats)
        if args.only in (None, "smollm2"):
            rows += bench_smollm2(args.repeats, args.decode_steps)
        used = torch.get_num_threads()
    print(
        f"numpy {np.__version__}, torch {torch.__version__} ({used} threads), "
        f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'measure':34} {'attnlab':>10} {'peer':>10} {'ratio':>7}  note")
    for name, ours, peer, note in rows:
        print(f"{name:34} {ours:10.2f} {peer:10.2f} {ours / peer:7.2f}  {note}")


if __name__ == "__main__":
    main()
