"""GGUF's two block formats that attnlab multiplies on: their codes and sizes.

Named once here, for the products (``quant``) and the kernels' IR (``quant.ir``),
so that neither imports the other.
"""

BLOCK = 32  # weights per block, both formats
Q4_1, Q8_0 = 0, 1  # the format codes the kernels take
BLOCK_BYTES = {Q4_1: 20, Q8_0: 34}
FORMATS = {"Q4_1": Q4_1, "Q8_0": Q8_0}
