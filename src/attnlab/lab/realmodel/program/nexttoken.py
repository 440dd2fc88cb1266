"""The next-token view's numbers: a token's logit and its probabilities after a position.

Kind ``next`` (SmolLM2), fields ``position`` (the token after which the model predicts),
``token`` (a token id), ``quantity`` and the sampling controls ``temperature`` (default 1),
``top_k`` (0: off) and ``top_p`` (1: off):

- ``logit``: the model's logit (float32, widened);
- ``p_model``: the softmax of the raw logits in float64 (temperature 1, nothing cut);
- ``p``: what sampling draws from: temperature, then top-k, then top-p, in Hugging Face's
  order (:mod:`attnlab.models.sampling`'s ``cut``, which the program runs); greedy
  (temperature 0) puts all of it on the arg-max.
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.lab import limits
from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps
from attnlab.models.sampling import Sampling, cut

QUANTITIES = ("logit", "p_model", "p")

_LOGITS = """
# 1) the whole forward pass on the trace's steps: every block, the final RMSNorm and the tied output
#    layer, on every position (the logits a trace keeps)
logits = forward(ARCH, WEIGHTS, IDS, ops=TRACE_OPS)  # (T, vocab) float32
row = logits[POSITION]  # the logits after token POSITION
"""

_CUT = """
# 2) what each of the sampling controls does to the row (models/sampling.py cut): temperature, then
#    top-k, then top-p (Hugging Face's order); greedy (temperature 0) puts everything on the arg-max
chosen = cut(row, Sampling(temperature=TEMPERATURE, top_k=TOP_K, top_p=TOP_P))
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
    if q == "logit":
        body = _LOGITS + "value = row[TOKEN]  # float32, widened\n"
        what = f"The logit of token {p['token']} after token {p['position']}"
    elif q == "p_model":
        inputs.append("TEMPERATURE, TOP_K, TOP_P = 1.0, 0, 1.0  # the model's own: nothing changed or cut")
        body = _LOGITS + _CUT + "value = chosen.p_model[TOKEN]  # the softmax of the raw logits, in float64\n"
        what = f"The model's probability of token {p['token']} after token {p['position']}"
    else:
        inputs.append(f"TEMPERATURE, TOP_K, TOP_P = {p['temperature']!r}, {p['top_k']}, {p['top_p']!r}")
        body = _LOGITS + _CUT + "value = chosen.p[TOKEN]  # what sampling draws from\n"
        what = (
            f"The probability sampling gives token {p['token']} after token {p['position']} (temperature "
            f"{p['temperature']:g}, top-k {p['top_k']}, top-p {p['top_p']:g})"
        )
    return Steps(
        what=what,
        runs="trace",
        inputs=inputs,
        body=body,
        name=f"smollm2_{q}_{p['position']}_{p['token']}.py",
        uses=() if q == "logit" else (cut, Sampling),
    )
