"""The next-token view's numbers: a token's logit and its probabilities after a position.

Kind ``next`` (SmolLM2), fields ``position`` (the token after which the model predicts),
``token`` (a token id), ``quantity`` and the sampling controls ``temperature`` (default 1),
``top_k`` (0: off) and ``top_p`` (1: off):

- ``logit``: the model's logit (float32, widened);
- ``p_model``: the softmax of the raw logits in float64 (temperature 1, nothing cut);
- ``p``: what sampling draws from: temperature, then top-k, then top-p, in Hugging Face's
  order (:mod:`attnlab.models.sampling`'s ``cut``); greedy (temperature 0) puts all of it
  on the arg-max.
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.lab import limits
from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program import pieces, trace
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps

QUANTITIES = ("logit", "p_model", "p")

_LOGITS = """
# 1) embed the tokens and run every block (each block as a trace runs it)
traces = run_trace(N_LAYER - 1)
# 2) the final RMSNorm and the tied output layer, on every position (as the trace keeps its logits)
all_logits = logits(traces[-1]["output"], embedding())  # (T, vocab) float32
row = np.asarray(all_logits[POSITION], dtype=np.float64)  # the logits after token POSITION
"""

_SOFTMAX = '''

def softmax(z):
    """exp(z - max) / sum in float64, with -inf entries exactly 0."""
    finite = np.isfinite(z)
    top = z[finite].max()
    p = np.zeros(z.shape, dtype=np.float64)
    p[finite] = np.exp(z[finite] - top)
    return p / p.sum()
'''

_CUT = """
# 3) what sampling draws from: temperature, then top-k, then top-p (Hugging Face's order)
if TEMPERATURE == 0.0:  # greedy: everything on the arg-max
    p = np.zeros(row.shape)
    p[int(np.argmax(row))] = 1.0
else:
    z = row / TEMPERATURE
    keep = np.isfinite(z)
    if TOP_K:
        k = min(TOP_K, z.size)
        keep &= z >= np.partition(z, -k)[-k]  # ties with the k-th largest all stay
    p = softmax(np.where(keep, z, -np.inf))
    if TOP_P < 1.0:
        # rank by the logits; keep each token whose preceding mass is still below top-p
        order = np.argsort(-np.where(keep, z, -np.inf), kind="stable")
        cumulative = np.cumsum(p[order])
        inside = np.empty_like(keep)
        inside[order] = (cumulative - p[order]) < TOP_P
        keep &= inside
        p = np.where(keep, p, 0.0)
        p /= p.sum()
value = p[TOKEN]
"""


def check(src: Source, raw: Mapping) -> dict:
    kind = "next"
    n.decoder_only(src, kind)
    p = {"position": n.token(raw, "position", kind, src), "token": n.token_id(raw, "token", kind, src),
         "quantity": n.choice(raw, "quantity", kind, QUANTITIES)}  # fmt: skip
    if p["quantity"] == "p":
        p["temperature"] = n.number(
            raw, "temperature", 1.0, low=limits.TEMPERATURE_MIN, high=limits.TEMPERATURE_MAX
        )
        p["top_p"] = n.number(raw, "top_p", 1.0, low=0.0, high=limits.TOP_P_MAX, above=True)
        top_k = raw.get("top_k") or 0
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 0 <= top_k <= limits.TOP_K_MAX:
            raise n.FieldError(("top_k",), n.problems.not_whole(top_k))
        p["top_k"] = top_k
    return p


def steps(src: Source, p: dict) -> Steps:
    q = p["quantity"]
    inputs = [f"POSITION, TOKEN = {p['position']}, {p['token']}"]
    extra = []
    if q == "logit":
        body = _LOGITS + "value = row[TOKEN]\n"
        what = f"The logit of token {p['token']} after token {p['position']}"
    elif q == "p_model":
        body = _LOGITS + "# 3) the model's probabilities: the softmax of the raw logits, in float64\n"
        body += "value = softmax(row)[TOKEN]\n"
        extra = [_SOFTMAX]
        what = f"The model's probability of token {p['token']} after token {p['position']}"
    else:
        inputs.append(f"TEMPERATURE, TOP_K, TOP_P = {p['temperature']!r}, {p['top_k']}, {p['top_p']!r}")
        body = _LOGITS + _CUT
        extra = [_SOFTMAX]
        what = (
            f"The probability sampling gives token {p['token']} after token {p['position']} (temperature "
            f"{p['temperature']:g}, top-k {p['top_k']}, top-p {p['top_p']:g})"
        )
    return Steps(
        what=what,
        runs="trace",
        inputs=inputs,
        pieces=[*trace.pieces_for(src), pieces.OUTPUT, *extra],
        body=body,
        name=f"smollm2_{q}_{p['position']}_{p['token']}.py",
    )
