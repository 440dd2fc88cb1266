"""SmolLM2 decoding several steps in one pass (models/smollm/rows.py): the one-token passes' bits."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine.errors import FieldError
from attnlab.models.model import positions_of

pytestmark = pytest.mark.models


def prefilled(model, text: str):
    cache = model.new_cache()
    logits = model.prefill(model.encode(text), cache=cache)
    return cache, logits


def test_verifying_drafts_gives_the_one_token_passes_logits_and_caches(smollm2):
    text = "Monday: wake up, eat breakfast. Tuesday: wake up,"
    mine, first = prefilled(smollm2, text)
    theirs, again = prefilled(smollm2, text)
    assert first.tobytes() == again.tobytes()
    tokens = [int(np.argmax(first)), 3134, 11368, 28, 7]  # the target's token, then four drafts
    rows = smollm2.step_rows(tokens, [mine] * len(tokens))
    for r, t in enumerate(tokens):
        assert rows[r].tobytes() == smollm2.forward([t], cache=theirs)[-1].tobytes(), r
    for a, b in zip(mine, theirs):
        assert a.keys.tobytes() == b.keys.tobytes() and a.values.tobytes() == b.values.tobytes()


def test_a_rolled_back_cache_goes_on_as_if_the_rejected_drafts_never_were(smollm2):
    mine, _ = prefilled(smollm2, "One, two, three,")
    theirs, _ = prefilled(smollm2, "One, two, three,")
    smollm2.step_rows([3, 4, 5, 6], [mine] * 4)
    for c in mine:
        c.truncate(c.length - 2)  # the last two drafts rejected
    for t in (3, 4):
        smollm2.forward([t], cache=theirs)
    assert smollm2.forward([9], cache=mine)[-1].tobytes() == smollm2.forward([9], cache=theirs)[-1].tobytes()


def test_a_batch_gives_each_request_its_own_steps_bits(smollm2):
    texts = ["Hi", "The capital of France is", "Write a poem about the sea and the wind:"]
    batch = [prefilled(smollm2, t)[0] for t in texts]
    alone = [prefilled(smollm2, t)[0] for t in texts]
    assert positions_of(batch).tolist() == [len(smollm2.encode(t)) for t in texts]
    for step in range(2):
        tokens = [100 + step, 200 + step, 300 + step]
        rows = smollm2.step_rows(tokens, batch)
        for r, t in enumerate(tokens):
            assert rows[r].tobytes() == smollm2.forward([t], cache=alone[r])[-1].tobytes(), (step, r)


def test_rows_need_a_list_of_caches_each_and_tokens_of_the_vocabulary(smollm2):
    cache, _ = prefilled(smollm2, "Hi")
    with pytest.raises(ValueError, match="2 tokens and 1 caches"):
        smollm2.step_rows([1, 2], [cache])
    with pytest.raises(FieldError) as err:
        smollm2.step_rows([49152], [cache])
    assert err.value.loc == ("ids", 0) and cache[0].length == 1
