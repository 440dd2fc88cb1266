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
from attnlab.lab.realmodel.program import circuits
from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps

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


_BEFORE_AFTER = '''
# 1) the run as it is (the circuits' run), keeping every head's output z
before = run({embedded})
# 2) what each ablated head's z becomes, at every position
if HOW == "zero":
    replaced = np.zeros((len(HEADS), D_HEAD), dtype=np.float32)
else:  # its mean over this text's positions in the run as it is (summed in float64)
    zs = np.stack([before["z"][at][:, head * D_HEAD : (head + 1) * D_HEAD] for at, head in HEADS])
    replaced = zs.astype(np.float64).mean(axis=1).astype(np.float32)  # (n_heads, d_head)
# 3) the ablated run, from the lowest ablated layer on (below it, the run as it is)
T = len(IDS)
hooks = {{}}
for at in sorted({{at for at, _ in HEADS}}):
    writes = [(head, replaced[i]) for i, (where, head) in enumerate(HEADS) if where == at]

    def set_heads(z, writes=writes):
        """A copy of the heads side by side (T, H · d_head) with each ablated head's columns replaced."""
        out = np.array(z, dtype=z.dtype, order="C", copy=True)
        for head, v in writes:
            out[..., :, head * D_HEAD : (head + 1) * D_HEAD] = np.broadcast_to(v, (T, D_HEAD))
        return out

    hooks[at] = {{"z": set_heads}}
start = min(at for at, _ in HEADS)
after = run({resume}, start, hooks)
'''

_DECODER = """
# 4) both runs' next-token distributions: the final norm and the output layer, then a float64 softmax
E = embedding()
z_before = logits(before["resid"][N_LAYER], E).astype(np.float64)  # (T, vocab)
z_after = logits(after["resid"][N_LAYER], E).astype(np.float64)
"""

_DECODER_VALUE = {
    "p_next_before": "value = probabilities(z_before)[POSITION, IDS[POSITION + 1]]  # the text's next token",
    "p_next_after": "value = probabilities(z_after)[POSITION, IDS[POSITION + 1]]  # the text's next token",
    "loss_before": "value = -log_probabilities(z_before[:-1])[POSITION, IDS[POSITION + 1]]",
    "loss_after": "value = -log_probabilities(z_after[:-1])[POSITION, IDS[POSITION + 1]]",
    "top_p_before": "value = probabilities(z_before)[POSITION, ranked(z_before[POSITION], TOP)[RANK]]",
    "top_p_after": "value = probabilities(z_after)[POSITION, ranked(z_after[POSITION], TOP)[RANK]]",
    "kl": (
        "p, q = probabilities(z_before), probabilities(z_after)\n"
        "terms = np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)  # KL(before ‖ after), in nats\n"
        "value = terms.sum(axis=-1)[POSITION]"
    ),
}
# the loss at every token but the last (its next token is the text's), then their mean
_MEAN = {
    "before": "np.mean(-log_probabilities(z_before[:-1])[np.arange(T - 1), IDS[1:]])",
    "after": "np.mean(-log_probabilities(z_after[:-1])[np.arange(T - 1), IDS[1:]])",
}
_DECODER_VALUE |= {
    "mean_loss_before": f"value = {_MEAN['before']}",
    "mean_loss_after": f"value = {_MEAN['after']}",
    "mean_loss_change": f"before_mean = {_MEAN['before']}\nafter_mean = {_MEAN['after']}\n"
    "value = after_mean - before_mean  # in nats",
}

_LOG_SOFTMAX = '''

def log_probabilities(z):
    """log softmax over the last axis in float64: z - max - log(sum(exp(z - max)))."""
    shifted = z - z.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
'''

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
        "norm = np.sqrt((xb * xb).sum(axis=-1))\n"
        "moved = np.sqrt(((xa - xb) ** 2).sum(axis=-1))\n"
        "relative = np.divide(moved, norm, out=np.zeros_like(moved), where=norm > 0)  # 0 where |x| is 0\n"
        "value = relative[POSITION]"
    ),
    "cosine": (
        'xb, xa = (r["resid"][LAYER + 1].astype(np.float64) for r in (before, after))\n'
        "value = cosine(xb, xa)[POSITION]"
    ),
    "pooled_cosine": 'value = cosine(pooled(before["x"]), pooled(after["x"]))',
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
    from attnlab.lab.realmodel.program import pieces

    q = p["quantity"]
    heads = ", ".join(f"({layer}, {head})" for layer, head in p["heads"])
    inputs = [
        f"HEADS = [{heads}]  # (layer, head) pairs: query heads, never a shared KV head",
        f"HOW = {p['how']!r}",
    ]
    inputs += [f"{k.upper()} = {p[k]}" for k in ("position", "layer", "rank") if k in p]
    resume = 'before["resid"][start]' if src.decoder else 'before["resid"][start][None]'
    body = _BEFORE_AFTER.format(embedded=circuits.embedded(src), resume=resume)
    extra = []
    if src.decoder:
        body += _DECODER + _DECODER_VALUE[q] + "\n"
        extra = [pieces.SOFTMAX64, _LOG_SOFTMAX]
        if q.startswith("top_p"):
            inputs.append(f"TOP = {TOP}")
    else:
        body += "# 4) " + _WORDS[q] + "\n" + _ENCODER_VALUE[q] + "\n"
        extra = [pieces.COSINE]
    named = ", ".join(f"L{layer}H{head}" for layer, head in p["heads"])
    marks = {"position": "_{}", "layer": "_L{}", "rank": "_rank{}"}  # _5_rank1: each number its own file
    where = "".join(mark.format(p[k]) for k, mark in marks.items() if k in p)
    return Steps(
        what=f"Ablation ({p['how']}) of {named}: " + _WORDS[q].format(**p),
        runs="circuits",
        inputs=inputs,
        pieces=[*circuits.pieces_for(src), *extra],
        body=body,
        name=f"{src.model}_ablation_{q}{where}.py",
    )
