"""The Circuits page's words: what the server writes into ``circuits.html``, the models' choices,
and a text's token positions for the pickers.

:func:`circuits_page` is the page's ``FILLS`` entry (``web/assets.py``): ``fills`` go in at
each ``<!-- fill:name -->`` marker (the headings, labels and notes the page shows before
any answer), ``words`` into the words data block (the templates ``js/circuits`` fills with
what it holds: ``{slot}`` only). :func:`model_choices` and :func:`text_positions` answer
``GET /api/circuits/models`` and ``POST /api/circuits/{model}/tokens``: every option's label
is written here, never in the page.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.lab.circuits.census import score_choices
from attnlab.lab.heads import FORMAT, heads_named
from attnlab.lab.page import shared_fills, shared_words
from attnlab.lab.realmodel.status import count_words
from attnlab.lab.realmodel.tokens import row_label

SECTIONS = ("census", "ablation", "patching", "lens", "head")

FILLS = {
    "title": "Circuits in a real model",
    "back": "← Back to the Real model view",
    "skip": "Skip to the text",
    "lede": "Which heads copy, which look back one token, which rest on the first token; what the "
    "prediction loses when a head is switched off; which component carries the difference between two "
    "prompts; where in the stack the answer forms. attnlab's own engine runs the model on this machine, "
    "every number exact; the page only draws what the server returns.",
    "sections_label": "Sections of this page",
    "nav_census": "Census",
    "nav_ablation": "Ablation",
    "nav_patching": "Patching",
    "nav_lens": "Lens",
    "nav_head": "Head",
    "form_title": "Text and model",
    "text_label": "Text to look at",
    "model_label": "Model",
    "probe": "Repeat a random run",
    "probe_note": "A random run of words written three times, from a seed the page shows: the text to "
    "find induction heads with.",
    "census_title": "Head census: what each head does",
    "census_hint": "Every head's five scores on this text, computed once with its trace. Pick a score to "
    "colour the map by it and rank the heads; open a head to see the values its score averages and the "
    "query rows they come from.",
    "score_label": "Score",
    "census_run": "Score every head",
    "evidence_hint": "Choose a head in the list or the map to see where its score comes from.",
    "ablation_title": "Ablation: switch heads off",
    "ablation_hint": "Switch off any heads and run the text again: zero sets a head's output (before W_O) "
    "to 0 at every position, mean sets it to its mean over this text. The attention pattern is left "
    "alone. A decoder shows every position's next-token probability and loss before and after; the "
    "encoder shows how the vectors leaving a layer moved.",
    "heads_label": "Heads to switch off",
    "heads_hint": f"Write each as {FORMAT}, separated by commas: {heads_named([(18, 6), (17, 4)])}.",
    "how_label": "How",
    "how_zero": "zero (set to 0)",
    "how_mean": "mean (set to its mean over the text)",
    "ablation_layer_label": "Layer whose output is shown (encoder)",
    "ablation_run": "Switch them off",
    "dla_title": "Which heads matter here",
    "dla_hint": "Direct logit attribution: the logit of the model's top token at a position, split into "
    "what the embedding, each head and each MLP wrote into the residual stream. The final norm's scale "
    "is frozen at its value in the real forward pass, so the terms add up to the logit.",
    "position_label": "Position",
    "dla_run": "Split the logit",
    "patching_title": "Activation patching: two prompts",
    "patching_hint": "Two prompts of the same token length that differ in one fact. Run the corrupted "
    "one, put one activation of the clean run in its place, and see how much of the clean answer comes "
    "back. A decoder compares the logits of two answer tokens; the encoder compares sentence "
    "embeddings (cosine).",
    "clean_label": "Clean prompt",
    "corrupt_label": "Corrupted prompt (same token length)",
    "right_label": "Right answer (one token)",
    "other_label": "Other answer (one token)",
    "sweep_label": "What to patch",
    "sweep_residual": "the residual stream, each layer × token",
    "sweep_heads": "each query head's output, each layer × head",
    "sweep_mlp": "each layer's MLP output",
    "sweep_pattern": "each query head's attention pattern, each layer × head",
    "sweep_keys": "each KV head's keys, each layer × KV head",
    "sweep_values": "each KV head's values, each layer × KV head",
    "site_label": "Where in the block (residual stream)",
    "site_pre": "entering the block",
    "site_mid": "between attention and the MLP",
    "site_post": "leaving the block",
    "first_layer_label": "First layer",
    "last_layer_label": "Last layer",
    "patch_run": "Run the sweep",
    "patch_cancel": "Cancel",
    "lens_title": "Logit lens: where the answer forms",
    "lens_hint": "The residual stream after each block, read through the model's own final norm and "
    "unembedding as if it were the last block: the top 5 tokens and the answer's probability, block by "
    "block.",
    "lens_run": "Read every block",
    "head_title": "What one head reads and writes",
    "head_hint": "One query head at one query token: its query-key products before and after RoPE (with "
    "the key and value head its group shares), and the tokens its value→output direction promotes for "
    "the tokens it attends to.",
    "layer_label": "Layer",
    "head_label": "Head",
    "query_label": "Query token",
    "head_run": "Open the head",
    # the inputs' first values: an example to start from
    "default_text": "The cat sat on the mat. The cat sat on the mat.",
    "default_heads": heads_named([(18, 6), (17, 3), (17, 4)]),
    "default_clean": "The Eiffel Tower is in the city of",
    "default_corrupt": "The Colosseum is in the city of",
    "default_right": " Paris",
    "default_other": " Rome",
}

WORDS = {
    # a full line of model jobs (429): the server's sentence, then the seconds left of its Retry-After
    "retry": "{message} Trying again in {seconds} s…",
    "retraced": "{note} {done}",
    "count_failed": "Could not count the tokens: {message}",
    "nothing_traced": "Nothing traced: fix the text and try again.",
    # "How is this computed?" under each view (js/circuits/numbers.js)
    "how_pick": "Pick a number in this view: click it, or Tab to the view's numbers and move with the arrow "
    "keys (on a map, press Enter on a cell). Its program is shown here.",
}


def circuits_page() -> dict:
    """What the server writes into the Circuits page: its fixed words and the sentences at its markers."""
    return {"words": {**shared_words(), "circuits": dict(WORDS)}, "fills": {**shared_fills(), **FILLS}}


def model_choices(models: Sequence[dict]) -> list[dict]:
    """Each model's picker entries: its layers and heads as the pickers list them, and what it can show.

    ``models``: ``{"name", "title", "decoder", "n_layer", "kv_groups"}`` per model.
    """
    out = []
    for m in models:
        groups = [list(g) for g in m["kv_groups"]]
        shared = any(len(g) > 1 for g in groups)
        group_of = {h: g for g, members in enumerate(groups) for h in members}
        out.append({
            "name": m["name"],
            "title": m["title"],
            "decoder": bool(m["decoder"]),
            "n_layer": m["n_layer"],
            "n_head": len(group_of),
            "layers": [{"value": i, "label": f"layer {i}"} for i in range(m["n_layer"])],
            "heads": [{"value": h, "label": f"head {h} (KV head {group_of[h]})" if shared else f"head {h}"}
                      for h in range(len(group_of))],  # fmt: skip
            "scores": score_choices(),
            "views": list(SECTIONS) if m["decoder"] else ["census", "ablation", "patching", "head"],
            "note": "" if m["decoder"] else f"{m['title']} is an encoder: no next token, so no logit lens "
            "and no logit attribution; its ablation shows a layer's output and its patching compares "
            "sentence embeddings.",
        })  # fmt: skip
    return out


def text_positions(*, model: str, tokens: list[str], cap: int, title: str) -> dict:
    """A text's tokens as the position pickers list them (``"3 ␣cat"``), the last one, and the count."""
    words = count_words(count=len(tokens), cap=cap, title=title)
    return {
        "model": model,
        "count": len(tokens),
        "fits": words["claims"]["fits"],
        "message": words["text"],
        "positions": [{"value": i, "label": row_label(i, t), "exact": t} for i, t in enumerate(tokens)],
        "last": len(tokens) - 1,
    }
