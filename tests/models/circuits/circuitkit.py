"""What the circuits tests share besides fixtures: the prompts, and how close to the peer is close.

``close(path, theirs)``: the allowed distance of our logit-sized numbers from the hooked
transformers peer's. On the q4_1 path, the Q4 logits oracle's 5e-4
(tests/models/test_smollm2.py). On the float32 path, 1e-5 of the largest magnitude
compared: a float32 pass through 30 layers rounds logits near 27 by about 1e-4 on
either side, so an absolute 1e-5 on raw logits would test rounding, not the
intervention. Probabilities, fractions recovered and cosines are within ``UNIT`` = 1e-5
on both paths.
"""

from __future__ import annotations

import numpy as np

CLEAN = "The Eiffel Tower is in the city of"
CORRUPT = "The Colosseum is in the city of"
ANSWERS = (" Paris", " Rome")
SENTENCE = "The cat sat on the mat."
OTHER_SENTENCE = "The dog sat on the rug."

Q4_LOGITS = 5e-4  # the Q4 path's logits against transformers (tests/models/test_smollm2.py)
RELATIVE = 1e-5  # the float32 path: of the largest magnitude compared
UNIT = 1e-5  # probabilities, fractions recovered, cosines: on both paths


def close(path: str, theirs) -> float:
    """The allowed distance between our logit-sized numbers and the peer's on ``path``."""
    if path == "q4_1":
        return Q4_LOGITS
    return RELATIVE * max(float(np.max(np.abs(theirs))), 1.0)


def sentence_ids(minilm, text: str = SENTENCE) -> list[int]:
    return minilm.tokenize([text]).ids[0].tolist()
