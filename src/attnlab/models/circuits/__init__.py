"""Circuits in the shipped models: cached runs, ablation, patching, logit lens, logit attribution.

Numbers only (the words are the lab's). Every function takes a loaded model: SmolLM2
(a decoder: on the GGUF file's Q4_1 blocks, ``path == "q4_1"``, or on float weights,
``"float32"`` / ``"float64"`` from ``SmolLM2.with_dtype``) or MiniLM (an encoder, float32).

- :mod:`.stack`: the model's forward pass in pieces (embed, one block with edits, the end),
  the same calls in the same order as the model's own, so a run without edits gives its
  numbers bit for bit;
- :mod:`.runs`: :func:`~.runs.run` keeps every activation of one pass (:class:`~.runs.Cache`),
  :func:`~.runs.resume` runs again from one layer on with interventions;
- :mod:`.edits`: the interventions, as data (:class:`~.edits.SetHead`, :class:`~.edits.SetMLP`,
  :class:`~.edits.SetResid`) and the block hooks they become;
- :mod:`.metrics`: probabilities, loss, logit difference, fraction recovered, cosine;
- :mod:`.ablation`, :mod:`.patching`, :mod:`.lens`, :mod:`.attribution`, :mod:`.heads`: the views.

Shapes (no batch axis): T tokens, L layers, H query heads of d_head, d = d_model, V vocabulary.
Positions and layers count from 0. The residual stream has L + 1 points: point l enters
block l (point 0 is the embedding, after MiniLM's embedding LayerNorm), point l + 1 leaves it;
``resid_pre[l]`` is point l, ``resid_post[l]`` point l + 1. A head's output ``z`` is its slice
of the heads side by side before W_O (query head h of a GQA model, never a shared KV head).
Conventions in full: docs/engine-conventions.md, "Circuits".
"""
