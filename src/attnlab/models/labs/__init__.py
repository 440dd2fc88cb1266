"""The model parts of the connection labs (``lab/connections``): each run's numbers, computed here.

``runs.measure(ask, jobs)`` answers a lab's :class:`~attnlab.lab.connections.live.Ask` with a
:class:`~attnlab.lab.connections.live.Measured`: facts and cheap runs at once, in this process
(``facts.py``: a model's shapes and RoPE from the registry and its GGUF; ``embeddings.py``:
MiniLM's embeddings of a few sentences); longer runs as jobs of the server's job line
(``kv.py``: a SmolLM2 generation measuring its KV caches, a lab's run in the worker;
``logits.py`` and ``needle.py``: numbers read from trace jobs; ``speculate.py`` and ``serving.py``:
timed comparisons in the worker, speculative against plain decoding and continuous batching against
one request at a time). Numbers only: the lab words them.
"""
