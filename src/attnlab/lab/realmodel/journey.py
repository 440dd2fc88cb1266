"""One token's journey in words: each block's numbers rounded for reading, the plots' names, the title.

``journey_display(blocks, label=..., norm=..., placement=...)`` takes the numeric
blocks of :func:`token_journey` (the trace's journey arrays, :func:`attnlab.models.journey.journey_arrays`)
and adds, per block, the
rounded strings (``display``), the norms' statistics and the MLP units at full
precision (``precise``, ``value_precise``: the hover titles) and each bar's
readout (``says``: "block 3: attention adds 1.25"), and for the view its title
and the sentence on its norms.
"""

from __future__ import annotations

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.query import row_labels
from attnlab.lab.said import said
from attnlab.models.journey import STATS

NORMS = ("resid_in", "attn", "mlp", "resid_out")
SERIES = {"resid_in": "residual in", "attn": "attention adds", "mlp": "MLP adds", "resid_out": "residual out"}
STAT_NAMES = {"mean": "mean", "rms": "rms", "max_abs": "max |x|"}
NORM_NAMES = {"norm_1": "first norm", "norm_2": "second norm"}


def _stats(stats: dict, layer: int, name: str) -> dict:
    display = {k: fmt.rounded(stats[k]) for k in STAT_NAMES}
    precise = {k: fmt.precise(stats[k]) for k in STAT_NAMES}
    says = {
        k: f"block {layer}: {NORM_NAMES[name]} {STAT_NAMES[k]} = {display[k]} "
        f"(exactly {precise[k]})"
        for k in STAT_NAMES
    }
    return {**stats, "display": display, "precise": precise, "says": says}


def journey_display(blocks: list[dict], *, label: str, norm: str, placement: str) -> dict:
    """The journey's strings for token ``label``: ``norm`` "rms" or "layer", ``placement`` "pre" or "post"."""
    shown = []
    for b in blocks:
        layer = b["layer"]
        display = {k: fmt.rounded(b[k]) for k in NORMS}
        says = {k: f"block {layer}: {SERIES[k]} {display[k]}" for k in NORMS}
        norms = {n: _stats(b[n], layer, n) for n in NORM_NAMES}
        for n in NORM_NAMES:
            says[n] = f"block {layer}: {NORM_NAMES[n]}: rms of its input {norms[n]['display']['rms']}"
        units = [{**u, "unit_display": f"{u['unit']:,}", "value_display": fmt.rounded(u["value"]),
                  "value_precise": fmt.precise(u["value"]),
                  "says": f"block {layer}: MLP unit {u['unit']} = {fmt.rounded(u['value'])} "
                          f"(exactly {fmt.precise(u['value'])})"}
                 for u in b["mlp_top"]]  # fmt: skip
        shown.append({**b, **norms, "mlp_top": units, "display": display, "says": says,
                      "layer_display": f"{layer:,}"})  # fmt: skip
    where = "before" if placement == "pre" else "after"
    return {
        "title": f"Token {label} through {fmt.plural(len(blocks), 'block')}",
        "lede": said(
            f"These are the lengths (L2 norms) of this token's vectors, and the model uses {norm} norm, "
            f"placed {where} each sublayer.",
            norm=norm,
            placement=placement,
        ),
        "series": [{"name": k, "words": SERIES[k], "label": f"{SERIES[k]}, block by block"} for k in NORMS]
        + [
            {
                "name": n,
                "words": f"{NORM_NAMES[n]}: rms of its input",
                "label": f"{NORM_NAMES[n]}: rms of its input, block by block",
            }
            for n in NORM_NAMES
        ],  # fmt: skip
        "columns": [
            "block",
            "first norm: mean / rms / max |x|",
            "second norm: mean / rms / max |x|",
            "strongest MLP units (unit: value)",
        ],  # fmt: skip
        "readout": "Hover or focus a bar for its number.",
        "table_label": "Block by block",
        "more": "Every block's norm statistics and strongest MLP units",
        # what stands between a cell's numbers, as the columns' headings write them
        "joins": {"stats": " / ", "units": ", ", "unit": ": "},
        "blocks": shown,
    }


def token_journey(journey: dict[str, np.ndarray], index: int) -> list[dict]:
    """Token ``index``'s journey, block by block, at full precision (JSON-ready floats).

    Each block: the four norms, the two norms' statistics (``mean``, ``rms``,
    ``max_abs``) and the strongest MLP units (``unit``, ``value``), largest first.
    """
    norms = ("resid_in", "attn", "mlp", "resid_out")
    blocks = []
    for layer in range(journey["resid_in"].shape[0]):
        blocks.append(
            {
                "layer": layer,
                **{k: float(journey[k][layer, index]) for k in norms},
                "norm_1": dict(zip(STATS, journey["norm_1"][layer, index].tolist())),
                "norm_2": dict(zip(STATS, journey["norm_2"][layer, index].tolist())),
                "mlp_top": [
                    {"unit": int(u), "value": float(v)}
                    for u, v in zip(journey["mlp_units"][layer, index], journey["mlp_values"][layer, index])
                ],
            }
        )
    return blocks


def journey_view(trace, index: int, *, norm: str | None = None) -> dict:
    """JSON-ready journey of token ``index`` of ``trace`` with its words.

    ``norm``: "rms" or "layer"; ``None``: the model's, as its registry entry reads it from its files
    (GPT-2 is a decoder with LayerNorm; a model the registry does not know: LayerNorm).
    ``FieldError`` at ``index`` past the text.
    """
    from attnlab.models import registry

    trace.check_token("index", index)
    if norm is None:
        spec = registry.SPECS.get(trace.model)
        norm = spec.facts().shapes.norm if spec is not None else "layer"
    placement = "pre" if trace.causal else "post"
    blocks = token_journey(trace.journey, index)
    label = row_labels(trace)[index]
    return {
        "index": index,
        "label": label,
        "norm": norm,
        "placement": placement,
        **journey_display(blocks, label=label, norm=norm, placement=placement),
    }
