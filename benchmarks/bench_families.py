"""Every family attnlab reads, at SmolLM2-135M's shapes, against HF transformers on the same folder.

    python benchmarks/bench_families.py [--families qwen2,gemma2,...] [--repeats 3] [--decode-steps 20]
    python benchmarks/bench_families.py --smoke   # tiny: checks that it runs (tests/benchmarks)

Each family's tiny test model (``tests/familykit.py``: its options on, its own kind of tokenizer)
is built again at a realistic size, 30 layers of d_model 576, 9 query heads and 3 KV heads of 64,
d_ff 1536 (GPT-2: 9 heads of 64, no GQA; BERT: MiniLM's 6 layers of 384), random weights,
float32, saved with ``save_pretrained`` into a temporary folder; sliding windows as the families
ship them (4,096; Gemma 3 512), so a 256-token prompt is not cut by a tiny window. The
vocabulary is the tiny tokenizer's (a few hundred tokens), so the output layer costs next to
nothing here: these rows measure the blocks. Then ``bench_models.bench_path`` on each folder:
prefill of 22 and 256 tokens, a decoding step, same thread count for both, alternating, medians,
with the multiply-add and weight-read floors. attnlab runs the folder's float32 numbers (its
"float32" path); HF runs its default attention (SDPA).

``--smoke``: the tiny sizes (2 layers of 64), one repeat, 2 decode steps.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import warnings
from pathlib import Path

from smoke import add_flag, missing, skipped

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

NEEDS = ()  # torch and transformers (the test extra); no model package
TESTS = Path(__file__).resolve().parents[1] / "tests"

DECODER = dict(
    hidden_size=576,
    intermediate_size=1536,
    num_hidden_layers=30,
    num_attention_heads=9,
    num_key_value_heads=3,
    head_dim=64,
    max_position_embeddings=2048,
)
SIZES = {  # family -> its config at SmolLM2's shapes (the recipe's other options kept)
    "smollm2": DECODER,
    "llama3": DECODER,
    "mistral": {**DECODER, "sliding_window": 4096},
    "qwen2": DECODER,
    "qwen3": DECODER,
    "phi3": {**DECODER, "original_max_position_embeddings": 2048},
    "gemma": DECODER,
    "gemma2": {**DECODER, "query_pre_attn_scalar": 64, "sliding_window": 4096,
               "layer_types": ["sliding_attention", "full_attention"] * 15},  # fmt: skip
    "gemma3": {**DECODER, "query_pre_attn_scalar": 64, "sliding_window": 512,
               "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 5},  # fmt: skip
    "gpt2": dict(n_embd=576, n_layer=30, n_head=9, n_inner=1536, n_positions=1024),
    "bert": dict(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536),
}


def build(name: str, folder: Path, smoke: bool) -> Path:
    """The family's tiny model from tests/familykit.py, at SmolLM2's shapes unless ``smoke``, saved."""
    sys.path.insert(0, str(TESTS))
    import familykit

    recipe = familykit.RECIPES[name]
    if not smoke:
        config = dict(recipe.config)
        if name == "llama3":  # its rope scaling's original context stays below the longer positions
            config["rope_parameters"] = {**config["rope_parameters"], "original_max_position_embeddings": 512}
        recipe = dataclasses.replace(recipe, config={**config, **SIZES[name]})
    return familykit.write_folder(recipe, folder / name)


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--families", default=",".join(SIZES), help=f"comma-separated: {', '.join(SIZES)}")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--decode-steps", type=int, default=20)
    parser.add_argument("--threads", type=int, help="threads for torch and attnlab (default: cores)")
    add_flag(parser)
    args = parser.parse_args()
    if reason := missing("torch", "transformers"):
        skipped("every family (HF transformers builds the models and is the peer)", reason)
        return
    if args.smoke:
        args.repeats, args.decode_steps = 1, 2
    warnings.simplefilter("ignore")
    import torch

    import bench_models
    from attnlab.engine import threads

    n = args.threads or threads.CORES
    bench_models.set_cores(n)
    torch.set_num_threads(n)
    names = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = [f for f in names if f not in SIZES]
    if unknown:
        parser.error(f"unknown families {unknown}; use some of {', '.join(SIZES)}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="attnlab-families-") as folder:
        for name in names:
            path = build(name, Path(folder), args.smoke)
            rows += bench_models.bench_path(str(path), args.repeats, args.decode_steps, n, args.smoke)
    print(f"torch {torch.__version__}; {n} threads each, cpus {os.cpu_count()}, "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    bench_models.print_path_rows(rows)


if __name__ == "__main__":
    main()
