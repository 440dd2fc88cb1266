"""The logit lens's numbers: the residual stream after a block, read as if it were the last.

Kind ``lens`` (SmolLM2), fields ``position``, ``layer`` (the block the residual leaves) and
``quantity``: ``token_p`` (the probability of ``token``; without it, of the model's answer:
its top token after the last block), ``logit`` (that token's logit) or ``top_p`` (the
probability of the token of rank ``rank``). The model's own final RMSNorm (its γ) and the
tied unembedding, on the rows of every block at once (models/circuits/lens.py): the plain
lens, no learned translators.
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program import runs
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps
from attnlab.models.circuits.metrics import probabilities, ranked

QUANTITIES = ("token_p", "logit", "top_p")
TOP = 5

_BODY = """
# 1) the run as it is (the circuits' run)
kept = circuit_run(ARCH, WEIGHTS, IDS, ops=OPS, logits=False)
# 2) the residual stream leaving each block, at POSITION, each through the model's head (the final
#    RMSNorm and the tied output layer) as if it were the last: (L, vocab) (models/circuits/lens.py)
lens = head(ARCH, WEIGHTS, np.ascontiguousarray(kept["resid"][1:, POSITION]), ops=OPS)
"""


def check(src: Source, raw: Mapping) -> dict:
    kind = "lens"
    n.decoder_only(src, kind)
    p = {"position": n.token(raw, "position", kind, src), "layer": n.layer(raw, kind, src),
         "quantity": n.choice(raw, "quantity", kind, QUANTITIES)}  # fmt: skip
    if p["quantity"] == "top_p":
        p["rank"] = n.whole(raw, "rank", kind, TOP, model="the list", what="rank")
    elif raw.get("token") is not None:
        p["token"] = n.token_id(raw, "token", kind, src)
    return p


def steps(src: Source, p: dict) -> Steps:
    q = p["quantity"]
    inputs = [f"POSITION, LAYER = {p['position']}, {p['layer']}"]
    if q == "top_p":
        inputs.append(f"RANK, TOP = {p['rank']}, {TOP}")
        value = "value = np.take_along_axis(probabilities(lens), ranked(lens, TOP), axis=-1)[LAYER, RANK]\n"
        what = f"the probability of the rank {p['rank']} token"
    else:
        if "token" in p:
            inputs.append(f"TOKEN = {p['token']}")
            chosen = ""
            what = f"token {p['token']}'s {'probability' if q == 'token_p' else 'logit'}"
        else:
            chosen = "TOKEN = int(ranked(lens[-1], 1)[0])  # the model's answer: its top token at the end\n"
            what = f"the model's answer's {'probability' if q == 'token_p' else 'logit'}"
        pick = "probabilities(lens)[LAYER, TOKEN]" if q == "token_p" else "lens[LAYER, TOKEN]"
        value = chosen + f"value = {pick}\n"
    rank = f"_rank{p['rank']}" if "rank" in p else ""  # each rank its own file
    return Steps(
        what=f"The logit lens after block {p['layer']} at token {p['position']}: {what}",
        runs="circuits",
        inputs=inputs,
        body=_BODY + "# 3) " + what + "\n" + value,
        uses=(runs.head, *((probabilities,) if q != "logit" else ()),
              *((ranked,) if q == "top_p" or "token" not in p else ())),  # fmt: skip
        name=f"smollm2_lens_{q}_{p['position']}_L{p['layer']}{rank}.py",
    )
