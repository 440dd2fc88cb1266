"""Activation patching's numbers: one clean activation in the corrupted run, and the metric after.

Kind ``patch``, on a clean and a corrupted prompt of one token length, fields ``target``,
``layer`` and ``quantity``, and per target:

- ``resid_pre`` / ``resid_mid`` / ``resid_post`` (the residual stream entering block ``layer``,
  between its sublayers, leaving it): ``column``, the position patched;
- ``head``: ``column``, the query head whose z (before W_O) is patched at every position;
- ``mlp``: the MLP output of ``layer``, at position ``column``, or at every position without one;
- ``pattern``: ``head`` (or ``column``), the query head whose attention pattern is patched (every
  query row; the values it mixes stay the corrupted run's);
- ``keys`` / ``values``: ``kv_head`` (or ``column``), the KV head whose keys (after RoPE where the
  model rotates them: what the scores read) or values are patched at every position; on a GQA
  model every query head of its group reads them;

the metric: SmolLM2, logit(right) - logit(other) at ``position`` (default: the last token) for
``answers`` = "right,other" token ids; MiniLM, the cosine of the sentence embedding with the
clean run's; ``quantity``: ``value`` (the metric after the patch), ``recovered`` ((patched -
corrupt) / (clean - corrupt)), ``clean`` or ``corrupt`` (the metric on each run).

(models/circuits/patching.py: the patched run recomputes from the patched layer on, from the
corrupted run's residual stream; a pattern, keys or values patch takes the clean run's from that
block run again on the clean run's residual stream, ``attention_of``.)
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program import runs
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps, architecture
from attnlab.models.circuits.metrics import cosine, fraction_recovered, logit_difference

TARGETS = ("resid_pre", "resid_mid", "resid_post", "head", "mlp", "pattern", "keys", "values")
QUANTITIES = ("value", "recovered", "clean", "corrupt")
# a target's head field: the one the page's cells name, or the sweep's column
HEAD_FIELD = {"head": "column", "pattern": "head", "keys": "kv_head", "values": "kv_head"}


def check(src: Source, raw: Mapping) -> dict:
    kind = "patch"
    if src.corrupt_ids is None:
        raise FieldError(("corrupt",), n.not_two_prompts())
    if len(src.corrupt_ids) != src.n_tokens:
        raise FieldError(("corrupt",), n.lengths_differ(src.n_tokens, len(src.corrupt_ids)))
    p = {"quantity": n.choice(raw, "quantity", kind, QUANTITIES)}
    if p["quantity"] in ("value", "recovered"):
        p["target"] = n.choice(raw, "target", kind, TARGETS)
        p["layer"] = n.layer(raw, kind, src)
        target = p["target"]
        if target in HEAD_FIELD:
            name = HEAD_FIELD[target]
            if raw.get(name) is None and raw.get("column") is not None:
                name = "column"  # a sweep's cell names its head by its column
            if target in ("keys", "values"):
                n_kv = architecture(src.model).n_kv_head
                p["column"] = n.whole(raw, name, kind, n_kv, model=src.model, what="KV head")
            else:
                p["column"] = n.head(raw, kind, src, name=name)
        elif target != "mlp" or raw.get("column") is not None:
            p["column"] = n.token(raw, "column", kind, src)
    if src.decoder:
        at = raw.get("position")
        p["position"] = src.n_tokens - 1 if at is None else n.token(raw, "position", kind, src)
        answers = n.field(raw, "answers", kind)
        try:
            right, other = (int(a) for a in (answers.split(",") if isinstance(answers, str) else answers))
        except (TypeError, ValueError):
            raise FieldError(("answers",), n.problems.not_whole(answers)) from None
        for a in (right, other):
            n.token_id({"answers": a}, "answers", kind, src)
        if right == other:
            raise FieldError(("answers",), n.same_answers(right))
        p["answers"] = (right, other)
    return p


_RUNS = """
# 1) both prompts run as they are (the circuits' run)
clean = circuit_run(ARCH, WEIGHTS, IDS, ops=OPS, logits=False)
corrupt = circuit_run(ARCH, WEIGHTS, CORRUPT_IDS, ops=OPS, logits=False)
"""

_METRIC_DECODER = '''

def metric(x_final):
    """logit(right) - logit(other) at POSITION of the residual stream leaving the last block (T, d): the
    final norm on that row, then the answers' columns of the output layer (models/circuits/patching.py)."""
    a = answer_logits(ARCH, WEIGHTS, x_final[POSITION : POSITION + 1], ANSWERS, ops=OPS)[0]  # (2,)
    return logit_difference(a[0], a[1])
'''

_METRIC_ENCODER = '''

def metric(x_final):
    """The cosine of the sentence embedding of the residual stream leaving the last block with the clean
    run's (models/circuits/patching.py)."""
    return cosine(head(ARCH, WEIGHTS, x_final, ops=OPS), clean["pooled"])
'''

# the patch: where the clean value goes (models/circuits/patching.py's patches, edits.py's places)
_PATCH = {
    "resid_pre": (
        'edit(plan, "pre", LAYER, write(clean["resid"][LAYER], T, ARCH.d_model, positions=[COLUMN]))\n'
    ),
    "resid_post": (
        'edit(plan, "post", LAYER, write(clean["resid"][LAYER + 1], T, ARCH.d_model, positions=[COLUMN]))\n'
    ),
    "resid_mid": (
        'edit(plan, "mid", LAYER, write(clean["mid"][LAYER], T, ARCH.d_model, positions=[COLUMN]))\n'
    ),
    "head": (
        "columns = slice(COLUMN * ARCH.d_head, (COLUMN + 1) * ARCH.d_head)  # query head COLUMN's z\n"
        'edit(plan, "z", LAYER, write(clean["z"][LAYER, :, COLUMN], T, ARCH.d_head, cols=columns))\n'
    ),
    "mlp": (
        'edit(plan, "mlp", LAYER, write(clean["mlp_out"][LAYER], T, ARCH.d_model, positions=WHERE))\n'
    ),
    "pattern": (
        "# query head COLUMN's pattern, the clean run's: block LAYER run again on its resid_pre\n"
        'from_clean = attention_of(ARCH, WEIGHTS, clean, LAYER, ops=OPS)["pattern"][COLUMN]  # (T, T)\n'
        'edit(plan, "pattern", LAYER, write(from_clean, T, T, head=COLUMN))\n'
    ),
    "keys": (
        "# KV head COLUMN's keys (after RoPE), the clean run's: block LAYER run again on its resid_pre\n"
        'from_clean = attention_of(ARCH, WEIGHTS, clean, LAYER, ops=OPS)["k"][:, COLUMN]  # (T, d_head)\n'
        "columns = slice(COLUMN * ARCH.d_head, (COLUMN + 1) * ARCH.d_head)  # the KV heads side by side\n"
        'edit(plan, "k", LAYER, write(from_clean, T, ARCH.d_head, cols=columns))\n'
    ),
    "values": (
        "# KV head COLUMN's values, the clean run's: block LAYER run again on its resid_pre\n"
        'from_clean = attention_of(ARCH, WEIGHTS, clean, LAYER, ops=OPS)["v"][:, COLUMN]  # (T, d_head)\n'
        "columns = slice(COLUMN * ARCH.d_head, (COLUMN + 1) * ARCH.d_head)  # the KV heads side by side\n"
        'edit(plan, "v", LAYER, write(from_clean, T, ARCH.d_head, cols=columns))\n'
    ),
}


def steps(src: Source, p: dict) -> Steps:
    q = p["quantity"]
    inputs = []
    if src.decoder:
        right, other = p["answers"]
        inputs.append(f"POSITION = {p['position']}  # the token whose next-token logits the metric reads")
        inputs.append(f"ANSWERS = ({right}, {other})  # (right, other) token ids")
    if "target" in p:
        inputs.append(f"TARGET, LAYER = {p['target']!r}, {p['layer']}")
        if "column" in p:
            inputs.append(f"COLUMN = {p['column']}")
    body = _RUNS + (_METRIC_DECODER if src.decoder else _METRIC_ENCODER)
    body += "\n\nclean_value, corrupt_value = metric(clean[\"resid\"][-1]), metric(corrupt[\"resid\"][-1])\n"
    uses: tuple = (runs.answer_logits, logit_difference) if src.decoder else (runs.head, cosine)
    if "target" in p:
        patch = _PATCH[p["target"]]
        if p["target"] == "mlp":
            patch = patch.replace("WHERE", "[COLUMN]" if "column" in p else "None")
        body += (
            "# 2) the patch: the clean run's value in the corrupted run, recomputed from there on\n"
            "T = len(IDS)\n"
            "plan = new_plan(ARCH)\n"
            + patch
            + 'x = final_residual(ARCH, WEIGHTS, corrupt["resid"][plan.start], plan.start, plan, ops=OPS)\n'
            + "patched_value = metric(x)\n"
        )
        uses += (runs.new_plan, runs.edit, runs.write, runs.final_residual)
        if p["target"] in ("pattern", "keys", "values"):
            uses += (runs.attention_of,)
    body += {
        "value": "value = patched_value\n",
        "recovered": (
            "# 0: the corrupted run's metric, 1: the clean run's\n"
            "value = fraction_recovered(patched_value, clean_value, corrupt_value)\n"
        ),
        "clean": "value = clean_value\n",
        "corrupt": "value = corrupt_value\n",
    }[q]
    if q == "recovered":
        uses += (fraction_recovered,)
    where = cell = ""
    if "target" in p:  # each cell its own file: _resid_post_L28_5, _head_L2_H5, _keys_L4_KV1
        mark = {"head": "_H", "pattern": "_H", "keys": "_KV", "values": "_KV"}.get(p["target"], "_")
        column = f"{mark}{p['column']}" if "column" in p else ""
        cell = f"_{p['target']}_L{p['layer']}{column}"
        c = p.get("column")
        at = {"head": f"head {c}", "mlp": "MLP", "pattern": f"head {c}'s pattern",
              "keys": f"KV head {c}'s keys", "values": f"KV head {c}'s values",
              }.get(p["target"], p["target"].replace("_", " "))  # fmt: skip
        col = f", position {p['column']}" if p["target"] not in HEAD_FIELD and "column" in p else ""
        where = f" after patching layer {p['layer']} {at}{col}"
    words = {"value": "the metric", "recovered": "the fraction recovered", "clean": "the clean run's metric",
             "corrupt": "the corrupted run's metric"}[q]  # fmt: skip
    return Steps(
        what=f"Activation patching: {words}{where}",
        runs="circuits",
        inputs=inputs,
        body=body,
        name=f"{src.model}_patch_{q}{cell}.py",
        uses=uses,
        extra_ids=(("CORRUPT_IDS", src.corrupt_ids, src.corrupt_tokens or ("",) * len(src.corrupt_ids)),),
    )
