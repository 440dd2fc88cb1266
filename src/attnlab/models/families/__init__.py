"""The families attnlab runs: each maps a checkpoint's own description to an engine Architecture.

- :mod:`.llama`: Llama 2 and 3 (SmolLM, SmolLM2), Mistral, Qwen2, Qwen3, Phi-3;
- :mod:`.gemma`: Gemma, Gemma 2, Gemma 3;
- :mod:`.gpt2`: GPT-2;
- :mod:`.bert`: BERT, MiniLM, RoBERTa, DistilBERT (sentence encoders);
- :mod:`.checkpoint`: a folder or a GGUF file opened as a model (:func:`.checkpoint.open_path`);
- :mod:`.settings` (a file's settings with the family's defaults), :mod:`.store` (its tensors
  laid out for the engine on one weight path), :mod:`.errors` (the typed refusals);
- :mod:`.gguf_weights`: the shipped SmolLM2's GGUF weights, as its blocks or as float32.

A family is data (its config's keys and defaults, its tensors' names); the arithmetic is the one
forward's (:func:`attnlab.engine.forward.forward`). A family not on the list is refused with its
name and the list (:class:`.errors.UnknownFamily`). docs/model-families.md is the overview.
"""
