"""Real models on attnlab's engine vs their reference implementations, same run, medians.

    python benchmarks/bench_models.py [--repeats 5] [--decode-steps 20] [--threads N] [--only smollm2]
    python benchmarks/bench_models.py --views [--only minilm]   # the page at 256 tokens (bench_page_views.py)
    python benchmarks/bench_models.py --model PATH [--model PATH2]  # any model you have, vs HF/llama.cpp
    python benchmarks/bench_models.py --smoke   # tiny: checks that it runs (tests/benchmarks)

- MiniLM: load time, and sentences per second encoding a batch of 32 sentences
  (~12 tokens each) vs sentence-transformers (float32, CPU). Target: ratio >= 0.9.
- SmolLM2-135M-Instruct, on one GGUF file (layers Q4_1, embeddings Q8_0), one
  prompt, the same thread count for everyone:
    attnlab q4_1    products on the file's blocks (the default path)
    attnlab f32     the float32 reference path (gguf's values, from the weight cache)
    HF              Hugging Face transformers on the same GGUF, dequantized to float32
    llama.cpp       llama-cpp-python on the same GGUF, when it is installed: it is
                    never a dependency, and builds llama.cpp from source on install
                    (``pip install llama-cpp-python``: cmake and a C++ compiler,
                    ~6 min on an idle 2-core machine, ~25 min on a busy one)
  Rows: load time (each in a fresh process; "cold" builds the weight cache in an
  empty folder; llama.cpp runs in a process of its own throughout), prefill of
  22 and 256 tokens, decode time per token (median of the steps after a
  22-token prefill), and a 256-token trace with every layer's and head's q, k,
  v, scores and weights kept. Targets: decode <= 1.0x llama.cpp (a GGUF's, this one's too),
  prefill <= 0.5x HF, load < 1 s warm and < 15 s cold, the trace < 2 s.
  Prefill is the prompt pass that generation makes before its first token:
  every layer on every prompt token (the KV cache filled), the output layer on
  the last token only. Each peer runs it as its own generation does: attnlab's
  ``Decoder.prefill`` (what ``generate`` calls), HF with ``logits_to_keep=1``
  (what its ``generate()`` passes), llama.cpp's ``eval`` (it keeps the last
  token's logits). "forward 22, all logits" also runs the output layer on
  every prompt token (attnlab's ``forward``, HF's default), for comparison.
  The floor: the bytes a decoding step must read (the q4_1 path's blocks: every
  block's product matrices and the output layer, as the model stores them) over
  the read bandwidth this machine shows (a NumPy reduction over 512 MB); for
  prefill, the products' FLOPs (2 x tokens x the layers' multiply-adds a token,
  counted from the model's Architecture, plus the output layer's) over the
  thread count times one thread's best
  float32 multiply-add rate here (the higher of OpenBLAS's sgemm and our tile
  kernel on values already in cache): exact float32 arithmetic cannot do fewer
  multiply-adds, nor these cores more of them a second.

Measurements alternate the peers (ours, theirs, ...) so all see the same machine
load, with a 50 ms pause between peers so that one's spinning threads (torch's
OpenMP spins ~15 ms after a call, llama.cpp's and our helpers ~1 ms) are idle
before the next one runs. Each side
runs as a user gets it: attnlab holds BLAS to one thread (its numbers never
depend on the thread count) and shares products among its own threads;
``--threads N`` gives torch, llama.cpp and attnlab N threads (default: the
cores this process may use). The peers are torch, sentence-transformers and
transformers (the test oracles) and llama-cpp-python: each one missing here is
skipped, with the reason printed.

``--smoke``: one repeat, 2 decode steps, a 4-sentence batch, 32 tokens instead of
256, each load once (the cold load left out), small floor measurements.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

from smoke import add_flag, missing, skipped

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

NEEDS = ("models",)  # what its smoke run needs beyond the test extra (tests/benchmarks)

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
PAUSE_S = 0.05
MS = 1000.0


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def in_fresh_process(code: str, env: dict | None = None) -> float:
    """Seconds the ``code``'s last line printed, run in a new interpreter (imports not counted)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return float(done.stdout.strip().splitlines()[-1])


LOAD = """
import time
from attnlab.models.families import {family}  # its import first: imports are not counted
from attnlab.models.load import {opener}
start = time.perf_counter()
m = {opener}({args})
print(time.perf_counter() - start)
"""


TRACE = """
import statistics, time
from attnlab.models.load import smollm2
m = smollm2(weights="q4_1")
text = {text!r}
m.trace(text, details=True)  # compiled kernels loaded, memory first touched
times = []
for _ in range({runs}):
    start = time.perf_counter()
    m.trace(text, details=True)
    times.append(time.perf_counter() - start)
print(statistics.median(times))
"""


def bench_minilm(repeats: int, smoke: bool = False) -> list[tuple]:
    from attnlab.models import files
    from attnlab.models.load import minilm

    batch = BATCH[:4] if smoke else BATCH
    load = statistics.median(in_fresh_process(LOAD.format(family="bert", opener="minilm", args=""))
                             for _ in range(1 if smoke else 3))  # fmt: skip
    ours = minilm()
    theirs, their_load = None, None
    if reason := missing("torch", "sentence_transformers"):
        skipped("sentence-transformers, the MiniLM peer", reason)
    else:
        from sentence_transformers import SentenceTransformer

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            theirs = SentenceTransformer(str(files.minilm_dir()), device="cpu")
            their_load = time.perf_counter() - start
    n_tok = ours.tokenize(batch).mask.sum(axis=1).mean()
    ours.encode(batch)  # warm up
    if theirs is not None:
        theirs.encode(batch, batch_size=32)
    a, b = [], []
    for _ in range(repeats):
        a.append(timed(lambda: ours.encode(batch, batch_size=32)))
        if theirs is not None:
            b.append(timed(lambda: theirs.encode(batch, batch_size=32)))
    sa = len(batch) / statistics.median(a)
    sb = len(batch) / statistics.median(b) if b else None
    return [
        ("MiniLM load (s)", {"attnlab": load, "peer": their_load}, "attnlab in a fresh process; peer here"),
        ("MiniLM encode (sentences/s)", {"attnlab": sa, "peer": sb},
         f"batch {len(batch)}, {n_tok:.1f} tokens/sentence; higher is better, target ratio >= 0.9"),
    ]  # fmt: skip


LLAMA_CHILD = """
import json, statistics, sys, time
from llama_cpp import Llama
path, threads = sys.argv[1], int(sys.argv[2])
start = time.perf_counter()
llm = Llama(model_path=path, n_threads=threads, n_threads_batch=threads, n_ctx=1024, n_batch=512,
            verbose=False)
print(json.dumps(time.perf_counter() - start), flush=True)
for line in sys.stdin:
    ask = json.loads(line)
    llm.reset()
    start = time.perf_counter()
    llm.eval(ask["ids"])
    took = time.perf_counter() - start
    if ask["steps"]:
        times = []
        for _ in range(ask["steps"]):
            start = time.perf_counter()
            llm.eval(ask["ids"][-1:])
            times.append(time.perf_counter() - start)
        took = statistics.median(times)
    print(json.dumps(took), flush=True)
"""


class Llama:
    """llama.cpp (llama-cpp-python) in a process of its own, asked in turn with the other peers.

    Its own process: as a user runs it, without torch's OpenMP runtime beside its own.
    """

    def __init__(self, path, threads: int) -> None:
        import importlib.util

        if importlib.util.find_spec("llama_cpp") is None:
            raise ImportError("llama-cpp-python is not installed")
        self.child = subprocess.Popen([sys.executable, "-c", LLAMA_CHILD, str(path), str(threads)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
        self.load_s = self._answer()

    def _answer(self) -> float:
        line = self.child.stdout.readline()
        if not line:
            raise RuntimeError("llama.cpp's process ended")
        return float(line)

    def _ask(self, ids, steps: int) -> float:
        self.child.stdin.write(json.dumps({"ids": [int(i) for i in ids], "steps": steps}) + "\n")
        self.child.stdin.flush()
        return self._answer()

    def prefill(self, ids) -> float:
        return self._ask(ids, 0)

    def decode(self, ids, steps: int) -> float:
        return self._ask(ids, steps)

    def close(self) -> None:
        self.child.stdin.close()
        self.child.wait(30)


def prefill_ours(model, tokens, every_logit: bool = False):
    """A call that runs the prompt as generation does (``prefill``: the last token's logits), or
    ``forward`` with every position's logits; an encoder's forward on the tokens."""
    if not model.arch.causal:
        return lambda: model.forward(tokens)
    if every_logit:
        return lambda: model.forward(tokens, cache=model.new_cache())
    return lambda: model.prefill(tokens, cache=model.new_cache())


def prefill_hf(hf, tokens, every_logit: bool = False, causal: bool = True):
    """The same for HF: ``logits_to_keep=1`` as its ``generate()`` passes (0: every position's logits);
    an encoder's forward (``causal=False``)."""
    import torch

    t = torch.tensor([list(tokens)])
    keep = {"use_cache": True, "logits_to_keep": 0 if every_logit else 1} if causal else {}

    def run():
        with torch.no_grad():
            return hf(t, **keep)

    return run


def decode_ours(model, ids, steps: int) -> float:
    """Median seconds of one decoding step after the prompt ``ids`` (the cache filled by it)."""
    cache = model.new_cache()
    model.forward(ids, cache=cache)
    return statistics.median(timed(lambda: model.forward([ids[-1]], cache=cache)) for _ in range(steps))


def decode_hf(hf, ids, steps: int) -> float:
    import torch

    with torch.no_grad():
        past = hf(torch.tensor([list(ids)]), use_cache=True).past_key_values
        token = torch.tensor([[ids[-1]]])
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            past = hf(token, past_key_values=past, use_cache=True).past_key_values
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def load_times(smoke: bool = False) -> dict:
    """Load times in fresh processes: q4_1 and float32 warm; float32 cold into an empty cache folder."""
    q4 = LOAD.format(family="llama", opener="smollm2", args="weights='q4_1'")
    f32 = LOAD.format(family="llama", opener="smollm2", args="weights='float32'")
    in_fresh_process(f32)  # the weight cache exists from here on (built now if it was not)
    runs = 1 if smoke else 3
    out = {
        "q4_1": statistics.median(in_fresh_process(q4) for _ in range(runs)),
        "f32": statistics.median(in_fresh_process(f32) for _ in range(runs)),
    }
    if smoke:
        skipped("the cold float32 load", "a smoke run does not rebuild the weight cache")
        return out
    with tempfile.TemporaryDirectory(prefix="attnlab-bench-cache-") as empty:
        out["f32 cold"] = in_fresh_process(f32, env={"ATTNLAB_CACHE_DIR": empty})
    return out


def load_hf(path, causal: bool = True, who: str = "the SmolLM2 peer"):
    """Hugging Face's model from the same GGUF file (dequantized to float32) or folder, as float32, and
    its load time (None when transformers is absent)."""
    if reason := missing("torch", "transformers"):
        skipped(f"Hugging Face transformers, {who}", reason)
        return None, None
    import torch
    from transformers import AutoModel, AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        cls = AutoModelForCausalLM if causal else AutoModel
        if path.suffix == ".gguf":
            hf = cls.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
        else:
            hf = cls.from_pretrained(str(path), dtype=torch.float32)
        took = time.perf_counter() - start
    return hf.eval(), took


def bench_smollm2(repeats: int, steps: int, threads: int, smoke: bool = False) -> list[tuple]:
    import numpy as np

    from attnlab.models import files
    from attnlab.models.load import smollm2

    path = files.smollm2_gguf()
    loads = load_times(smoke)
    q4, f32 = smollm2(weights="q4_1"), smollm2(weights="float32")
    hf, loads["HF"] = load_hf(path)
    if hf is None:
        del loads["HF"]
    try:
        llama = Llama(path, threads)
        loads["llama.cpp"] = llama.load_s
    except ImportError as error:
        skipped("llama.cpp, the decoding peer", f"{error} (pip install llama-cpp-python)")
        llama = None
    ids = q4.encode(PROMPT_22)
    assert len(ids) == 22, len(ids)
    n_long = 32 if smoke else 256
    long_ids = (ids * 12)[:n_long]

    peers = {"q4_1": q4, "f32": f32, "HF": hf, "llama.cpp": llama}
    peers = {k: v for k, v in peers.items() if v is not None}

    def measure(name, tokens=None, every_logit=False):
        """One measurement for peer ``name``: prefill (tokens), or decode (None)."""
        model = peers[name]
        if name in ("q4_1", "f32"):
            if tokens is None:
                return decode_ours(model, ids, steps)
            return timed(prefill_ours(model, tokens, every_logit))
        if name == "HF":
            return timed(prefill_hf(hf, tokens, every_logit)) if tokens else decode_hf(hf, ids, steps)
        return llama.prefill(tokens) if tokens else llama.decode(ids, steps)

    kinds = {"prefill 22": ids, f"prefill {n_long}": long_ids, "decode": None, "forward 22, all logits": ids}
    results = {kind: {name: [] for name in peers} for kind in kinds}
    for name in peers:  # warm up (compilation, first-touch of the weights)
        measure(name, ids)
        measure(name)
    for _ in range(repeats):
        for kind, tokens in kinds.items():
            every_logit = kind.startswith("forward")
            for name in peers:
                if every_logit and name == "llama.cpp":
                    continue  # its eval keeps the last logits only
                results[kind][name].append(measure(name, tokens, every_logit))
                time.sleep(PAUSE_S)
    if llama is not None:
        llama.close()
    text = q4.decode(long_ids)
    # in a process of its own, as the page's model worker runs it (here torch, HF's float32 model and
    # our float32 copy sit beside it: traces took ~1.8-1.9 s here against ~1.3-1.5 s alone)
    trace_s = [in_fresh_process(TRACE.format(text=text, runs=1 if smoke else max(3, repeats // 2)))]
    n_trace = len(q4.encode(text))

    rows = [("SmolLM2 load (s)", loads, "fresh process; f32 cold: cache built; target q4_1 < 1 s")]
    for kind in kinds:
        rows.append((f"SmolLM2 {kind} (ms{'/token' if kind == 'decode' else ''})",
                     {k: statistics.median(v) * MS for k, v in results[kind].items() if v}, ""))  # fmt: skip
    rows.append((f"SmolLM2 trace, {n_trace} tokens (ms)", {"q4_1": statistics.median(trace_s) * MS},
                 "every layer and head, q, k, v and scores kept; own process; target < 2000"))  # fmt: skip
    block_bytes = decode_bytes(q4)
    bandwidth = read_bandwidth(np, smoke)
    rows.append(("SmolLM2 decode floor (ms/token)", {"q4_1": block_bytes / bandwidth * MS},
                 f"{block_bytes / 1e6:.0f} MB of blocks a token at {bandwidth / 1e9:.1f} GB/s "
                 "(one core's NumPy read)"))  # fmt: skip
    output_layer = 2 * q4.arch.d_vocab * q4.arch.d_model  # FLOPs a token's logits cost
    sgemm, fma = sgemm_rate(np, smoke), fma_rate(np, smoke)
    rate = max(sgemm, fma) * threads
    for n, every in ((22, False), (n_long, False), (22, True)):
        f = 2 * n * layer_weight_count(q4) + output_layer * (n if every else 1)
        name = f"forward {n}, all logits" if every else f"prefill {n}"
        rows.append((f"SmolLM2 {name} floor (ms)", {"q4_1": f / rate * MS},
                     f"{f / 1e9:.1f} GFLOP at {rate / 1e9:.0f} GFLOP/s: {threads} x one thread's best "
                     f"(FMAs in cache {fma / 1e9:.0f}, sgemm 256x576x1536 {sgemm / 1e9:.0f})"))  # fmt: skip
    return rows


def bench_path(model: str, repeats: int, steps: int, threads: int, smoke: bool = False) -> list[tuple]:
    """Any model ``attnlab.load`` opens (a path, or a name ``attnlab models`` lists) against HF
    transformers on the same file, and llama.cpp on a GGUF where it is installed: prefill of 22
    tokens and of 256 (or the model's context less the decode steps, where shorter), decode a token
    (decoders), with the floors."""
    from pathlib import Path

    import numpy as np

    import attnlab

    start = time.perf_counter()
    ours = attnlab.load(model)
    ours_load = time.perf_counter() - start
    source = Path(ours.source)
    causal = ours.arch.causal
    title = f"{ours.name} ({ours.path})"
    hf, hf_load = load_hf(source, causal, who=f"the peer of {ours.name}")
    llama = None
    if causal and source.suffix == ".gguf":
        try:
            llama = Llama(source, threads)
        except ImportError as error:
            skipped("llama.cpp, the GGUF peer", f"{error} (pip install llama-cpp-python)")
    words = ours.to_tokens(PROMPT_22 * 4)
    ids = words[:22]
    room = ours.arch.n_ctx - steps - 2 if causal else ours.arch.n_ctx
    n_long = min(32 if smoke else 256, room)
    long_ids = (words * (n_long // max(1, len(words)) + 1))[:n_long]
    run = "prefill" if causal else "forward"  # an encoder's one pass over the text
    kinds = {f"{run} 22": ids, f"{run} {n_long}": long_ids}
    if causal:
        kinds["decode"] = None
    peers = {"attnlab": ours, "HF": hf, "llama.cpp": llama}
    peers = {k: v for k, v in peers.items() if v is not None}

    def measure(name, tokens):
        if name == "attnlab":
            return timed(prefill_ours(ours, tokens)) if tokens else decode_ours(ours, ids, steps)
        if name == "HF":
            return timed(prefill_hf(hf, tokens, causal=causal)) if tokens else decode_hf(hf, ids, steps)
        return llama.prefill(tokens) if tokens else llama.decode(ids, steps)

    results = {kind: {name: [] for name in peers} for kind in kinds}
    for name in peers:  # warm up
        for tokens in kinds.values():
            measure(name, tokens)
    for _ in range(repeats):
        for kind, tokens in kinds.items():
            for name in peers:
                results[kind][name].append(measure(name, tokens))
                time.sleep(PAUSE_S)
    if llama is not None:
        llama.close()
    loads = {"attnlab": ours_load, "HF": hf_load, "llama.cpp": llama.load_s if llama else None}
    rows = [(f"{title} load (s)", {k: v for k, v in loads.items() if v is not None}, "this process")]
    for kind in kinds:
        unit = "ms/token" if kind == "decode" else "ms"
        rows.append((f"{title} {kind} ({unit})",
                     {k: statistics.median(v) * MS for k, v in results[kind].items()}, ""))  # fmt: skip
    count = layer_weight_count(ours)
    rate = max(sgemm_rate(np, smoke), fma_rate(np, smoke)) * threads
    output_layer = 2 * ours.arch.d_vocab * ours.arch.d_model if causal else 0
    for kind, tokens in kinds.items():
        if tokens is None:
            nbytes, bandwidth = decode_bytes(ours), read_bandwidth(np, smoke)
            note = f"{nbytes / 1e6:.1f} MB of weights a token at {bandwidth / 1e9:.1f} GB/s"
            rows.append((f"{title} decode floor (ms/token)", {"attnlab": nbytes / bandwidth * MS}, note))
        else:
            flops = 2 * len(tokens) * count + output_layer
            note = f"{flops / 1e9:.2f} GFLOP at {rate / 1e9:.0f} GFLOP/s ({threads} threads)"
            rows.append((f"{title} {kind} floor (ms)", {"attnlab": flops / rate * MS}, note))
    return rows


def print_path_rows(rows: list[tuple]) -> None:
    """The table of :func:`bench_path`'s rows: attnlab, HF and llama.cpp, the same-run ratios."""
    if not rows:
        return
    print(f"{'measure':58}{'attnlab':>11}{'HF':>11}{'llama.cpp':>11}  ratios (same run); note")
    for name, v, note in rows:
        cells = "".join(f"{v[k]:11.2f}" if k in v else f"{'':11}" for k in ("attnlab", "HF", "llama.cpp"))
        ratio = "; ".join(f"attnlab/{k} {v['attnlab'] / v[k]:.2f}" for k in ("HF", "llama.cpp")
                          if k in v and "floor" not in name)  # fmt: skip
        print(f"{name:58}{cells}  {'; '.join(x for x in (ratio, note) if x)}")


def layer_weight_count(model) -> int:
    """Multiply-adds a token costs in the layers' products (their weights' count), from the model's
    Architecture: in each of ``n_layer`` blocks, W_Q and W_O (d_model x n_head·d_head), W_K and W_V
    (d_model x n_kv_head·d_head), and the MLP's three (gated) or two (plain) d_model x d_ff matrices.
    Checked against the shapes of the matrices the model holds (:func:`products`)."""
    a = model.arch
    attention = 2 * a.d_model * a.d_head * (a.n_head + a.n_kv_head)
    mlp = (3 if a.mlp == "gated" else 2) * a.d_model * a.d_ff
    count = a.n_layer * (attention + mlp)
    held = sum(m.shape[0] * m.shape[1] for m in products(model))
    if held != count:
        raise RuntimeError(f"{model!r}: its Architecture counts {count} weights in its products, "
                           f"its blocks hold {held}")  # fmt: skip
    return count


def products(model):
    """Every block's product matrices as the model holds them (``model.weights.blocks``): attention's
    W_Q, W_K, W_V, W_O, then the MLP's (gate, up, down; or w_1, w_2 where the Architecture's MLP is
    plain). Each is a NumPy array or, on a blocks path, a QuantMatrix over the file's bytes."""
    mlp = ("w_gate", "w_up", "w_down") if model.arch.mlp == "gated" else ("w_1", "w_2")
    for block in model.weights.blocks:
        yield from (getattr(block.attn, name) for name in ("w_q", "w_k", "w_v", "w_o"))
        yield from (getattr(block.mlp, name) for name in mlp)


def decode_bytes(model) -> int:
    """Bytes of weights a decoding step reads in its products: every block's matrices as stored
    (q4_1 blocks, or float values) and the output layer (the tied token embeddings, or W_U)."""
    w = model.weights
    output = w.embed if model.arch.tied_output else w.unembed
    return sum(m.nbytes for m in products(model)) + output.nbytes


def fma_rate(np, smoke: bool = False) -> float:
    """FLOP/s of one thread's float32 multiply-adds at their best here: quant_ir's 32-token tile kernel
    (8 rows x 32 tokens of FMAs a step) on values already in cache, nothing else (best of 7; smoke: 1)."""
    import numba

    from attnlab.engine.fast.quant.ir import TILE_ROWS, tile32

    @numba.njit(nogil=True)
    def tiles(s, xp, c, n_in, reps):
        for _ in range(reps):
            tile32(s.ctypes.data, n_in * 4, n_in, xp.ctypes.data, c.ctypes.data)

    n_in, reps = 576, 20 if smoke else 2000
    rng = np.random.default_rng(0)
    s, xp = (rng.standard_normal(n * n_in).astype(np.float32) for n in (TILE_ROWS, 32))
    c = np.zeros(TILE_ROWS * 32, np.float32)
    tiles(s, xp, c, n_in, 1)
    best = min(timed(lambda: tiles(s, xp, c, n_in, reps)) for _ in range(1 if smoke else 7))
    return 2 * TILE_ROWS * n_in * 32 * reps / best


def sgemm_rate(np, smoke: bool = False) -> float:
    """FLOP/s of one thread's float32 GEMM here (NumPy's BLAS held to one thread; best of 7; smoke: 1)."""
    from attnlab.engine.threads import one_blas_thread

    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 576)).astype(np.float32)
    b = rng.standard_normal((1536, 576)).astype(np.float32)
    with one_blas_thread():
        a @ b.T
        best = min(timed(lambda: a @ b.T) for _ in range(1 if smoke else 7))
    return 2 * a.shape[0] * a.shape[1] * b.shape[0] / best


def read_bandwidth(np, smoke: bool = False) -> float:
    """Bytes per second one thread reads here: a NumPy reduction over 512 MB (median of 5; smoke: 16 MB)."""
    a = np.ones(1 << (21 if smoke else 26), dtype=np.uint64)
    np.bitwise_or.reduce(a)
    runs = [timed(lambda: np.bitwise_or.reduce(a)) for _ in range(1 if smoke else 5)]
    return a.nbytes / statistics.median(runs)


def set_cores(n: int) -> None:
    """Give every module of ours that shares work among its own threads ``n`` of them.

    Each one copies ``attnlab.engine.threads.CORES`` when it is imported, so the copies are
    set here, wherever the modules live, after the models (and the fast paths they use) are imported.
    """
    from attnlab.models.families import bert, llama  # noqa: F401 - their imports bring in every fast path

    for name, module in list(sys.modules.items()):
        if name.startswith("attnlab.") and isinstance(getattr(module, "CORES", None), int):
            module.CORES = n


def ratios(values: dict, name: str) -> str:
    """The same-run ratios that the targets are about."""
    out = []
    if "q4_1" in values and "llama.cpp" in values and "decode" in name:
        out.append(f"q4_1/llama.cpp {values['q4_1'] / values['llama.cpp']:.2f} (target <= 1.0)")
    if "q4_1" in values and "HF" in values and ("prefill" in name or "forward" in name):
        target = " (target <= 0.5)" if "prefill" in name else ""
        out.append(f"q4_1/HF {values['q4_1'] / values['HF']:.2f}{target}")
    if "q4_1" in values and "llama.cpp" in values and "prefill" in name:
        out.append(f"q4_1/llama.cpp {values['q4_1'] / values['llama.cpp']:.2f}")
    return "; ".join(out)


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter  # the docstring's layout, the llama.cpp build note included
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--decode-steps", type=int, default=20)
    parser.add_argument("--only", choices=("minilm", "smollm2"))
    parser.add_argument("--model", metavar="PATH", action="append",
                        help="any model attnlab opens (a folder, a .gguf file or a found name), against "
                             "HF and llama.cpp; may be repeated; instead of the shipped two")  # fmt: skip
    parser.add_argument("--threads", type=int, help="threads for torch, llama.cpp, attnlab (default: cores)")
    parser.add_argument("--views", action="store_true", help="the page at 256 tokens (bench_page_views.py)")
    add_flag(parser)
    args = parser.parse_args()
    if args.views:  # switching layer/head, hover, neuron view at the page (p50/p95 vs its floor)
        import bench_page_views

        smoke = ["--smoke"] if args.smoke else []
        bench_page_views.main(["--models", args.only or "minilm,smollm2", *smoke])
        return
    if args.smoke:
        args.repeats, args.decode_steps = 1, 2
    warnings.simplefilter("ignore")  # the peers' deprecation notices would bury the table
    import numpy as np

    from attnlab.engine import threads

    n = args.threads or threads.CORES
    set_cores(n)
    torch_version = "torch not installed"
    if not missing("torch"):
        import torch

        torch.set_num_threads(n)
        torch_version = f"torch {torch.__version__}"
    rows = []
    if args.model:
        for model in args.model:
            rows += bench_path(model, args.repeats, args.decode_steps, n, args.smoke)
    if args.only in (None, "minilm") and not args.model:
        rows += bench_minilm(args.repeats, args.smoke)
    if args.only in (None, "smollm2") and not args.model:
        rows += bench_smollm2(args.repeats, args.decode_steps, n, args.smoke)
    try:
        import llama_cpp

        peer = f"llama-cpp-python {llama_cpp.__version__}"
    except ImportError:
        peer = "llama.cpp not installed (pip install llama-cpp-python)"
    print(f"numpy {np.__version__}, {torch_version}, {peer}; {n} threads each, "
          f"cpus {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print_path_rows([r for r in rows if "attnlab" in r[1] and "peer" not in r[1]])
    minilm_rows = [r for r in rows if "attnlab" in r[1] and "peer" in r[1]]
    if minilm_rows:
        print(f"{'measure':34}{'attnlab':>11}{'s-t':>11}{'ratio':>8}  note (s-t: sentence-transformers)")
        for name, v, note in minilm_rows:
            peer_cells = f"{v['peer']:11.2f}{v['attnlab'] / v['peer']:8.2f}" if v["peer"] else f"{'':19}"
            print(f"{name:34}{v['attnlab']:11.2f}{peer_cells}  {note}")
    labels = ("q4_1", "f32", "HF", "llama.cpp", "f32 cold")
    smol = [r for r in rows if "attnlab" not in r[1]]
    if smol:
        print(f"{'measure':41}" + "".join(f"{label:>11}" for label in labels) + "  ratios (same run); note")
        for name, values, note in smol:
            cells = "".join(f"{values[k]:11.2f}" if k in values else f"{'':11}" for k in labels)
            print(f"{name:41}{cells}  {'; '.join(x for x in (ratios(values, name), note) if x)}")


if __name__ == "__main__":
    main()
