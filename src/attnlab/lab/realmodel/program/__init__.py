"""'How is this computed?': the runnable NumPy program behind any number the real-model views show.

For a number of the Real model page (a head's share or score, a row's or the neuron view's
numbers, a next-token logit or probability, the journey's) or of the circuits views (an
ablation's probabilities and losses, a logit attribution's terms, a patch's metric and
fraction recovered, the logit lens, a head's QK products and OV-promoted logits), a program
that reads the model file itself (SmolLM2's GGUF with ``gguf``, MiniLM's safetensors with
``safetensors``), imports nothing of attnlab, and runs attnlab's own forward pass on the
float32 weights, laid out as attnlab lays them out, up to that number, and prints it. On the
float32 path it prints the page's number bit for bit (tested: ``tests/lab/realmodel/program/``);
the page's q4_1 path sums its products in another order, and the answer says so.

Nothing of the forward is written here as text. A program is generated from the model's
description and attnlab's code: the model's ``Architecture`` with its values written in, and
the source of every function the forward calls (engine/forward.py's ``forward``, ``block``,
``attention``, ``mlp`` and the readable steps ``Reference``; engine/layers.py,
engine/attention.py, engine/hooks.py; the fast path's engine/fast/decode functions, and its
compiled steps as their NumPy forms, engine/fast/decode/numpy_kernels.py), copied as written
by :mod:`.bundle`. The forward runs with one of two sets of steps
(:mod:`attnlab.models.program_steps`): the trace's (the Real model view's numbers) or the fast
path's (the circuits').

A number is named by a descriptor: ``kind`` and its fields (integers, or the strings named)::

    weight       layer, head, query, key
    head_score   layer, head, score (previous | first | induction | duplicate | self | breadth)
    census       layer, head, score: as the model view and the census compute it (every head at once)
    evidence     layer, head, score (previous | first | induction | duplicate | breadth), query (optional):
                 the census evidence's value of one query, or the mean of the counted queries' values
    row          layer, head, query, quantity (q | k | product | running | dot | score | exp | share
                 | m | z), key (all but q, m, z), coordinate (q, k, product, running)
    next         position, token, quantity (logit | p_model | p), temperature, top_k, top_p (p)
    journey      index, layer, quantity (resid_in | attn | mlp | resid_out | norm_1.mean | norm_1.rms
                 | norm_1.max_abs | norm_2.* | mlp_unit), rank (mlp_unit)
    ablation     heads ("18.6,17.4"), how (zero | mean), quantity (SmolLM2: p_next_before | p_next_after
                 | loss_before | loss_after | top_p_before | top_p_after | kl, with position, rank
                 for top_p_*; mean_loss_before | mean_loss_after | mean_loss_change; MiniLM:
                 norm_before | change | relative | cosine, with position and layer; pooled_cosine)
    attribution  position, token, term (embedding | head | mlp | heads | mlps | total | logit
                 | difference | bound | scale | rms), layer, head
    patch        quantity (value | recovered | clean | corrupt), target (resid_pre | resid_mid
                 | resid_post | head | mlp | pattern | keys | values), layer, column (a
                 position; a head for target head; none for a whole MLP), head (pattern) or
                 kv_head (keys, values) (a sweep's cell may name either by its column),
                 position and answers ("right,other") on SmolLM2; the corrupted prompt comes
                 with the text (Source.corrupt_ids)
    lens         position, layer, quantity (token_p | logit | top_p), token (optional), rank (top_p)
    head_qk      layer, head, query, key, quantity (before | after | weight)
    head_ov      layer, head, position, quantity (promoted | written | source_weight), source, rank

plus ``value`` (optional): the number as the page shows it, named in the program's comments.

Modules: :mod:`.answer` (the one entry point, :func:`~.answer.program_answer`), :mod:`.number`
(the text and the checks), :mod:`.text` (a program put together), :mod:`.bundle` (attnlab's
source for a program), :mod:`.compat` (NumPy stand-ins for the engine's array-API and thread
helpers), :mod:`.runs` (the runs, as the models make them; their steps are
:mod:`attnlab.models.program_steps`), :mod:`.model_file` (the model file, read as attnlab
reads it), one module per kind of number (:mod:`.head`, :mod:`.row`, :mod:`.nexttoken`,
:mod:`.journey`, :mod:`.ablation`, :mod:`.attribution`, :mod:`.patching`, :mod:`.lens`,
:mod:`.readwrite`), and :mod:`.words` (the control's words and what a program reproduces).
"""
