"""'How is this computed?': the runnable NumPy program behind any number the real-model views show.

For a number of the Real model page (a head's share or score, a row's or the neuron view's
numbers, a next-token logit or probability, the journey's) or of the circuits views (an
ablation's probabilities and losses, a logit attribution's terms, a patch's metric and
fraction recovered, the logit lens, a head's QK products and OV-promoted logits), a program
that reads the model file itself (SmolLM2's GGUF with ``gguf``, MiniLM's safetensors with
``safetensors``), imports nothing of attnlab, runs the float32 operations attnlab runs in
the same order, on the same layouts, up to that number, and prints it. On the float32 path
it prints the page's number bit for bit (tested: ``tests/lab/realmodel/program/``); the page's
q4_1 path sums its products in another order, and the answer says so.

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
                 | resid_post | head | mlp), layer, column (a position; a head for target head;
                 none for a whole MLP), position and answers ("right,other") on SmolLM2;
                 the corrupted prompt comes with the text (Source.corrupt_ids)
    lens         position, layer, quantity (token_p | logit | top_p), token (optional), rank (top_p)
    head_qk      layer, head, query, key, quantity (before | after | weight)
    head_ov      layer, head, position, quantity (promoted | written | source_weight), source, rank

plus ``value`` (optional): the number as the page shows it, named in the program's comments.

Modules: :mod:`.answer` (the one entry point, :func:`~.answer.program_answer`), :mod:`.number`
(the text and the checks), :mod:`.pieces` (every shared piece of program text, once),
:mod:`.text` (a program put together), :mod:`.trace` and :mod:`.circuits` (the two runs),
one module per kind of number (:mod:`.head`, :mod:`.row`, :mod:`.nexttoken`, :mod:`.journey`,
:mod:`.ablation`, :mod:`.attribution`, :mod:`.patching`, :mod:`.lens`, :mod:`.readwrite`),
and :mod:`.words` (the control's words and what a program reproduces).
"""
