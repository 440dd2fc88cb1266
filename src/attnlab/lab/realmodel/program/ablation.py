"""Ablation's numbers: switch query heads off and read what changes (models/circuits/ablation.py).

Kind ``ablation``, fields ``heads`` ("L.H" pairs, comma-separated: ``"18.6,17.4"``), ``how``
("zero" or "mean": a head's z before W_O set to 0, or to its mean over the text's positions in
the run without ablation) and ``quantity``:

- SmolLM2, at ``position``: ``p_next_before`` / ``p_next_after`` (the probability of the
  text's next token), ``loss_before`` / ``loss_after`` (-log of it), ``top_p_before`` /
  ``top_p_after`` (the probability of the token of rank ``rank``), ``kl`` (KL(before ‖ after));
  over the whole text: ``mean_loss_before`` / ``mean_loss_after`` (the mean of the losses at
  every token but the last) and ``mean_loss_change`` (after - before);
- MiniLM: at ``position`` of block ``layer``'s output, ``norm_before`` (|x|), ``change``
  (|x_after - x_before|), ``relative`` (change / |x|, 0 where |x| is 0), ``cosine``; and
  ``pooled_cosine`` (the sentence embeddings').
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.engine.errors import FieldError
from attnlab.lab.heads import heads_named
from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program import runs
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps
from attnlab.models.circuits.metrics import cosine, kl_divergence, position_loss, probabilities, ranked

HOWS = ("zero", "mean")
DECODER = ("p_next_before", "p_next_after", "loss_before", "loss_after", "top_p_before", "top_p_after", "kl",
           "mean_loss_before", "mean_loss_after", "mean_loss_change")  # fmt: skip
ENCODER = ("norm_before", "change", "relative", "cosine", "pooled_cosine")
WHOLE = ("pooled_cosine", "mean_loss_before", "mean_loss_after", "mean_loss_change")  # no position
TOP = 5


def not_heads(value: object) -> str:
    return f"{value!r:.40} is not a list of heads written layer.head, such as 18.6,17.4"


def heads_of(src: Source, raw: Mapping, name: str = "heads") -> tuple[tuple[int, int], ...]:
    """``"18.6,17.4"`` (or a list of pairs) as distinct (layer, head) pairs, in the order given."""
    value = n.field(raw, name, "ablation")
    pairs = []
    try:
        items = value.split(",") if isinstance(value, str) else list(value)
        for item in items:
            layer, head = (int(x) for x in (item.split(".") if isinstance(item, str) else item))
            pairs.append((layer, head))
    except (TypeError, ValueError):
        raise FieldError((name,), not_heads(value)) from None
    out: list[tuple[int, int]] = []
    for layer, head in pairs:
        n.whole({"layer": layer}, "layer", "ablation", src.n_layer, model=src.model, what="layer")
        n.whole({"head": head}, "head", "ablation", src.n_head, model=src.model, what="head")
        if (layer, head) not in out:
            out.append((layer, head))
    if not out:
        raise FieldError((name,), not_heads(value))
    return tuple(out)


def no_next_token() -> str:
    return "has no value here: the text is one token long, so no next token is scored"


def check(src: Source, raw: Mapping) -> dict:
    kind = "ablation"
    p = {"heads": heads_of(src, raw), "how": n.choice(raw, "how", kind, HOWS),
         "quantity": n.choice(raw, "quantity", kind, DECODER if src.decoder else ENCODER)}  # fmt: skip
    q = p["quantity"]
    if q in ("mean_loss_before", "mean_loss_after", "mean_loss_change") and src.n_tokens < 2:
        raise FieldError(("quantity",), no_next_token())
    if q not in WHOLE:
        # the loss and the next token's probability are known up to the second-to-last token
        last = (
            src.n_tokens - 1
            if q in ("p_next_before", "p_next_after", "loss_before", "loss_after")
            else src.n_tokens
        )
        p["position"] = n.whole(raw, "position", kind, max(last, 1))
    if q in ("top_p_before", "top_p_after"):
        p["rank"] = n.whole(raw, "rank", kind, TOP, model="the list", what="rank")
    if q in ("norm_before", "change", "relative", "cosine"):
        p["layer"] = n.layer(raw, kind, src)
    return p


_BEFORE_AFTER = """
# 1) the run as it is (the circuits' run), keeping every head's output z
before = circuit_run(ARCH, WEIGHTS, IDS, ops=OPS)
# 2) what each ablated head's z becomes, at every position
if HOW == "zero":
    replaced = np.zeros((len(HEADS), ARCH.d_head), dtype=np.float32)
else:  # its mean over this text's positions in the run as it is (summed in float64)
    zs = np.stack([before["z"][at, :, head] for at, head in HEADS])  # (n_heads, T, d_head)
    replaced = zs.astype(np.float64).mean(axis=1).astype(np.float32)  # (n_heads, d_head)
# 3) the ablated run: each head's columns of z (the heads side by side, before W_O) replaced, from the
#    lowest ablated layer on (below it, the run as it is)
plan = new_plan(ARCH)
for i, (at, h) in enumerate(HEADS):
    columns = slice(h * ARCH.d_head, (h + 1) * ARCH.d_head)
    edit(plan, "z", at, write(replaced[i], len(IDS), ARCH.d_head, cols=columns))
after = circuit_run(ARCH, WEIGHTS, IDS, ops=OPS, plan=plan, base=before, start=plan.start)
"""

_DECODER = """
# 4) both runs' next-token distributions (models/circuits/ablation.py next_token_change): the softmax of
#    each run's logits in float64
pb, pa = probabilities(before["logits"]), probabilities(after["logits"])
"""

_DECODER_VALUE = {
    "p_next_before": "value = pb[POSITION, IDS[POSITION + 1]]  # the text's next token",
    "p_next_after": "value = pa[POSITION, IDS[POSITION + 1]]  # the text's next token",
    "loss_before": "value = position_loss(before['logits'], IDS)[POSITION]  # -log p(the text's next token)",
    "loss_after": "value = position_loss(after['logits'], IDS)[POSITION]  # -log p(the text's next token)",
    "top_p_before": "value = np.take_along_axis(pb, ranked(before['logits'], TOP), axis=-1)[POSITION, RANK]",
    "top_p_after": "value = np.take_along_axis(pa, ranked(after['logits'], TOP), axis=-1)[POSITION, RANK]",
    "kl": "value = kl_divergence(pb, pa)[POSITION]  # KL(before ‖ after), in nats",
    # the loss at every token but the last (its next token is the text's), then their mean
    "mean_loss_before": "value = np.mean(position_loss(before['logits'], IDS))",
    "mean_loss_after": "value = np.mean(position_loss(after['logits'], IDS))",
    "mean_loss_change": (
        "before_mean = np.mean(position_loss(before['logits'], IDS))\n"
        "after_mean = np.mean(position_loss(after['logits'], IDS))\n"
        "value = after_mean - before_mean  # in nats"
    ),
}

_ENCODER_VALUE = {
    "norm_before": (
        'xb = before["resid"][LAYER + 1].astype(np.float64)\n'
        "value = np.sqrt((xb * xb).sum(axis=-1))[POSITION]"
    ),
    "change": (
        'xb, xa = (r["resid"][LAYER + 1].astype(np.float64) for r in (before, after))\n'
        "value = np.sqrt(((xa - xb) ** 2).sum(axis=-1))[POSITION]"
    ),
    "relative": (
        'xb, xa = (r["resid"][LAYER + 1].astype(np.float64) for r in (before, after))\n'
        "length = np.sqrt((xb * xb).sum(axis=-1))\n"
        "moved = np.sqrt(((xa - xb) ** 2).sum(axis=-1))\n"
        "relative = np.divide(moved, length, out=np.zeros_like(moved), where=length > 0)  # 0 where |x| is 0"
        "\n"
        "value = relative[POSITION]"
    ),
    "cosine": (
        'xb, xa = (r["resid"][LAYER + 1].astype(np.float64) for r in (before, after))\n'
        "value = cosine(xb, xa)[POSITION]"
    ),
    "pooled_cosine": 'value = cosine(before["pooled"], after["pooled"])',
}

_WORDS = {
    "p_next_before": "the probability of the next token after token {position}, before",
    "p_next_after": "the probability of the next token after token {position}, after",
    "loss_before": "the loss at token {position}, before",
    "loss_after": "the loss at token {position}, after",
    "top_p_before": "the probability of the rank {rank} token after token {position}, before",
    "top_p_after": "the probability of the rank {rank} token after token {position}, after",
    "kl": "KL(before ‖ after) after token {position}",
    "mean_loss_before": "the mean loss over the text's next tokens, before",
    "mean_loss_after": "the mean loss over the text's next tokens, after",
    "mean_loss_change": "how much the mean loss over the text's next tokens changed",
    "norm_before": "the norm of token {position}'s residual leaving block {layer}, before",
    "change": "how far token {position}'s residual leaving block {layer} moved",
    "relative": "how far token {position}'s residual leaving block {layer} moved, as a share of its length",
    "cosine": "the cosine of token {position}'s residual leaving block {layer}, before and after",
    "pooled_cosine": "the cosine of the sentence embeddings, before and after",
}


def steps(src: Source, p: dict) -> Steps:
    q = p["quantity"]
    heads = ", ".join(f"({layer}, {head})" for layer, head in p["heads"])
    inputs = [
        f"HEADS = [{heads}]  # (layer, head) pairs: query heads, never a shared KV head",
        f"HOW = {p['how']!r}",
    ]
    inputs += [f"{k.upper()} = {p[k]}" for k in ("position", "layer", "rank") if k in p]
    body = _BEFORE_AFTER
    if src.decoder:
        body += _DECODER + _DECODER_VALUE[q] + "\n"
        uses = {"top_p_before": (ranked,), "top_p_after": (ranked,), "kl": (kl_divergence,)}.get(q, ())
        uses += (probabilities, position_loss)
        if q.startswith("top_p"):
            inputs.append(f"TOP = {TOP}")
    else:
        body += "# 4) " + _WORDS[q].format(**p) + "\n" + _ENCODER_VALUE[q] + "\n"
        uses = (cosine,)
    named = heads_named(p["heads"])
    marks = {"position": "_{}", "layer": "_L{}", "rank": "_rank{}"}  # _5_rank1: each number its own file
    where = "".join(mark.format(p[k]) for k, mark in marks.items() if k in p)
    return Steps(
        what=f"Ablation ({p['how']}) of {named}: " + _WORDS[q].format(**p),
        runs="circuits",
        inputs=inputs,
        body=body,
        name=f"{src.model}_ablation_{q}{where}.py",
        uses=(*uses, runs.new_plan, runs.edit, runs.write),
    )
