"""Direct logit attribution: a logit as an exact sum of what each component wrote.

The residual stream leaving the last block at position p is a sum of what was written
into it: the embedding, each layer's attention output (each query head's z through its
rows of W_O, plus W_O's bias if any) and each layer's feed-forward output. The final
RMSNorm is not linear: it divides by rms(x) = sqrt(mean(x^2) + eps). Frozen at its value
in the real forward pass (``Cache.final_rms[p]``, so the scale s = 1 / rms is a fixed
number), the logit of token t is linear in x:

    logit_t = (s * γ ⊙ x) · E[t] = x · u,   u = s * γ ⊙ E[t]

so each component's term is its vector · u, and the terms add up to the logit. RMSNorm
has no bias and no centring, so nothing else is left over (a LayerNorm would also need
each component centred, and its bias as a term of its own).

Terms are computed in float64 from the model's float numbers (z, W_O's values, the
feed-forward outputs, the embedding row, γ, E[t], rms). Their sum equals the model's
logit up to the float rounding of the forward pass (its residual additions, W_O's
product, the norm and the logit's own sum): ``bound`` states that rounding's worst case
(first order, unit roundoff u of the dtype):

    u * ( sum_d |u_d| * [ sum of |partial sums of the residual| + n_O * sum_l (|z_l| @ |W_O_l|)_d ]
          + (d + 2) * sum_d |x_d u_d| )

(n_O = n_head * d_head, the length of W_O's sums), and the tests check
|sum - logit| <= bound on both float paths, and to 1e-9 in float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.engine.fast.quant import QuantMatrix
from attnlab.engine.threads import holds_one_blas_thread
from attnlab.models.circuits import checks
from attnlab.models.circuits.runs import Cache
from attnlab.models.errors import Refusal


@dataclass(frozen=True, eq=False, kw_only=True)
class Attribution:
    """Token ``token``'s logit at ``position`` as a sum of terms (float64).

    ``logit``: the model's own (its dtype's value); ``scale``: 1 / rms at the position;
    ``embedding``; ``heads`` (L, H); ``attn_bias`` (L,) (W_O's bias; zeros when it has
    none); ``mlps`` (L,); ``total``: every term added in the order embedding, then per
    layer its heads 0..H-1, its bias and its MLP; ``bound``: see the module.
    """

    position: int
    token: int
    logit: float
    scale: float
    embedding: float
    heads: np.ndarray
    attn_bias: np.ndarray
    mlps: np.ndarray
    total: float
    bound: float

    def terms(self) -> np.ndarray:
        """Every term in the order ``total`` adds them (1 + L * (H + 2),)."""
        per_layer = np.column_stack([self.heads, self.attn_bias, self.mlps])  # (L, H + 2)
        return np.concatenate([[self.embedding], per_layer.ravel()])


@holds_one_blas_thread  # its float64 products sum alike whatever the BLAS thread count
def logit_attribution(model, cache: Cache, position: int = -1, token: int | None = None) -> Attribution:
    """Attribute the logit of ``token`` (default: the model's top token there) at ``position``."""
    if model.kind != "decoder" or cache.logits is None:
        raise Refusal(("model",), "circuits.no_unembedding", model.name)
    p = checks.position(position, cache.n_tokens, loc=("position",))
    row = cache.logits[p]
    if token is None:
        token = int(np.argmax(row))
    token = checks.index(token, model.arch.d_vocab, loc=("token",), model="the vocabulary", what="token")
    f64 = np.float64
    rms = f64(cache.final_rms[p])
    scale = 1.0 / rms
    gamma = model.weights.final_norm.weight
    e = model.token_rows([token])[0].astype(f64)
    u = scale * (e if gamma is None else gamma.astype(f64) * e)  # (d,)
    L, H, dh = model.arch.n_layer, model.arch.n_head, model.arch.d_head
    heads = np.empty((L, H))
    bias = np.zeros(L)
    mlps = cache.mlp_out[:, p].astype(f64) @ u  # (L,)
    spread = np.zeros(model.arch.d_model)  # sum_l |z_l| @ |W_O_l|, for the bound
    for layer in range(L):
        w_o = _values(model.weights.blocks[layer].attn.w_o).astype(f64)  # (H * dh, d)
        z = cache.z[layer, p].astype(f64).reshape(-1)  # (H * dh,)
        heads[layer] = (z * (w_o @ u)).reshape(H, dh).sum(axis=1)
        b_o = model.weights.blocks[layer].attn.b_o
        if b_o is not None:
            bias[layer] = np.asarray(b_o, dtype=f64) @ u
        spread += np.abs(z) @ np.abs(w_o)
    embedding = float(cache.resid[0, p].astype(f64) @ u)
    total = embedding
    for layer in range(L):
        for h in range(H):
            total += heads[layer, h]
        total += bias[layer] + mlps[layer]
    # the bound: rounding of the residual's partial sums, of W_O's products, of the norm and the logit
    partial = np.abs(cache.mid[:, p].astype(f64)).sum(axis=0)  # (d,): every partial sum's size
    partial += np.abs(cache.resid[1:, p].astype(f64)).sum(axis=0)
    x = cache.resid[-1, p].astype(f64)
    unit = np.finfo(model.dtype).eps / 2
    bound = unit * (np.abs(u) @ (partial + H * dh * spread) + (model.arch.d_model + 2) * np.abs(x * u).sum())
    return Attribution(
        position=p,
        token=token,
        logit=float(row[token]),
        scale=float(scale),
        embedding=embedding,
        heads=heads,
        attn_bias=bias,
        mlps=mlps,
        total=float(total),
        bound=float(bound),
    )


def _values(w) -> np.ndarray:
    """A weight's float values (a QuantMatrix's as gguf dequantizes them)."""
    return w.values() if isinstance(w, QuantMatrix) else np.asarray(w)
