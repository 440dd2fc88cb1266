"""The fast paths, each checked against the readable reference in ``attnlab.engine``.

Compiled kernels (numba), products on quantized blocks, the thread pools and the
kernels' IR. The reference never imports this package; tests compare the two.
"""
