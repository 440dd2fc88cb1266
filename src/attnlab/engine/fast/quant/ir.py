"""LLVM IR for the block-format kernels of :mod:`attnlab.engine.fast.quant`: dot products, values, tiles.

GGUF stores a weight row as blocks, little-endian (:mod:`attnlab.engine.fast.formats`
names their sizes). Weight j of a 32-weight block, or of a K-quant's sub-block:

- ``F32`` / ``F16`` / ``BF16`` (128 / 64 / 64 bytes for 32 weights): the number,
  widened exactly to float32 (a bfloat16's bits are a float32's top half).
- ``Q4_0`` (18 bytes): float16 ``d``, 16 bytes of 4-bit quants; byte j holds
  weight j in its low nibble and weight j + 16 in its high nibble.
  Weight = ``d * (q - 8)``.
- ``Q4_1`` (20 bytes): float16 ``d``, float16 ``m``, then the quants as Q4_0's.
  Weight = ``d * q + m``.
- ``Q5_0`` (22 bytes): ``d``, a uint32 ``qh`` whose bit j is weight j's fifth
  bit, the low nibbles as Q4_0's. Weight = ``d * (q - 16)``.
- ``Q5_1`` (24 bytes): ``d``, ``m``, ``qh``, nibbles. Weight = ``d * q + m``.
- ``Q8_0`` (34 bytes): float16 ``d``, then 32 int8 quants. Weight = ``q * d``.
- ``Q4_K`` (144 bytes, 256 weights in 8 sub-blocks of 32): ``d``, ``dmin``,
  12 bytes of 6-bit scales and mins (sub-block i < 4: ``s[i] & 63`` and
  ``s[i + 4] & 63``; i >= 4: ``s[i + 4] & 15 | (s[i - 4] >> 6) << 4`` and
  ``s[i + 4] >> 4 | (s[i] >> 6) << 4``), 128 bytes of nibbles (sub-blocks 2c
  and 2c + 1 are the low and high nibbles of bytes 32c .. 32c + 31).
  Weight = ``(d * sc) * q - (dmin * m)``.
- ``Q5_K`` (176 bytes): as Q4_K, with 32 bytes ``qh`` before the nibbles: bit
  i of ``qh[l]`` is the fifth bit of weight l of sub-block i.
- ``Q6_K`` (210 bytes): 128 bytes of low nibbles, 64 of high 2-bit pairs, 16
  int8 scales (one per 16 weights), float16 ``d``. Weight w (of 256):
  ``(d * scale[w // 16]) * (q - 32)``, q's low nibble from byte
  ``64 (w // 128) + w % 64`` (the high nibble when ``w % 128 >= 64``), its top
  two bits from byte ``128 + 32 (w // 128) + w % 32``, shifted by
  ``2 ((w % 128) // 32)``.

A weight's float32 value is computed exactly as ``gguf.quants`` dequantizes it
(``dequantize_blocks``): d, m and the scales widened to float32 (exact), q
converted to float32 (exact), then each float32 multiply, add or subtract
(``d * sc`` first, for the K-quants) rounded on its own: never fused into one
FMA (no fast-math flag is set, so LLVM may not contract them).

The dot product of a row with float32 activations ``x`` runs in two vectors
of 16 float32 lanes, the same on every CPU (LLVM splits or joins the vectors
to the machine's width; the lanes' arithmetic does not change). Lane j of
``lo`` accumulates weights ``32 b + j`` and lane j of ``hi`` weights
``32 b + 16 + j``, b = 0, 1, ... over the row's 32-weight steps in order (a
K-quant's super-block is 8 steps), each step one correctly
rounded fused multiply-add (``llvm.fma``: a single rounding whatever the
hardware; where it has no FMA unit, libm's ``fmaf`` gives the same bits).
Then ``v = lo + hi`` lane by lane, and the 16 lanes are summed as a fixed
tree: ``v[j] + v[j + 8]`` (j < 8), then ``+ [j + 4]``, ``+ [j + 2]``,
``+ [j + 1]``. So a row's sum is one fixed sequence of float32 operations,
the same for every format: no reassociation, no dependence on the thread,
the thread count, or the vector width. (Only the order differs from a BLAS
sum over the same float32 values, as one BLAS differs from another.)
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from attnlab.engine.fast.formats import (
    BF16,
    BLOCK,
    BLOCK_BYTES,
    BLOCK_WEIGHTS,
    F16,
    F32,
    NAMES,
    Q4_0,
    Q4_1,
    Q4_K,
    Q5_0,
    Q5_1,
    Q5_K,
    Q6_K,
    Q8_0,
)

_F32, _I8, _I32, _I64, _HALF = ir.FloatType(), ir.IntType(8), ir.IntType(32), ir.IntType(64), ir.HalfType()
_I16 = ir.IntType(16)
_LANES = 16


def _vec(t, n: int = _LANES) -> ir.VectorType:
    return ir.VectorType(t, n)


def _i64(v: int) -> ir.Constant:
    return ir.Constant(_I64, v)


def _splat(builder: ir.IRBuilder, value) -> ir.Value:
    one = builder.insert_element(ir.Constant(_vec(value.type), ir.Undefined), value, ir.Constant(_I32, 0))
    return builder.shuffle_vector(one, one, ir.Constant(_vec(_I32), [0] * _LANES))


def _fma(builder: ir.IRBuilder) -> ir.Function:
    module = builder.module
    name = "llvm.fma.v16f32"
    found = module.globals.get(name)
    if found is None:
        found = ir.Function(module, ir.FunctionType(_vec(_F32), [_vec(_F32)] * 3), name)
    return found


def _load_vec(builder: ir.IRBuilder, address, elem, offset: int = 0):
    """A vector of 16 ``elem`` at byte ``address + offset`` (any alignment)."""
    at = builder.inttoptr(builder.add(address, _i64(offset)), _vec(elem).as_pointer())
    return builder.load(at, align=1)


def _load_half(builder: ir.IRBuilder, address, offset: int):
    """The float16 at byte ``address + offset``, widened (exactly) to float32."""
    at = builder.inttoptr(builder.add(address, _i64(offset)), _HALF.as_pointer())
    return builder.fpext(builder.load(at, align=1), _F32)


def _block_values(builder: ir.IRBuilder, fmt: int, block):
    """The float32 values of the Q4_1 or Q8_0 block at byte address ``block``: (weights 0..15, 16..31)."""
    d = _splat(builder, _load_half(builder, block, 0))
    if fmt == Q4_1:
        m = _splat(builder, _load_half(builder, block, 2))
        q = _load_vec(builder, block, _I8, 4)
        low = builder.and_(q, ir.Constant(_vec(_I8), [15] * _LANES))
        high = builder.lshr(q, ir.Constant(_vec(_I8), [4] * _LANES))
        # (d * q) + m: two roundings, as gguf's float32 NumPy arithmetic
        return tuple(builder.fadd(builder.fmul(d, builder.uitofp(n, _vec(_F32))), m) for n in (low, high))
    q_low, q_high = _load_vec(builder, block, _I8, 2), _load_vec(builder, block, _I8, 2 + _LANES)
    return tuple(builder.fmul(builder.sitofp(q, _vec(_F32)), d) for q in (q_low, q_high))


def _ints(t, values) -> ir.Constant:
    """A constant vector of type ``t`` (an integer vector type) holding ``values`` (one, or one a lane)."""
    lanes = t.count
    return ir.Constant(t, list(values) if isinstance(values, (list, tuple, range)) else [values] * lanes)


def _nibble(builder: ir.IRBuilder, q, high: bool):
    """The low (``high`` False) or high nibbles of the byte vector ``q``."""
    if high:
        return builder.lshr(q, _ints(q.type, 4))
    return builder.and_(q, _ints(q.type, 15))


def _byte(builder: ir.IRBuilder, address, offset: int):
    """The byte at ``address + offset``, zero-extended to an i32."""
    at = builder.inttoptr(builder.add(address, _i64(offset)), _I8.as_pointer())
    return builder.zext(builder.load(at, align=1), _I32)


def _values_32(builder: ir.IRBuilder, fmt: int, block):
    """The float32 values of a 32-weight block of ``fmt`` (not Q4_1 or Q8_0, which ``_block_values``
    makes) at byte address ``block``: (weights 0..15, weights 16..31), as gguf computes them."""
    f32 = _vec(_F32)
    if fmt == F32:
        return _load_vec(builder, block, _F32), _load_vec(builder, block, _F32, 4 * _LANES)
    if fmt == F16:  # fpext: exact
        return tuple(builder.fpext(_load_vec(builder, block, _HALF, o), f32) for o in (0, 2 * _LANES))
    if fmt == BF16:  # the 16 bits are a float32's top half: moved, not computed
        halves = (_load_vec(builder, block, _I16, o) for o in (0, 2 * _LANES))
        return tuple(builder.bitcast(builder.shl(builder.zext(h, _vec(_I32)), _ints(_vec(_I32), 16)), f32)
                     for h in halves)  # fmt: skip
    d = _splat(builder, _load_half(builder, block, 0))
    if fmt == Q4_0:
        q = _load_vec(builder, block, _I8, 2)
        nibbles = (_nibble(builder, q, high) for high in (False, True))
        # d * (q - 8): q - 8 is exact in int8, then one rounding
        return tuple(builder.fmul(d, builder.sitofp(builder.sub(n, _ints(n.type, 8)), f32)) for n in nibbles)
    if fmt == Q5_0:  # d * (q - 16): q - 16 exact in int32, then one rounding
        qh = builder.load(builder.inttoptr(builder.add(block, _i64(2)), _I32.as_pointer()), align=1)
        q = _load_vec(builder, block, _I8, 6)
        fives = (_five_bits(builder, q, qh, half) for half in (0, 1))
        return tuple(builder.fmul(d, builder.sitofp(builder.sub(v, _ints(v.type, 16)), f32)) for v in fives)
    assert fmt == Q5_1, NAMES[fmt]  # (d * q) + m, two roundings
    m = _splat(builder, _load_half(builder, block, 2))
    qh = builder.load(builder.inttoptr(builder.add(block, _i64(4)), _I32.as_pointer()), align=1)
    q = _load_vec(builder, block, _I8, 8)
    fives = (_five_bits(builder, q, qh, half) for half in (0, 1))
    return tuple(builder.fadd(builder.fmul(d, builder.sitofp(v, f32)), m) for v in fives)


def _five_bits(builder: ir.IRBuilder, q, qh, half: int):
    """Q5_0 / Q5_1: weights ``16 half`` .. ``16 half + 15`` as <16 x i32> 0..31: the nibble of byte j of
    ``q`` (low for half 0, high for half 1) and bit ``16 half + j`` of the i32 ``qh`` as its fifth bit.
    (In 32-bit lanes: x86 has no byte shifts, and the float conversion takes 32-bit lanes anyway.)"""
    wide = builder.zext(q, _vec(_I32))
    nibble = builder.lshr(wide, _ints(wide.type, 4)) if half else builder.and_(wide, _ints(wide.type, 15))
    top = builder.shl(builder.lshr(qh, ir.Constant(_I32, 16 * half)), ir.Constant(_I32, 4))  # bit j -> j + 4
    bits = builder.lshr(_splat(builder, top), _ints(wide.type, range(_LANES)))
    bits = builder.and_(bits, _ints(wide.type, 16))
    return builder.or_(nibble, bits)


def _k_scales(builder: ir.IRBuilder, block, i: int):
    """Sub-block i's 6-bit scale and min of a Q4_K or Q5_K super-block (12 bytes at ``block + 4``), as i32."""
    s = [_byte(builder, block, 4 + j) for j in range(12)]
    c63, c15, c4, c6 = (ir.Constant(_I32, v) for v in (63, 15, 4, 6))
    if i < 4:
        return builder.and_(s[i], c63), builder.and_(s[i + 4], c63)
    sc = builder.or_(builder.and_(s[i + 4], c15), builder.shl(builder.lshr(s[i - 4], c6), c4))
    m = builder.or_(builder.lshr(s[i + 4], c4), builder.shl(builder.lshr(s[i], c6), c4))
    return sc, m


def _values_k(builder: ir.IRBuilder, fmt: int, block) -> list[tuple]:
    """The float32 values of a K-quant super-block at byte address ``block``: 8 pairs (weights 32 i ..
    32 i + 15, 32 i + 16 .. 32 i + 31), i = 0..7, as gguf computes them."""
    f32 = _vec(_F32)
    out = []
    if fmt == Q6_K:
        d = _load_half(builder, block, 208)
        for b in range(8):
            c, high, pair, shift = b // 4, (b % 4) // 2 == 1, b % 2, 2 * (b % 4)
            halves = []
            for h in (0, 1):  # lanes 0..15, 16..31: scales 2b, 2b + 1
                at = builder.inttoptr(builder.add(block, _i64(192 + 2 * b + h)), _I8.as_pointer())
                scale = builder.sitofp(builder.load(at, align=1), _F32)
                dl = _splat(builder, builder.fmul(d, scale))  # d * scale, rounded once
                low = _nibble(builder, _load_vec(builder, block, _I8, 64 * c + 32 * pair + 16 * h), high)
                top = _load_vec(builder, block, _I8, 128 + 32 * c + 16 * h)
                top = builder.and_(builder.lshr(top, _ints(top.type, shift)), _ints(top.type, 3))
                q = builder.sub(builder.or_(low, builder.shl(top, _ints(top.type, 4))), _ints(top.type, 32))
                halves.append(builder.fmul(dl, builder.sitofp(q, f32)))
            out.append(tuple(halves))
        return out
    d, dmin = _load_half(builder, block, 0), _load_half(builder, block, 2)
    nibbles_at = 16 if fmt == Q4_K else 48
    for i in range(8):
        sc, m = _k_scales(builder, block, i)
        dl = _splat(builder, builder.fmul(d, builder.uitofp(sc, _F32)))  # d * sc, rounded once
        ml = _splat(builder, builder.fmul(dmin, builder.uitofp(m, _F32)))  # dmin * m, rounded once
        halves = []
        for h in (0, 1):
            q = _load_vec(builder, block, _I8, nibbles_at + 32 * (i // 2) + 16 * h)
            q = _nibble(builder, q, i % 2 == 1)  # sub-blocks 2c, 2c + 1: bytes 32c.., low, high nibbles
            if fmt == Q5_K:
                top = _load_vec(builder, block, _I8, 16 + 16 * h)
                top = builder.and_(builder.lshr(top, _ints(top.type, i)), _ints(top.type, 1))
                q = builder.or_(q, builder.shl(top, _ints(top.type, 4)))
            # (dl * q) - ml: two roundings, as gguf's float32 NumPy arithmetic
            halves.append(builder.fsub(builder.fmul(dl, builder.uitofp(q, f32)), ml))
        out.append(tuple(halves))
    return out


def _values(builder: ir.IRBuilder, fmt: int, block) -> list[tuple]:
    """The float32 values of the stored block at byte address ``block``: one (lo, hi) pair of 16-lane
    vectors per 32 weights, in order (one pair, or 8 for a K-quant's super-block)."""
    if fmt in (Q4_1, Q8_0):
        return [_block_values(builder, fmt, block)]
    if BLOCK_WEIGHTS[fmt] == BLOCK:
        return [_values_32(builder, fmt, block)]
    return _values_k(builder, fmt, block)


def _block_loop(builder: ir.IRBuilder, n_blocks, carried: list, body):
    """Emit ``for b in range(n_blocks)`` carrying the values ``carried``; return their final values.

    ``body(b, values) -> new values``. The loop runs zero times when n_blocks <= 0.
    """
    entry = builder.block
    loop = builder.append_basic_block("blocks")
    done = builder.append_basic_block("blocks_done")
    builder.cbranch(builder.icmp_signed(">", n_blocks, _i64(0)), loop, done)
    builder.position_at_end(loop)
    b = builder.phi(_I64)
    b.add_incoming(_i64(0), entry)
    phis = []
    for value in carried:
        phi = builder.phi(value.type)
        phi.add_incoming(value, entry)
        phis.append(phi)
    new = body(b, phis)
    nxt = builder.add(b, _i64(1))
    tail = builder.block
    b.add_incoming(nxt, tail)
    for phi, value in zip(phis, new):
        phi.add_incoming(value, tail)
    builder.cbranch(builder.icmp_signed("<", nxt, n_blocks), loop, done)
    builder.position_at_end(done)
    out = []
    for start, value in zip(carried, new):
        phi = builder.phi(value.type)
        phi.add_incoming(start, entry)
        phi.add_incoming(value, tail)
        out.append(phi)
    return out


# Each block asks for the bytes this far ahead: the file's 4 KiB pages stop the CPU's own prefetcher
# at every page, and a one-row product streams slower from memory without it (1 KiB was as good as
# any distance from 0.5 to 4 KiB). A hint: it never faults and changes no value.
PREFETCH = 1024


def _prefetch(builder: ir.IRBuilder, address) -> None:
    """Ask for the cache line at ``address`` (a hint: never faults, changes no value)."""
    module = builder.module
    i8p = _I8.as_pointer()
    fn = module.globals.get("llvm.prefetch.p0i8")
    if fn is None:
        fnty = ir.FunctionType(ir.VoidType(), [i8p, _I32, _I32, _I32])
        fn = ir.Function(module, fnty, "llvm.prefetch.p0i8")
    ptr = builder.inttoptr(address, i8p)
    builder.call(fn, [ptr, ir.Constant(_I32, 0), ir.Constant(_I32, 3), ir.Constant(_I32, 1)])


def _tree_sum(builder: ir.IRBuilder, v):
    """Sum 16 lanes: lanes j and j + 8, then j and j + 4, j + 2, j + 1 (see the module docstring)."""
    n = _LANES
    while n > 1:
        h = n // 2
        first = builder.shuffle_vector(v, v, ir.Constant(_vec(_I32, h), list(range(h))))
        second = builder.shuffle_vector(v, v, ir.Constant(_vec(_I32, h), list(range(h, n))))
        v = builder.fadd(first, second)
        n = h
    return builder.extract_element(v, ir.Constant(_I32, 0))


def _prefetch_block(builder: ir.IRBuilder, fmt: int, block) -> None:
    """Ask for the block ``PREFETCH`` bytes ahead: one hint per 64-byte line a block spans."""
    for line in range(0, BLOCK_BYTES[fmt], 64):
        _prefetch(builder, builder.add(block, _i64(PREFETCH + line)))


def _dot_codegen(fmt: int):
    def codegen(context, builder, signature, args):
        row, x, n_blocks = args
        step = BLOCK_BYTES[fmt]
        zero = ir.Constant(_vec(_F32), [0.0] * _LANES)
        fma = _fma(builder)

        def body(b, accs):
            block = builder.add(row, builder.mul(b, _i64(step)))
            x_block = builder.add(x, builder.mul(b, _i64(BLOCK_WEIGHTS[fmt] * 4)))
            _prefetch_block(builder, fmt, block)
            low, high = accs
            for i, (w_low, w_high) in enumerate(_values(builder, fmt, block)):
                x_at = builder.add(x_block, _i64(i * BLOCK * 4))
                x_low, x_high = _load_vec(builder, x_at, _F32), _load_vec(builder, x_at, _F32, _LANES * 4)
                low, high = builder.call(fma, [w_low, x_low, low]), builder.call(fma, [w_high, x_high, high])
            return [low, high]

        low, high = _block_loop(builder, n_blocks, [zero, zero], body)
        return _tree_sum(builder, builder.fadd(low, high))

    return codegen


def _values_codegen(fmt: int):
    def codegen(context, builder, signature, args):
        row, out, n_blocks = args
        step = BLOCK_BYTES[fmt]

        def body(b, _carried):
            block = builder.add(row, builder.mul(b, _i64(step)))
            first = builder.add(out, builder.mul(b, _i64(BLOCK_WEIGHTS[fmt] * 4)))
            for i, (w_low, w_high) in enumerate(_values(builder, fmt, block)):
                at = builder.add(first, _i64(i * BLOCK * 4))
                builder.store(w_low, builder.inttoptr(at, _vec(_F32).as_pointer()), align=4)
                at_high = builder.add(at, _i64(_LANES * 4))
                builder.store(w_high, builder.inttoptr(at_high, _vec(_F32).as_pointer()), align=4)
            return []

        _block_loop(builder, n_blocks, [], body)
        return context.get_dummy_value()

    return codegen


_ADDRESSES = (types.int64, types.int64, types.int64)


def _dot_intrinsic(fmt: int):
    def typer(typingctx, row, x, n_blocks):
        return types.float32(*_ADDRESSES), _dot_codegen(fmt)

    typer.__name__ = f"dot_{NAMES[fmt].lower()}"
    return intrinsic(typer)


def _values_intrinsic(fmt: int):
    def typer(typingctx, row, out, n_blocks):
        return types.void(*_ADDRESSES), _values_codegen(fmt)

    typer.__name__ = f"values_{NAMES[fmt].lower()}"
    return intrinsic(typer)


# dot_<fmt>(row, x, n_blocks) -> float32: ``sum(values(row) * x)`` over ``n_blocks`` stored blocks of
# <fmt> at byte address ``row``, in the order above; x: the float32 activations' address.
_ORDER = (Q4_1, Q8_0, F32, F16, BF16, Q4_0, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K)
dot_q4_1, dot_q8_0, dot_f32, dot_f16, dot_bf16, dot_q4_0, dot_q5_0, dot_q5_1, dot_q4_k, dot_q5_k, dot_q6_k = (
    _dot_intrinsic(code) for code in _ORDER
)
# values_<fmt>(row, out, n_blocks): write the float32 values of ``n_blocks`` stored blocks at ``row``
# to the address ``out``.
(values_q4_1, values_q8_0, values_f32, values_f16, values_bf16, values_q4_0, values_q5_0, values_q5_1,
 values_q4_k, values_q5_k, values_q6_k) = (_values_intrinsic(code) for code in _ORDER)  # fmt: skip


# -- a prompt's products: register tiles over decoded rows ----------------------------------------
#
# For two rows of x or more, the stored rows are first made float32 in a scratch ("values", above),
# NR of them at a time, and x is packed transposed, a tile of up to 32 tokens at a time (k-major:
# the tile's tokens for k, then for k + 1, ...). The tile kernel keeps NR x (tile width) sums in
# registers and, for k = 0, 1, ..., n_in - 1 in order, adds value[n, k] * x[t, k] to sum (t, n) with
# one correctly rounded FMA. So every output of a prompt's product is one chain over k in order,
# starting from 0: the same bits whatever the tiles, the other tokens or the threads.
TILE_ROWS = 8  # NR: stored rows a tile kernel reads at once
TILE_WIDTHS = (8, 16, 24, 32)  # tokens a tile kernel takes (a tile is zero-padded to one of these)


def _fma_n(builder: ir.IRBuilder, n: int) -> ir.Function:
    module = builder.module
    name = f"llvm.fma.v{n}f32"
    found = module.globals.get(name)
    if found is None:
        found = ir.Function(module, ir.FunctionType(_vec(_F32, n), [_vec(_F32, n)] * 3), name)
    return found


def _tile_codegen(width: int):
    """``c[j, t] = sum_k s[j, k] * xp[k, t]`` (j < TILE_ROWS, t < width) as FMA chains over k in order.

    Arguments (byte addresses and counts): ``s`` the decoded rows (row j at s + j * s_stride),
    ``n_in``, ``xp`` the packed tile (width float32 per k), ``c`` TILE_ROWS x width float32.
    """
    # 16-lane vectors, or 8-lane ones throughout when the width is not a multiple of 16: a width of 24
    # as 16 + 8 ran slower than as 8 + 8 + 8 (one broadcast a row): docs/performance.md
    pieces = [16] * (width // 16) if width % 16 == 0 else [8] * (width // 8)

    def codegen(context, builder, signature, args):
        s, s_stride, n_in, xp, c = args
        zeros = [ir.Constant(_vec(_F32, n), [0.0] * n) for n in pieces]
        fmas = [_fma_n(builder, n) for n in pieces]
        rows = [builder.add(s, builder.mul(s_stride, _i64(j))) for j in range(TILE_ROWS)]

        def body(k, accs):
            at = builder.add(xp, builder.mul(k, _i64(width * 4)))
            xs, off = [], 0
            for n in pieces:
                ptr = builder.inttoptr(builder.add(at, _i64(off)), _vec(_F32, n).as_pointer())
                xs.append(builder.load(ptr, align=4))
                off += 4 * n
            new = []
            n = pieces[0]  # every piece is n lanes wide: one broadcast of each weight serves them all
            for j in range(TILE_ROWS):
                ptr = builder.inttoptr(builder.add(rows[j], builder.mul(k, _i64(4))), _F32.as_pointer())
                w = builder.load(ptr, align=4)
                undefined = ir.Constant(_vec(_F32, n), ir.Undefined)
                one = builder.insert_element(undefined, w, ir.Constant(_I32, 0))
                splat = builder.shuffle_vector(one, one, ir.Constant(_vec(_I32, n), [0] * n))
                for i in range(len(pieces)):
                    new.append(builder.call(fmas[i], [splat, xs[i], accs[j * len(pieces) + i]]))
            return new

        final = _block_loop(builder, n_in, [z for _ in range(TILE_ROWS) for z in zeros], body)
        for j in range(TILE_ROWS):
            off = j * width * 4
            for i, n in enumerate(pieces):
                ptr = builder.inttoptr(builder.add(c, _i64(off)), _vec(_F32, n).as_pointer())
                builder.store(final[j * len(pieces) + i], ptr, align=4)
                off += 4 * n
        return context.get_dummy_value()

    return codegen


def _tile_intrinsic(width: int):
    def typer(typingctx, s, s_stride, n_in, xp, c):
        return types.void(*(types.int64,) * 5), _tile_codegen(width)

    typer.__name__ = f"tile{width}"
    return intrinsic(typer)


# tile<W>(s, s_stride, n_in, xp, c): see _tile_codegen
tile8, tile16, tile24, tile32 = (_tile_intrinsic(w) for w in TILE_WIDTHS)


def _transpose8_codegen(context, builder, signature, args):
    """dst row j (8 float32 at dst + j * dst_stride) = column j of the 8 x 8 block at src (row i: 8
    float32 at src + i * src_stride): three rounds of pairwise shuffles, data moved, never computed."""
    src, src_stride, dst, dst_stride = args
    v8 = _vec(_F32, 8)

    def at(base, stride, i):
        return builder.inttoptr(builder.add(base, builder.mul(stride, _i64(i))), v8.as_pointer())

    def shuffle(a, b, lanes):
        return builder.shuffle_vector(a, b, ir.Constant(_vec(_I32, 8), lanes))

    r = [builder.load(at(src, src_stride, i), align=4) for i in range(8)]
    lo, hi = [0, 8, 1, 9, 4, 12, 5, 13], [2, 10, 3, 11, 6, 14, 7, 15]
    a = [shuffle(r[i], r[i + 1], half) for i in range(0, 8, 2) for half in (lo, hi)]  # pairs of rows
    lo, hi = [0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]
    b = [shuffle(a[i + j], a[i + j + 2], half) for i in (0, 4) for j in (0, 1) for half in (lo, hi)]
    lo, hi = [0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]
    for j in range(4):  # b[j] holds rows 0-3 of columns j and j + 4, b[j + 4] rows 4-7 of them
        builder.store(shuffle(b[j], b[j + 4], lo), at(dst, dst_stride, j), align=4)
        builder.store(shuffle(b[j], b[j + 4], hi), at(dst, dst_stride, j + 4), align=4)
    return context.get_dummy_value()


@intrinsic
def transpose8(typingctx, src, src_stride, dst, dst_stride):
    """Write the transpose of the 8 x 8 float32 block at byte address ``src`` (rows ``src_stride``
    bytes apart) to ``dst`` (rows ``dst_stride`` bytes apart): the bits moved, nothing computed."""
    return types.void(*(types.int64,) * 4), _transpose8_codegen


def _load_intrinsic(name: str, ll_type, nb_type):
    """An intrinsic ``name(address)``: the ``nb_type`` value at byte ``address``."""

    def typer(typingctx, address):
        def codegen(context, builder, signature, args):
            return builder.load(builder.inttoptr(args[0], ll_type.as_pointer()))

        return nb_type(types.int64), codegen

    typer.__name__ = name
    return intrinsic(typer)


# load_i64(address) / load_f32(address): the int64 / float32 at byte ``address``
load_i64 = _load_intrinsic("load_i64", _I64, types.int64)
load_f32 = _load_intrinsic("load_f32", _F32, types.float32)


@intrinsic
def store_f32(typingctx, address, value):
    """Store the float32 ``value`` at byte ``address``."""

    def codegen(context, builder, signature, args):
        builder.store(args[1], builder.inttoptr(args[0], _F32.as_pointer()))
        return context.get_dummy_value()

    return types.void(types.int64, types.float32), codegen
