"""MiniLM's embeddings for the embeddings lab (models/labs/embeddings.py): its own encode, each text alone."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.models.labs.embeddings import embed

pytestmark = pytest.mark.models

A = ("A cat sleeps on the sofa.", "The train leaves at noon.")
B = ("A kitten naps on the couch.", "The midday train departs.")


def test_the_embeddings_are_minilms_own(minilm):
    data = embed(A, B)
    assert data["d"] == 384 and len(data["a"]) == len(data["b"]) == 2
    np.testing.assert_array_equal(np.asarray(data["a"], dtype=np.float32), minilm.encode(list(A)))
    np.testing.assert_array_equal(np.asarray(data["b"], dtype=np.float32), minilm.encode(list(B)))
    assert data["tokens"] == [[len(minilm.tokenize([a]).tokens[0]), len(minilm.tokenize([b]).tokens[0])]
                              for a, b in zip(A, B)]  # fmt: skip
    norms = np.linalg.norm(np.asarray(data["a"] + data["b"]), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-6)
