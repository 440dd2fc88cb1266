"""LLVM IR for the quantized-weight kernels of :mod:`attnlab.engine.fast.quant`: dot products, values, tiles.

GGUF stores a weight row as blocks of 32 weights, little-endian:

- ``Q4_1`` (20 bytes): float16 ``d``, float16 ``m``, then 16 bytes of 4-bit
  quants; byte j holds weight j in its low nibble and weight j + 16 in its
  high nibble. Weight = ``d * q + m``.
- ``Q8_0`` (34 bytes): float16 ``d``, then 32 int8 quants. Weight = ``q * d``.

A weight's float32 value is computed exactly as ``gguf.quants`` dequantizes it
(``dequantize_blocks``): d and m widened to float32 (exact), q converted to
float32 (exact), then one float32 multiply and, for Q4_1, one float32 add,
each rounded on its own: never fused into one FMA (no fast-math flag is set,
so LLVM may not contract them).

The dot product of a row with float32 activations ``x`` runs in two vectors
of 16 float32 lanes, the same on every CPU (LLVM splits or joins the vectors
to the machine's width; the lanes' arithmetic does not change). Lane j of
``lo`` accumulates weights ``32 b + j`` and lane j of ``hi`` weights
``32 b + 16 + j``, block b = 0, 1, ... in order, each step one correctly
rounded fused multiply-add (``llvm.fma``: a single rounding whatever the
hardware; where it has no FMA unit, libm's ``fmaf`` gives the same bits).
Then ``v = lo + hi`` lane by lane, and the 16 lanes are summed as a fixed
tree: ``v[j] + v[j + 8]`` (j < 8), then ``+ [j + 4]``, ``+ [j + 2]``,
``+ [j + 1]``. So a row's sum is one fixed sequence of float32 operations:
no reassociation, no dependence on the thread, the thread count, or the
vector width. (Only the order differs from a BLAS sum over the same float32
values, as one BLAS differs from another.)
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from attnlab.engine.fast.formats import BLOCK, BLOCK_BYTES, Q4_1, Q8_0

_F32, _I8, _I32, _I64, _HALF = ir.FloatType(), ir.IntType(8), ir.IntType(32), ir.IntType(64), ir.HalfType()
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
    """The float32 values of the block at byte address ``block``: (weights 0..15, weights 16..31)."""
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


def _dot_codegen(fmt: int):
    def codegen(context, builder, signature, args):
        row, x, n_blocks = args
        step = BLOCK_BYTES[fmt]
        zero = ir.Constant(_vec(_F32), [0.0] * _LANES)
        fma = _fma(builder)

        def body(b, accs):
            block = builder.add(row, builder.mul(b, _i64(step)))
            x_at = builder.add(x, builder.mul(b, _i64(BLOCK * 4)))
            _prefetch(builder, builder.add(block, _i64(PREFETCH)))
            w_low, w_high = _block_values(builder, fmt, block)
            x_low, x_high = _load_vec(builder, x_at, _F32), _load_vec(builder, x_at, _F32, _LANES * 4)
            return [builder.call(fma, [w_low, x_low, accs[0]]), builder.call(fma, [w_high, x_high, accs[1]])]

        low, high = _block_loop(builder, n_blocks, [zero, zero], body)
        return _tree_sum(builder, builder.fadd(low, high))

    return codegen


def _values_codegen(fmt: int):
    def codegen(context, builder, signature, args):
        row, out, n_blocks = args
        step = BLOCK_BYTES[fmt]

        def body(b, _carried):
            w_low, w_high = _block_values(builder, fmt, builder.add(row, builder.mul(b, _i64(step))))
            at = builder.add(out, builder.mul(b, _i64(BLOCK * 4)))
            builder.store(w_low, builder.inttoptr(at, _vec(_F32).as_pointer()), align=4)
            at_high = builder.add(at, _i64(_LANES * 4))
            builder.store(w_high, builder.inttoptr(at_high, _vec(_F32).as_pointer()), align=4)
            return []

        _block_loop(builder, n_blocks, [], body)
        return context.get_dummy_value()

    return codegen


_ADDRESSES = (types.int64, types.int64, types.int64)


@intrinsic
def dot_q4_1(typingctx, row, x, n_blocks):
    """``sum(values(row) * x)`` over ``n_blocks`` Q4_1 blocks at byte address ``row``; x: float32 address."""
    return types.float32(*_ADDRESSES), _dot_codegen(Q4_1)


@intrinsic
def dot_q8_0(typingctx, row, x, n_blocks):
    """:func:`dot_q4_1` for Q8_0 blocks."""
    return types.float32(*_ADDRESSES), _dot_codegen(Q8_0)


@intrinsic
def values_q4_1(typingctx, row, out, n_blocks):
    """Write the float32 values of ``n_blocks`` Q4_1 blocks at ``row`` to the address ``out``."""
    return types.void(*_ADDRESSES), _values_codegen(Q4_1)


@intrinsic
def values_q8_0(typingctx, row, out, n_blocks):
    """:func:`values_q4_1` for Q8_0 blocks."""
    return types.void(*_ADDRESSES), _values_codegen(Q8_0)


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
