"""The families attnlab runs: each maps a checkpoint's own description to an engine Architecture.

- :mod:`.llama`: Llama-style decoders from a GGUF file's metadata (SmolLM2);
- :mod:`.bert`: BERT-style sentence encoders from a folder's ``config.json`` (MiniLM);
- :mod:`.gguf_weights`: a Llama-style GGUF file's weights, as its blocks or as float32.

A family is data (its config's keys, its tensors' names); the arithmetic is the one forward's
(:func:`attnlab.engine.forward.forward`).
"""
