"""The circuits views of a real model: the numbers (``models/circuits``) with the lab's words
(``lab/circuits``), as JSON-ready dicts the page, the CLI and the widgets show alike.

Each view takes a loaded model and a run of a text (:class:`~attnlab.models.circuits.runs.Cache`)
or two (:class:`~attnlab.models.circuits.patching.Pair`):

- :mod:`.texts`: a text's token ids and tokens as the model reads them, an answer's one token;
- :mod:`.ablation`, :mod:`.attribution`, :mod:`.patching`, :mod:`.lens`, :mod:`.head`: the views;
The same views as model-worker jobs, with progress and Cancel for a patching sweep, are
``models/jobs/circuits`` (a text in, the view out), over the runs a worker keeps between jobs
(``models/jobs/kept``: by model and token ids, so a second view of the same text, or a second
sweep of the same two prompts, runs nothing again).
"""
