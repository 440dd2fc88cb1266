"""The shipped models' shapes as ``attnlab.models.labs.facts.shapes`` gives them, recorded.

The registry reads them from the models' own files (their packages); the labs' tests take them from
here so they need no model package. ``tests/models/labs/test_facts.py`` (models lane) checks they are
the files' own.
"""

SHAPES = {
    "smollm2": {"model": "smollm2", "title": "SmolLM2-135M-Instruct", "called": "SmolLM2",
                "architecture": "decoder", "layers": 30, "query_heads": 9, "kv_heads": 3, "head_dim": 64},
    "minilm": {"model": "minilm", "title": "all-MiniLM-L6-v2", "called": "MiniLM", "architecture": "encoder",
               "layers": 6, "query_heads": 12, "kv_heads": 12, "head_dim": 32},
}  # fmt: skip
