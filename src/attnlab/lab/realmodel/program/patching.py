"""Activation patching's numbers: one clean activation in the corrupted run, and the metric after.

Kind ``patch``, on a clean and a corrupted prompt of one token length, fields ``target``,
``layer``, ``column`` and ``quantity``:

- ``target``: ``resid_pre`` / ``resid_mid`` / ``resid_post`` (the residual stream entering
  block ``layer``, between its sublayers, leaving it; ``column``: the position patched),
  ``head`` (query head ``column``'s z at every position) or ``mlp`` (the MLP output of
  ``layer``; at position ``column``, or at every position without one);
- the metric: SmolLM2, logit(right) - logit(other) at ``position`` (default: the last
  token) for ``answers`` = "right,other" token ids; MiniLM, the cosine of the sentence
  embedding with the clean run's;
- ``quantity``: ``value`` (the metric after the patch), ``recovered`` ((patched - corrupt) /
  (clean - corrupt)), ``clean`` or ``corrupt`` (the metric on each run).

(models/circuits/patching.py: the patched run recomputes from the patched layer on, from
the corrupted run's residual stream.)
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel.program import circuits, pieces
from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps

TARGETS = ("resid_pre", "resid_mid", "resid_post", "head", "mlp")
QUANTITIES = ("value", "recovered", "clean", "corrupt")


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
        if p["target"] == "head":
            p["column"] = n.head(raw, kind, src, name="column")
        elif p["target"] != "mlp" or raw.get("column") is not None:
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
clean = run(embed(IDS))
corrupt = run(embed(CORRUPT_IDS))
"""

_METRIC_DECODER = '''

def metric(x_final):
    """logit(right) - logit(other) at POSITION: the final norm on that row, then the answers' rows of E."""
    h = rms_norm(x_final[POSITION : POSITION + 1], output_norm())  # (1, d)
    a = (h @ ANSWER_ROWS.T)[0]  # (2,) float32
    return np.float64(a[0]) - np.float64(a[1])
'''

_METRIC_ENCODER = '''

def metric(x_final):
    """The cosine of the sentence embedding of x_final (1, T, d) with the clean run's."""
    return cosine(pooled(x_final), CLEAN_POOLED)
'''

# the patch: where the clean value goes, and the first block recomputed
_PATCH = {
    "resid_pre": (
        'points = {LAYER: replacing([COLUMN], slice(None), clean["resid"][LAYER])}\n'
        "start, hooks = LAYER, {}\n"
    ),
    "resid_post": (
        'points = {LAYER + 1: replacing([COLUMN], slice(None), clean["resid"][LAYER + 1])}\n'
        "start, hooks = LAYER + 1, {}\n"
    ),
    "resid_mid": (
        "points = {}\n"
        'start, hooks = LAYER, {LAYER: {"mid": replacing([COLUMN], slice(None), clean["mid"][LAYER])}}\n'
    ),
    "head": (
        "points = {}\n"
        "columns = slice(COLUMN * D_HEAD, (COLUMN + 1) * D_HEAD)  # query head COLUMN's z, before W_O\n"
        'value_z = clean["z"][LAYER][:, columns]\n'
        'start, hooks = LAYER, {LAYER: {"z": replacing(slice(None), columns, value_z)}}\n'
    ),
    "mlp": (
        "points = {}\n"
        'start, hooks = LAYER, {LAYER: {"mlp": replacing(WHERE, slice(None), clean["mlp"][LAYER])}}\n'
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
    body = _RUNS
    if src.decoder:
        body += "ANSWER_ROWS = embedding_rows(ANSWERS)  # (2, d): the answers' rows of E\n"
        body += 'x_clean, x_corrupt = clean["resid"][N_LAYER], corrupt["resid"][N_LAYER]\n'
        metric = [_METRIC_DECODER]
        resume = 'corrupt["resid"][start]'
    else:
        body += 'CLEAN_POOLED = pooled(clean["x"])\n'
        body += 'x_clean, x_corrupt = clean["x"], corrupt["x"]\n'
        metric = [pieces.COSINE, _METRIC_ENCODER]
        resume = 'corrupt["resid"][start][None]'
    body += "clean_value, corrupt_value = metric(x_clean), metric(x_corrupt)\n"
    if "target" in p:
        patch = _PATCH[p["target"]]
        if p["target"] == "mlp":
            patch = patch.replace("WHERE", "[COLUMN]" if "column" in p else "slice(None)")
        body += (
            "# 2) the patch: the clean run's value in the corrupted run, recomputed from there on\n"
            + patch
            + f"patched = run({resume}, start, hooks, points)\n"
            + (
                'patched_value = metric(patched["resid"][N_LAYER])\n'
                if src.decoder
                else 'patched_value = metric(patched["x"])\n'
            )
        )
    body += {
        "value": "value = patched_value\n",
        "recovered": (
            "# 0: the corrupted run's metric, 1: the clean run's\n"
            "value = (patched_value - corrupt_value) / (clean_value - corrupt_value)\n"
        ),
        "clean": "value = clean_value\n",
        "corrupt": "value = corrupt_value\n",
    }[q]
    where = cell = ""
    if "target" in p:  # each cell its own file: _resid_post_L28_5, _head_L2_H5
        column = f"_H{p['column']}" if p["target"] == "head" else f"_{p['column']}" if "column" in p else ""
        cell = f"_{p['target']}_L{p['layer']}{column}"
        at = {"head": f"head {p.get('column')}", "mlp": "MLP"}.get(p["target"], p["target"].replace("_", " "))
        col = f", position {p['column']}" if p["target"] != "head" and "column" in p else ""
        where = f" after patching layer {p['layer']} {at}{col}"
    words = {"value": "the metric", "recovered": "the fraction recovered", "clean": "the clean run's metric",
             "corrupt": "the corrupted run's metric"}[q]  # fmt: skip
    return Steps(
        what=f"Activation patching: {words}{where}",
        runs="circuits",
        inputs=inputs,
        pieces=[*circuits.pieces_for(src), *metric],
        body=body,
        name=f"{src.model}_patch_{q}{cell}.py",
        extra_ids=(("CORRUPT_IDS", src.corrupt_ids, src.corrupt_tokens or ("",) * len(src.corrupt_ids)),),
    )
