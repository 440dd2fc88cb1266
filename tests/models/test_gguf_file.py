"""Our memory-mapped GGUF reader (models/gguf_file.py) against gguf's own GGUFReader."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.models import files
from attnlab.models.gguf_file import GGUFFile


def _missing() -> str | None:
    try:
        files.locate(files.SMOLLM2)
    except files.ModelNotInstalled as error:
        return str(error)
    return None


SMOLLM2_MISSING = _missing()
pytestmark = pytest.mark.models
needs_smollm2 = pytest.mark.skipif(bool(SMOLLM2_MISSING), reason=str(SMOLLM2_MISSING))


@pytest.fixture(scope="module")
def both():
    if SMOLLM2_MISSING:
        pytest.skip(SMOLLM2_MISSING)
    from gguf import GGUFReader

    path = files.smollm2_gguf()
    return GGUFFile(path), GGUFReader(str(path))


def test_metadata_equals_gguf_reader(both):
    ours, theirs = both
    expected = {k: f.contents() for k, f in theirs.fields.items() if not k.startswith("GGUF.")}
    assert ours.metadata.keys() == expected.keys()
    for key, value in expected.items():
        assert ours.metadata[key] == value, key
    assert len(ours.metadata["tokenizer.ggml.tokens"]) == 49152


def test_tensors_are_the_stored_bytes_in_place(both):
    ours, theirs = both
    assert list(ours.tensors) == [t.name for t in theirs.tensors]
    for t in theirs.tensors:
        info = ours.info(t.name)
        assert info.type == t.tensor_type.name
        assert info.shape == tuple(reversed(t.shape.tolist()))
        raw = ours.raw(t.name)
        assert not raw.flags.writeable  # a view of the read-only map, not a copy
        assert raw.tobytes() == np.ascontiguousarray(t.data).tobytes(), t.name
    norm = ours.array("output_norm.weight")
    assert norm.dtype == np.float32 and norm.shape == (576,) and not norm.flags.writeable


def test_dequantized_is_ggufs(both):
    ours, theirs = both
    from gguf.quants import dequantize

    t = next(t for t in theirs.tensors if t.name == "blk.3.attn_k.weight")
    expected = dequantize(t.data, t.tensor_type).reshape(192, 576)
    np.testing.assert_array_equal(ours.dequantized("blk.3.attn_k.weight"), expected)


def test_not_a_gguf_file_is_refused(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGML" + bytes(60))
    with pytest.raises(ValueError, match="not a GGUF file"):
        GGUFFile(bad)


@needs_smollm2
def test_missing_tensor_names_itself():
    g = GGUFFile(files.smollm2_gguf())
    with pytest.raises(KeyError, match="no tensor 'nope'"):
        g.raw("nope")
    with pytest.raises(ValueError, match="stored as Q4_1"):
        g.array("blk.0.attn_q.weight")
