"""How long a GGUF with a large vocabulary takes to read: discovery's header, the tokenizer, gguf's reader.

    python benchmarks/bench_discover.py [--vocab 262144] [--repeats 3]
    python benchmarks/bench_discover.py --smoke

It writes a GGUF holding a byte-level vocabulary of ``--vocab`` tokens, as many merges and one
small tensor (Gemma 3's vocabulary has 262,144 tokens), then times, each in a fresh process
(the file in the page cache: it was just written):

- ``discover.gguf_header``: metadata and tensor table, the arrays skipped by their lengths
  (what ``attnlab models`` reads of every file);
- ``tokens.from_gguf_file``: the header with the tokenizer's arrays decoded, then the
  ``tokenizers`` BPE built from them;
- the peer: ``gguf.GGUFReader`` opening the same file (a NumPy view per field part);
- the floor: reading the file's bytes up to its last tensor's end once (``f.read``), nothing parsed.

Each row prints the best of ``--repeats`` runs and its ratio to the floor.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from smoke import add_flag

CHILD = r"""
import sys, time
from pathlib import Path
import gguf  # imported before the clock starts, by every run alike
from attnlab.models import discover, tokens
path, what = Path(sys.argv[1]), sys.argv[2]
end = discover.gguf_header(path).data_end if what == "floor" else 0
t0 = time.perf_counter()
if what == "header":
    discover.gguf_header(path)
elif what == "tokenizer":
    tokens.from_gguf_file(path)
elif what == "gguf-reader":
    gguf.GGUFReader(str(path))
else:
    with open(path, "rb") as f:
        f.read(end)
print(time.perf_counter() - t0)
"""
WHAT = ("header", "tokenizer", "gguf-reader", "floor")


def write(path: Path, n: int) -> None:
    """A GGUF with ``n`` byte-level tokens (the 256 bytes, then pairs, then triples), ``n - 256`` merges."""
    import gguf
    import numpy as np
    from tokenizers import pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    tokens, merges = list(alphabet), []
    pairs = [a + b for a in alphabet for b in alphabet]
    for left, right in [(p[0], p[1]) for p in pairs] + [(p, c) for p in pairs for c in alphabet]:
        if len(tokens) == n:
            break
        tokens.append(left + right)
        merges.append(f"{left} {right}")
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("llama-bpe")
    writer.add_token_list(tokens)
    writer.add_token_types([1] * len(tokens))
    writer.add_token_merges(merges)
    writer.add_tensor("token_embd.weight", np.zeros((4, 32), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def timed(path: Path, what: str) -> float:
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), what], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr)
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocab", type=int, default=262_144)
    parser.add_argument("--repeats", type=int, default=3)
    add_flag(parser)
    args = parser.parse_args()
    vocab, repeats = (4_096, 1) if args.smoke else (args.vocab, args.repeats)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "vocab.gguf"
        write(path, vocab)
        size = path.stat().st_size / 2**20
        print(f"a GGUF of {vocab:,} tokens and {vocab - 256:,} merges: {size:.1f} MiB")
        best = {what: min(timed(path, what) for _ in range(repeats)) for what in WHAT}
    floor = best["floor"]
    print(f"{'read':<42}{'best (ms)':>12}{'x floor':>10}")
    rows = [
        ("discover.gguf_header (arrays skipped)", "header"),
        ("tokens.from_gguf_file (vocabulary + BPE)", "tokenizer"),
        ("peer: gguf.GGUFReader", "gguf-reader"),
        ("floor: the file's bytes, read once", "floor"),
    ]
    for label, what in rows:
        print(f"{label:<42}{best[what] * 1e3:>12.1f}{best[what] / floor:>10.1f}")


if __name__ == "__main__":
    main()
