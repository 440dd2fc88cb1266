"""GGUF's block formats that attnlab multiplies on: their codes and sizes.

Named once here, for the products (``quant``) and the kernels' IR (``quant.ir``),
so that neither imports the other. A format is known by its GGUF name
(``"Q4_K"``); the kernels take its code. A stored *block* holds
``BLOCK_WEIGHTS`` weights in ``BLOCK_BYTES`` bytes: 32 weights for the float
types and the legacy quants, a super-block of 256 for the K-quants. Every sum
steps through a row 32 weights at a time (``BLOCK``), whatever the format
(quant.ir's order).

The float formats are blocks too: 32 float32, float16 or bfloat16 numbers
widened (exactly) to float32 as they are read, so a float16 matrix streams
half the bytes of its float32 copy.
"""

from __future__ import annotations

BLOCK = 32  # weights per step of a sum (a K-quant's super-block is 8 of them)
SUPER = 256  # weights per K-quant super-block (QK_K)

# The codes the kernels take. Q4_1 and Q8_0 keep 0 and 1 (the first two formats).
Q4_1, Q8_0, F32, F16, BF16, Q4_0, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K = range(11)

FORMATS = {
    "F32": F32, "F16": F16, "BF16": BF16,
    "Q4_0": Q4_0, "Q4_1": Q4_1, "Q5_0": Q5_0, "Q5_1": Q5_1, "Q8_0": Q8_0,
    "Q4_K": Q4_K, "Q5_K": Q5_K, "Q6_K": Q6_K,
}  # fmt: skip
NAMES = {code: name for name, code in FORMATS.items()}
# bytes a stored block takes (gguf.constants.GGML_QUANT_SIZES, per block of BLOCK_WEIGHTS)
BLOCK_BYTES = {
    F32: 4 * BLOCK, F16: 2 * BLOCK, BF16: 2 * BLOCK,
    Q4_0: 18, Q4_1: 20, Q5_0: 22, Q5_1: 24, Q8_0: 34,
    Q4_K: 144, Q5_K: 176, Q6_K: 210,
}  # fmt: skip
BLOCK_WEIGHTS = {code: SUPER if code in (Q4_K, Q5_K, Q6_K) else BLOCK for code in BLOCK_BYTES}
FLOATS = (F32, F16, BF16)  # stored as numbers, not quants


class UnknownFormat(ValueError):
    """A block format the products cannot read exactly: refused by name, never approximated.

    ``fmt``: the name asked for; ``known``: the names the products read.
    """

    def __init__(self, fmt: object) -> None:
        self.fmt = fmt
        self.known = tuple(FORMATS)
        super().__init__(f"unknown block format {fmt!r:.40}; use one of {', '.join(self.known)}")
