"""What a head reads and writes, on both models: the numerics' products and tokens, as shown."""

from __future__ import annotations

import pytest

from attnlab.models.circuits.heads import head_reads, head_writes
from attnlab.models.circuits.runs import run
from attnlab.models.circuitviews.head import head_view

pytestmark = pytest.mark.models


def test_the_heads_reads_and_writes_are_the_numerics(smollm2, eiffel, minilm):
    v = head_view(smollm2, eiffel, 18, 6, -1)
    reads, writes = head_reads(smollm2, eiffel, 18, 6), head_writes(smollm2, eiffel, 18, 6, 8)
    assert [k["before"] for k in v["keys"]] == reads.dots_before[8].tolist()
    assert [k["after"] for k in v["keys"]] == reads.dots_after[8].tolist()
    assert v["group"] == [6, 7, 8] and v["group_words"]["claims"] == {"kv_head": 2, "group": [6, 7, 8]}
    assert [s["index"] for s in v["writes"]["sources"]] == writes.sources.tolist()
    assert [t["id"] for t in v["writes"]["written"]] == writes.written_ids.tolist()
    ids = minilm.tokenize(["The cat sat."]).ids[0].tolist()
    encoder = head_view(minilm, run(minilm, ids), 1, 3, 2)
    assert encoder["writes"] is None and encoder["rope_words"]["claims"]["rope"] is False
