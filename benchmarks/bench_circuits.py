"""Circuits on SmolLM2 vs Hugging Face transformers with hooks, same run: the census and two patching sweeps.

    python benchmarks/bench_circuits.py [--paths q4_1,float32] [--tokens 256] [--threads N]
    python benchmarks/bench_circuits.py --smoke   # tiny: checks that it runs (tests/benchmarks)

- Census from a kept trace: the five head scores (``lab/realmodel/kinds.head_scores``) of
  270 heads at 256 tokens (the seeded repeated-word probe, cut to 256 tokens), from the
  trace the worker keeps (``SmolLM2.trace(details=True)``: q, k, v; the weights are
  recomputed from them, ``trace.all_weights()``). Target: <= 200 ms. Peer: the same
  scores written in torch (vectorised alike) from transformers' own attention weights
  (eager attention, ``output_attentions``); its forward pass is printed apart.
- A 270-head patching sweep on a 16-token prompt pair ("Paris is the capital of France.
  The Eiffel Tower is in the city of" / "Rome is the capital of Italy. The Colosseum is
  in the city of", logit difference " Paris" - " Rome" at the last token): every query
  head's output z, clean into corrupted. attnlab: ``circuits.patching.head_sweep``
  (each patch recomputes from its layer on, from the corrupted run's cached residual
  stream). Peer: one forward pass per patch with one hook on ``o_proj``'s input, the
  clean z from a hooked clean run, ``logits_to_keep=1``. Target: <= 0.5x the peer.
- A residual sweep of 30 layers x 16 positions (the stream entering each block):
  ``circuits.patching.residual_sweep``; the peer hooks each layer's input. Target: <= 0.5x.

Each sweep runs once a side in the same process: ours on each path, then the peer once
(transformers has one float32 path; its figure serves both rows). ``--repeats`` alternates
more rounds; the medians are printed. Wall and CPU seconds are printed. The
machine's floor for a sweep: the multiply-adds it cannot avoid (each patch's layers from
the patched one on, every weight once per token: 2 x T x weights) over the thread count
times one thread's best float32 rate here (``bench_models.fma_rate``/``sgemm_rate``); for
the census, the larger of the weights' recomputation (2 T^2 d_head FLOPs a head) at that
rate and one read of the 270 weight matrices at this machine's read bandwidth. The peer
needs torch and transformers (the test oracles): without them it is skipped, with the
reason printed, and ours run alone. ``--smoke``: the q4_1 path on one thread, a 64-token
census, the sweeps over the last layer, small floor measurements.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from smoke import add_flag, missing, skipped  # noqa: E402

NEEDS = ("models",)  # what its smoke run needs beyond the test extra (tests/benchmarks)

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # bench_models: the machine's rates
sys.path.insert(0, str(HERE.parent / "tests" / "models" / "circuits"))  # hfpeer: the oracle tests' peer

CLEAN = "Paris is the capital of France. The Eiffel Tower is in the city of"
CORRUPT = "Rome is the capital of Italy. The Colosseum is in the city of"
ANSWERS = (" Paris", " Rome")
PROBE_SEED = 7


def timed(fn):
    """(result, wall seconds, CPU seconds of this process) of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def load_hf(threads: int):
    """transformers' SmolLM2 on the same GGUF, float32 (None, with the reason printed, when absent)."""
    if reason := missing("torch", "transformers"):
        skipped("the peer, transformers with hooks", reason)
        return None
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    from attnlab.models import files

    torch.set_num_threads(threads)
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    path = files.smollm2_gguf()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = AutoModelForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, dtype=torch.float32
        )
    return model.eval()


# -- the census ---------------------------------------------------------------------------


def probe_text(model, tokens: int) -> str:
    """The repeated-word probe (seed PROBE_SEED), cut to ``tokens`` of SmolLM2's tokens."""
    from attnlab.lab.realmodel.probe import repeated_run

    text = repeated_run(PROBE_SEED, n_words=40, repeats=8)["text"]
    ids = model.encode(text)[:tokens]
    cut = model.decode(ids)
    if len(model.encode(cut)) != tokens:
        raise SystemExit(f"the probe does not cut to {tokens} tokens")
    return cut


def torch_scores(w, allowed, ids):
    """``kinds.head_scores`` in torch: w (L, H, T, T) float32 tensor; float64 sums, as ours."""
    import torch

    f64 = torch.float64
    n = w.shape[-1]
    previous = torch.diagonal(w, offset=-1, dim1=-2, dim2=-1).sum(-1, dtype=f64) / (n - 1)
    first = w[..., 1:, 0].sum(-1, dtype=f64) / (n - 1)
    own = torch.diagonal(w, dim1=-2, dim2=-1)[..., 1:].sum(-1, dtype=f64) / (n - 1)
    t = torch.as_tensor(ids)
    same = t[:, None] == t[None, :]
    earlier = torch.ones(n, n, dtype=torch.bool).tril(-1) & allowed
    duplicate = same & earlier
    induction = torch.zeros(n, n, dtype=torch.bool)
    induction[:, 1:] = same[:, :-1]
    induction &= earlier

    def share(targets):
        i, k = torch.nonzero(targets, as_tuple=True)
        return w[..., i, k].sum(-1, dtype=f64) / int(targets.any(1).sum())

    seen = allowed.sum(1)
    wide = seen > 1
    plogp = torch.clamp(w, min=torch.finfo(w.dtype).tiny).log() * w
    entropy = -plogp.sum(-1, dtype=f64)
    breadth = (entropy[..., wide] / torch.log(seen[wide].to(f64))).mean(-1)
    return {"previous": previous, "first": first, "induction": share(induction),
            "duplicate": share(duplicate), "self": own, "breadth": breadth}  # fmt: skip


def bench_census(model, hf, tokens: int, repeats: int) -> list[tuple]:
    from attnlab.lab.realmodel.kinds import head_scores

    text = probe_text(model, tokens)
    trace = model.trace(text, details=True)  # what the worker keeps
    ids = np.asarray(trace.ids)

    def ours():
        return head_scores(trace.all_weights(), trace.allowed, ids)

    weights = trace.all_weights()
    peer, extra = None, {}
    if hf is not None:
        import torch

        hf.set_attn_implementation("eager")
        with torch.no_grad():
            (out, fwd_wall, fwd_cpu) = timed(lambda: hf(torch.tensor([trace.ids]), output_attentions=True))
        kept = torch.stack(out.attentions)[:, 0]  # (L, H, T, T): the peer's kept weights
        hf.set_attn_implementation("sdpa")
        allowed = torch.as_tensor(trace.allowed)
        extra = {"forward with attentions": (fwd_wall, fwd_cpu)}

        def peer():
            return torch_scores(kept, allowed, trace.ids)

    rows = {"ours": [], "ours scores": [], "peer": []}
    for _ in range(repeats):
        mine, wall, cpu = timed(ours)
        rows["ours"].append((wall, cpu))
        rows["ours scores"].append(timed(lambda: head_scores(weights, trace.allowed, ids))[1:])
        if peer is not None:
            theirs, wall, cpu = timed(peer)
            rows["peer"].append((wall, cpu))
    flops = 2 * trace.n_layer * trace.n_head * tokens * tokens * trace.q.shape[-1]
    bytes_read = weights.nbytes
    note = f"{trace.n_layer * trace.n_head} heads x {tokens} tokens"
    if peer is not None:
        diff = max(float(np.max(np.abs(mine[k] - theirs[k].numpy()))) for k in mine if mine[k] is not None)
        note += f"; max |ours - peer| {diff:.1e}"
    return [("census", rows, extra, (flops, bytes_read), note)]


# -- the sweeps ---------------------------------------------------------------------------


def bench_sweeps(models: dict, hf, repeats: int, layers: range = range(30)):
    """Yield (path, row) as each sweep finishes: every path's, then the peer's once (HF has no paths).

    ``layers``: the layers patched (every one by default).
    """
    from attnlab.models.circuits import patching
    from attnlab.models.circuits.edits import SetHead, SetResid

    first = next(iter(models.values()))
    clean_ids, corrupt_ids = first.encode(CLEAN), first.encode(CORRUPT)
    right, other = (first.encode(a)[0] for a in ANSWERS)
    T = len(clean_ids)
    pairs = {path: patching.pair(m, clean_ids, corrupt_ids, answers=(right, other))
             for path, m in models.items()}  # fmt: skip
    peer_heads = peer_resid = None
    if hf is not None:
        from hfpeer import HFDecoder

        peer = HFDecoder(hf)
        hf_clean = peer.run(clean_ids)

        def ld(logits):
            return logits[right] - logits[other]

        def peer_heads():
            z = hf_clean["z"]
            return np.array([[ld(peer.patched_logits(corrupt_ids, SetHead(layer, h, z[layer, :, h])))
                              for h in range(9)] for layer in layers])  # fmt: skip

        def peer_resid():
            resid = hf_clean["resid"]
            return np.array([[ld(peer.patched_logits(corrupt_ids, SetResid(layer, "pre", resid[layer], (t,))))
                              for t in range(T)] for layer in layers])  # fmt: skip

    sweeps = [
        (f"{len(layers) * 9}-head patching sweep", lambda m, p: patching.head_sweep(m, p, layers=layers),
         peer_heads),
        (f"residual sweep {len(layers)} x {T}",
         lambda m, p: patching.residual_sweep(m, p, site="pre", layers=layers), peer_resid),
    ]  # fmt: skip
    n_layer = first.arch.n_layer
    per_layer = layer_weight_count(first) // n_layer
    for name, ours, theirs in sweeps:
        times: dict = {path: [] for path in models}
        peer_times = []
        for _ in range(repeats):
            done = {}
            for path, m in models.items():
                done[path], wall, cpu = timed(lambda m=m, p=pairs[path], sweep=ours: sweep(m, p))
                times[path].append((wall, cpu))
            if theirs is not None:
                values, wall, cpu = timed(theirs)
                peer_times.append((wall, cpu))
        for path, sweep in done.items():
            recomputed = sum(n_layer - layer for i, layer in enumerate(sweep.layers)
                             for j in range(len(sweep.columns)) if not sweep.skipped[i, j])  # fmt: skip
            flops = 2 * T * per_layer * recomputed
            note = (f"{sweep.values.size} patches ({int(sweep.skipped.sum())} equal to the corrupted run's), "
                    f"{recomputed} layer runs")  # fmt: skip
            if theirs is not None:
                note += f"; max |LD ours - peer| {float(np.max(np.abs(sweep.values - values))):.1e}"
            yield path, (name, {"ours": times[path], "peer": peer_times}, {}, (flops, 0), note)


def layer_weight_count(model) -> int:
    from bench_models import layer_weight_count as count

    return count(model)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", default="q4_1,float32")
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None)
    add_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        # 64 tokens: the probe's words repeat by then. One torch thread: on a busy machine its
        # spinning threads made 18 patched forward passes take minutes.
        args.paths, args.tokens, args.repeats, args.threads = "q4_1", 64, 1, 1

    from attnlab.engine.threads import CORES
    from attnlab.models.registry import get_model
    from bench_models import fma_rate, read_bandwidth, sgemm_rate

    threads = args.threads or CORES
    hf = load_hf(threads)
    shared = get_model("smollm2")
    rate = max(sgemm_rate(np, args.smoke), fma_rate(np, args.smoke)) * threads
    bandwidth = read_bandwidth(np, args.smoke)
    print(f"machine: {threads} threads, float32 {rate / 1e9:.0f} GFLOP/s, read {bandwidth / 1e9:.1f} GB/s")
    print("| path | what | attnlab wall (CPU) | HF peer wall (CPU) | ratio | floor | notes |")
    print("|---|---|---:|---:|---:|---:|---|")
    paths = args.paths.split(",")
    models = {path: shared if path == "q4_1" else shared.with_dtype(np.float32) for path in paths}
    if "q4_1" in models:
        for row in bench_census(models["q4_1"], hf, args.tokens, 1 if args.smoke else max(3, args.repeats)):
            print_row("q4_1", row, rate, bandwidth)
    for path, row in bench_sweeps(models, hf, args.repeats, range(29, 30) if args.smoke else range(30)):
        print_row(path, row, rate, bandwidth)


def print_row(path: str, row: tuple, rate: float, bandwidth: float) -> None:
    name, times, extra, (flops, bytes_read), note = row
    floor = max(flops / rate, bytes_read / bandwidth)
    ours = [statistics.median(x) for x in zip(*times["ours"], strict=True)]
    peer = [statistics.median(x) for x in zip(*times["peer"], strict=True)] if times["peer"] else None
    unit, scale = ("ms", 1e3) if ours[0] < 10 else ("s", 1.0)
    more = "".join(f"; {k} {v[0] * 1e3:.0f} ms" for k, v in extra.items())
    if "ours scores" in times:  # the scores alone, from weights already made: what the peer times
        alone = statistics.median(w for w, _ in times["ours scores"])
        more += f"; scores alone {alone * 1e3:.0f} ms"
        more += f", {alone / peer[0]:.2f} x the peer" if peer else ""
    theirs = "| "  # no peer here: its cells stay empty
    if peer:
        theirs = f"{peer[0] * scale:.2f} {unit} ({peer[1] * scale:.2f}) | {ours[0] / peer[0]:.2f}"
    print(f"| {path} | {name} | {ours[0] * scale:.2f} {unit} ({ours[1] * scale:.2f}) "
          f"| {theirs} | {floor * scale:.3f} {unit} | {note}{more} |", flush=True)  # fmt: skip

if __name__ == "__main__":
    main()
