"""Compiled code takes addresses only of arrays that outlive their use.

numba frees an array that a compiled function made as soon as the function no longer names it
(it deletes each variable after its last use), whatever integers still hold the array's address.
``scratch = np.zeros(n); s_at = np.int64(scratch.ctypes.data)`` followed by a loop that writes at
``s_at`` writes into freed memory: memory that another allocation, on another thread, may already
hold. The shared products did this with their tile scratch (quant/share.py): under load, with
threads allocating beside them, a product came out with other bits and a worker aborted on a
corrupted heap. So every address that compiled code takes is of one of its parameters, which its
caller keeps alive for the whole call; an array the function makes itself is handed on as the
array (``kernels.tile_rows_with(..., scratch)``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

import attnlab
from attnlab.engine.fast.quant import kernels

ROOT = Path(attnlab.__file__).parent


def _compiled_functions():
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef) and "jit" in " ".join(map(ast.unparse, node.decorator_list)):
                yield path, node


def _addresses_of_locals(fn: ast.FunctionDef) -> list[str]:
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    wrong = []
    for node in ast.walk(fn):
        # X.ctypes.data where X is a name the function did not receive
        if (isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.value, ast.Attribute)
                and node.value.attr == "ctypes" and isinstance(node.value.value, ast.Name)
                and node.value.value.id not in params):  # fmt: skip
            wrong.append(f"{fn.name}: {ast.unparse(node)} (line {node.lineno})")
    return wrong


def test_compiled_code_takes_addresses_only_of_its_parameters():
    found = list(_compiled_functions())
    names = {fn.name for _, fn in found}
    assert {"_run", "helper_wait", "tile_rows", "pack_into", "matvec_parts"} <= names  # the scan sees them
    wrong = [f"{path.relative_to(ROOT)}: {w}" for path, fn in found for w in _addresses_of_locals(fn)]
    assert wrong == []


def test_the_scan_finds_an_address_of_a_local_array():
    bad = ast.parse(
        "@_jit(error_model='numpy')\n"
        "def f(n, x):\n"
        "    scratch = np.zeros(n)\n"
        "    s_at = np.int64(scratch.ctypes.data)\n"
        "    x_at = np.int64(x.ctypes.data)\n"
    ).body[0]
    assert _addresses_of_locals(bad) == ["f: scratch.ctypes.data (line 4)"]


def test_packing_the_last_few_tokens_element_by_element_gives_the_blocks_bits(rng):
    """pack_into's last block of fewer than 8 tokens (no scratch block any more): the same layout as
    the whole blocks, zeros past the last token, for every count of tokens around the tiles' edges."""
    for n_t in (1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 63, 64, 65):
        x = rng.standard_normal((n_t, 48)).astype(np.float32)
        size, width = kernels.packed_size(n_t, 48)
        packed = np.full(size, np.nan, np.float32)
        kernels.pack_into(x, packed, width)
        want = np.zeros(size, np.float32)
        n_tiles = -(-n_t // 32)
        for i in range(n_tiles):
            w = 32 if i < n_tiles - 1 else width
            tile = np.zeros((48, w), np.float32)
            rows = x[32 * i : 32 * i + w]
            tile[:, : len(rows)] = rows.T
            want[i * 32 * 48 : i * 32 * 48 + 48 * w] = tile.ravel()
        assert packed.tobytes() == want.tobytes(), n_t
