"""What a hook costs: SmolLM2's forward with hooks against the same forward without, per path.

    python benchmarks/bench_hooks.py [--repeats 7] [--tokens 22,256]
    python benchmarks/bench_hooks.py --smoke   # tiny: checks that it runs (tests/benchmarks)

For SmolLM2 on its Q4_1 blocks (the default path) and on float32 weights, and prompts of 22
and 256 tokens: ``m.forward(ids)`` (every position's logits), then the same forward with

- one hook that returns its argument, on ``blocks.18.attn.hook_z`` (the activation becomes a
  whole array where the forward kept a view);
- one on ``blocks.18.attn.hook_pattern`` (that layer's attention taken apart into three steps
  around it: scores, softmax, mix);
- one on every ``hook_pattern`` (every layer's attention taken apart);
- ``run_with_cache`` keeping every activation (542 hook points: each one copied out);
- the peer: HF transformers' forward on the same GGUF (dequantized to float32) with a PyTorch
  forward hook on layer 18's attention output, and without, where transformers is installed.

Medians of ``--repeats``, the variants in turn; the cost is the median's excess over the plain
forward's in the same run. A hook that returns its argument changes no bit (tested).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

from smoke import add_flag, missing, skipped

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

NEEDS = ("models",)
TEXT = "Once upon a time, in a small village by the sea, there lived an old fisherman who sold fresh fish"


def same(a, _name):
    return a


def variants(m, ids):
    every_pattern = [(f"blocks.{layer}.attn.hook_pattern", same) for layer in range(m.arch.n_layer)]
    return {
        "forward": lambda: m.forward(ids),
        "hook_z at layer 18": lambda: m.run_with_hooks(ids, fwd_hooks=[("blocks.18.attn.hook_z", same)]),
        "hook_pattern at layer 18": lambda: m.run_with_hooks(
            ids, fwd_hooks=[("blocks.18.attn.hook_pattern", same)]
        ),
        "hook_pattern at every layer": lambda: m.run_with_hooks(ids, fwd_hooks=every_pattern),
        "run_with_cache (every activation)": lambda: m.run_with_cache(ids),
    }


def hf_variants(hf, ids):
    import torch

    t = torch.tensor([ids])
    attention = hf.model.layers[18].self_attn

    def plain():
        with torch.no_grad():
            return hf(t)

    def hooked():
        handle = attention.register_forward_hook(lambda module, args, out: out)
        try:
            with torch.no_grad():
                return hf(t)
        finally:
            handle.remove()

    return {"HF forward": plain, "HF forward, hook at layer 18's attention": hooked}


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--tokens", default="22,256")
    add_flag(parser)
    args = parser.parse_args()
    lengths = [8] if args.smoke else [int(n) for n in args.tokens.split(",")]
    repeats = 1 if args.smoke else args.repeats
    warnings.simplefilter("ignore")
    import bench_models
    from attnlab.models import files
    from attnlab.models.load import smollm2

    models = {"q4_1": smollm2(weights="q4_1")}
    if not args.smoke:
        models["float32"] = smollm2(weights="float32")
    hf = None
    if reason := missing("torch", "transformers"):
        skipped("Hugging Face transformers, the hooked peer", reason)
    elif not args.smoke:
        hf, _ = bench_models.load_hf(files.smollm2_gguf())
    first = next(iter(models.values()))
    words = first.to_tokens(TEXT * 12)
    print(f"{'path':8}{'tokens':>7}  {'what':42}{'ms':>10}{'cost ms':>10}")
    for n in lengths:
        ids = words[:n]
        for path, m in models.items():
            runs = variants(m, ids)
            times = {name: [] for name in runs}
            for fn in runs.values():  # warm up
                fn()
            for _ in range(repeats):
                for name, fn in runs.items():
                    times[name].append(timed(fn))
            base = statistics.median(times["forward"])
            for name, t in times.items():
                ms = statistics.median(t) * 1e3
                print(f"{path:8}{n:7}  {name:42}{ms:10.2f}{ms - base * 1e3:10.2f}")
        if hf is not None:
            runs = hf_variants(hf, ids)
            times = {name: [timed(fn) for _ in range(repeats)] for name, fn in runs.items()}
            base = statistics.median(times["HF forward"])
            for name, t in times.items():
                ms = statistics.median(t) * 1e3
                print(f"{'HF f32':8}{n:7}  {name:42}{ms:10.2f}{ms - base * 1e3:10.2f}")


if __name__ == "__main__":
    main()
