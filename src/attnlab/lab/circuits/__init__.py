"""Circuits in a real model, in words: the head census, ablation, logit attribution, patching,
the logit lens and what one head reads and writes (issue 23).

Every function here takes numbers (arrays, plain values, or the numerics' results read by
attribute: ``models/circuits``) and the text's tokens, and returns JSON-ready dicts: each
number with its display string (``lab/numbers.py``), each sentence with its claims
(``lab/said.py``). :mod:`.requests` is each request once for every surface: its checks, its run
(a job of the model worker, whose functions compute the numbers, or here) and these words.
"""
