"""Our memory-mapped GGUF reader (models/gguf_file.py) against gguf's own GGUFReader.

SmolLM2's file where its package is installed (marked ``models``); everywhere, GGUF
files written here with gguf's own ``GGUFWriter``: a tensor of every type, metadata of
every value type, a 262,144-token vocabulary, and broken files, each refused with a
typed error carrying the facts.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from attnlab.models import file_errors, files
from attnlab.models.gguf_file import READABLE, GGUFFile

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, for gguf_blocks

from gguf_blocks import ALL, gguf_values, random_blocks  # noqa: E402


def _missing() -> str | None:
    try:
        files.locate(files.SMOLLM2)
    except files.ModelNotInstalled as error:
        return str(error)
    return None


SMOLLM2_MISSING = _missing()
needs_smollm2 = pytest.mark.skipif(bool(SMOLLM2_MISSING), reason=str(SMOLLM2_MISSING))


@pytest.fixture(scope="module")
def both():
    if SMOLLM2_MISSING:
        pytest.skip(SMOLLM2_MISSING)
    from gguf import GGUFReader

    path = files.smollm2_gguf()
    return GGUFFile(path), GGUFReader(str(path))


@pytest.mark.models
def test_metadata_equals_gguf_reader(both):
    ours, theirs = both
    expected = {k: f.contents() for k, f in theirs.fields.items() if not k.startswith("GGUF.")}
    assert ours.metadata.keys() == expected.keys()
    for key, value in expected.items():
        assert ours.metadata[key] == value, key
    assert len(ours.metadata["tokenizer.ggml.tokens"]) == 49152


@pytest.mark.models
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


@pytest.mark.models
def test_dequantized_is_ggufs(both):
    ours, theirs = both
    from gguf.quants import dequantize

    t = next(t for t in theirs.tensors if t.name == "blk.3.attn_k.weight")
    expected = dequantize(t.data, t.tensor_type).reshape(192, 576)
    np.testing.assert_array_equal(ours.dequantized("blk.3.attn_k.weight"), expected)


def test_not_a_gguf_file_is_refused(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGML" + bytes(60))
    with pytest.raises(ValueError, match="not a GGUF file") as refused:
        GGUFFile(bad)
    assert isinstance(refused.value, file_errors.NotGGUF) and refused.value.magic == b"GGML"
    assert refused.value.path == str(bad) and str(refused.value).startswith(f"{bad} is not a GGUF file")


@pytest.mark.models
@needs_smollm2
def test_missing_tensor_names_itself():
    g = GGUFFile(files.smollm2_gguf())
    with pytest.raises(KeyError, match="no tensor 'nope'"):
        g.raw("nope")
    with pytest.raises(ValueError, match="stored as Q4_1"):
        g.array("blk.0.attn_q.weight")


# -- files written here with gguf's GGUFWriter ---------------------------------------------------

# metadata of every GGUF value type (gguf's writer picks the type from the method)
METADATA = [
    ("add_uint8", "t.u8", 200), ("add_int8", "t.i8", -100), ("add_uint16", "t.u16", 60000),
    ("add_int16", "t.i16", -30000), ("add_uint32", "t.u32", 4_000_000_000), ("add_int32", "t.i32", -7),
    ("add_float32", "t.f32", 0.1), ("add_bool", "t.bool", True), ("add_uint64", "t.u64", 1 << 60),
    ("add_int64", "t.i64", -(1 << 60)), ("add_float64", "t.f64", 0.1), ("add_string", "t.str", "héllo ▁ 🦙"),
    ("add_array", "t.ints", [1, 2, 3]), ("add_array", "t.floats", [0.5, -1.25]),
    ("add_array", "t.bools", [True, False]), ("add_array", "t.strs", ["a", "", "ü"]),
]  # fmt: skip
# strings that cut a decoding badly: multi-byte characters, empty strings, 128 bytes and more
TOKENS = ["<unk>", "", "▁the", "é", "🦙🦙", "a" * 127, "", "ü" * 64, "x" * 300, "\x00", "<0xFF>", "末"]


def write_gguf(path: Path, tensors: dict, *, tokens=TOKENS, arch: str = "llama", extra=None) -> Path:
    """A GGUF file by gguf's GGUFWriter: ``tensors`` name -> (array, raw type or None)."""
    from gguf import GGUFWriter

    w = GGUFWriter(str(path), arch)
    for method, key, value in METADATA:
        getattr(w, method)(key, value)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([float(-i) for i in range(len(tokens))])
    w.add_token_types([1] * len(tokens))
    if extra is not None:
        extra(w)
    for name, (array, kind) in tensors.items():
        w.add_tensor(name, array, raw_dtype=kind)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def every_type(rng) -> dict:
    """A tensor of every type the products read (random valid blocks), a 1-D norm, a Q3_K and an IQ4_NL."""
    from gguf import GGMLQuantizationType as T

    tensors = {}
    for fmt in ALL:
        n_in = 512 if fmt.endswith("_K") else 96
        blocks = random_blocks(rng, fmt, 6, n_in)
        tensors[f"w.{fmt}"] = (blocks, getattr(T, fmt))
    tensors["norm"] = (rng.standard_normal(96).astype(np.float32), None)
    tensors["norm16"] = (rng.standard_normal(40).astype(np.float16), None)  # rows of 40: not blocks of 32
    tensors["w.Q3_K"] = (rng.integers(0, 256, (4, 110), dtype=np.uint8), T.Q3_K)  # one Q3_K block a row
    tensors["w.IQ4_NL"] = (rng.integers(0, 256, (4, 18), dtype=np.uint8), T.IQ4_NL)
    return tensors


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    rng = np.random.default_rng(31)
    tensors = every_type(rng)
    return write_gguf(tmp_path_factory.mktemp("gguf") / "every.gguf", tensors), tensors


def test_a_written_file_reads_as_gguf_reader_reads_it(written):
    from gguf import GGUFReader

    path, tensors = written
    ours, theirs = GGUFFile(path), GGUFReader(str(path))
    expected = {k: f.contents() for k, f in theirs.fields.items() if not k.startswith("GGUF.")}
    assert ours.metadata.keys() == expected.keys()
    for key, value in expected.items():
        assert ours.metadata[key] == value, key
        assert type(ours.metadata[key]) is type(value), key
    assert ours.metadata["tokenizer.ggml.tokens"] == TOKENS
    for _method, key, value in METADATA:
        assert ours.metadata[key] == (pytest.approx(value, rel=1e-7) if key == "t.f32" else value), key
    assert list(ours.tensors) == [t.name for t in theirs.tensors] == list(tensors)
    for t in theirs.tensors:
        info = ours.info(t.name)
        assert (info.type, info.shape, info.nbytes) == (t.tensor_type.name, tuple(reversed(t.shape.tolist())),
                                                        int(t.n_bytes)), t.name  # fmt: skip
        assert info.offset == int(t.data_offset)
        assert ours.raw(t.name).tobytes() == np.ascontiguousarray(t.data).tobytes(), t.name


@pytest.mark.parametrize("fmt", ALL)
def test_every_readable_type_gives_ggufs_values(written, fmt):
    path, tensors = written
    g = GGUFFile(path)
    name = f"w.{fmt}"
    expected = gguf_values(fmt, tensors[name][0])
    np.testing.assert_array_equal(g.float32(name), expected)
    assert g.float32(name).tobytes() == g.dequantized(name).tobytes() == expected.tobytes()
    w = g.matrix(name)
    assert w.shape == expected.T.shape and w.fmt == fmt and not w.parts[0].flags.writeable
    assert np.shares_memory(w.parts[0], g.raw(name))  # the map's bytes, not a copy
    assert w.values().tobytes() == np.ascontiguousarray(expected.T).tobytes()
    x = np.random.default_rng(0).standard_normal((2, w.n_in)).astype(np.float32)
    bound = w.n_in * np.finfo(np.float32).eps * (np.abs(x) @ np.abs(expected.T))
    assert np.all(np.abs((x @ w) - x.astype(np.float64) @ expected.T.astype(np.float64)) <= bound)


def test_float_tensors_widen_exactly_and_odd_rows_stay_arrays(written):
    path, tensors = written
    g = GGUFFile(path)
    norm = g.float32("norm")
    assert norm.tobytes() == tensors["norm"][0].tobytes() and not norm.flags.writeable  # the map, as stored
    widened = g.float32("norm16")
    assert widened.dtype == np.float32 and np.array_equal(widened, tensors["norm16"][0].astype(np.float32))
    assert g.info("norm16").type == "F16" and g.info("norm16").shape == (40,)
    with pytest.raises(ValueError, match="two dimensions"):
        g.matrix("norm")


@pytest.mark.parametrize(("name", "kind"), [("w.Q3_K", "Q3_K"), ("w.IQ4_NL", "IQ4_NL")])
def test_a_type_the_products_cannot_read_is_refused_by_name(written, name, kind):
    path, _ = written
    g = GGUFFile(path)  # the file opens: its metadata and its other tensors read
    assert g.unreadable() == {"w.Q3_K": "Q3_K", "w.IQ4_NL": "IQ4_NL"}
    assert g.info(name).type == kind and g.raw(name).shape[0] == 4
    for ask in (g.float32, g.matrix):
        with pytest.raises(file_errors.UnreadableTensorType) as refused:
            ask(name)
        e = refused.value
        assert (e.path, e.tensor, e.type_name, e.readable) == (str(path), name, kind, READABLE)
        assert str(e) == (f"{path}: tensor {name!r} is stored as {kind}, which attnlab cannot read exactly; "
                          "it reads F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K")


def test_a_262k_token_vocabulary_reads_whole(tmp_path):
    """Gemma 3's vocabulary size (the benchmark times it; GGUFReader takes tens of seconds on it)."""
    n = 262_144
    tokens = [f"▁tok{i}" if i % 5 else f"ü{i}" for i in range(n)]
    tokens[7] = "🦙" * 40  # 160 bytes: the strings are gathered before decoding
    path = write_gguf(tmp_path / "big.gguf", {"t": (np.ones((2, 32), np.float32), None)}, tokens=tokens)
    g = GGUFFile(path)
    assert g.metadata["tokenizer.ggml.tokens"] == tokens
    assert g.metadata["tokenizer.ggml.scores"][-1] == float(-(n - 1))
    assert len(g.metadata["tokenizer.ggml.token_type"]) == n
    assert g.float32("t").tolist() == [[1.0] * 32] * 2


@pytest.mark.parametrize("long", [False, True])
def test_strings_that_are_not_utf8_read_as_bytes_decode_them(tmp_path, long):
    """Bad bytes, and a character split over two strings (each string alone is not UTF-8): each string
    is decoded alone, U+FFFD for its bad bytes, whichever way the strings were gathered."""
    first = "x" * 200 if long else "ab"  # a string of 128 bytes or more: the strings are gathered first
    path = write_gguf(tmp_path / "ok.gguf", {}, tokens=[first, "Pq", "Rs", "Tu"])
    data = bytearray(path.read_bytes())
    for old, new in ((b"Pq", b"\xff\xfe"), (b"Rs", b"R\xc3"), (b"Tu", b"\xa9u")):
        at = data.index(old)
        data[at : at + 2] = new
    path.write_bytes(bytes(data))
    tokens = GGUFFile(path).metadata["tokenizer.ggml.tokens"]
    assert tokens == [first, "\ufffd\ufffd", "R\ufffd", "\ufffdu"]
    assert tokens[1:] == [b.decode("utf-8", errors="replace") for b in (b"\xff\xfe", b"R\xc3", b"\xa9u")]


# -- broken files --------------------------------------------------------------------------------


@pytest.fixture
def small(tmp_path):
    """A valid file with three F32 tensors: its bytes, and where each tensor's info fields are."""
    tensors = {name: (np.full((3, 32), i, np.float32), None) for i, name in enumerate(["a", "bb", "ccc"])}
    path = write_gguf(tmp_path / "small.gguf", tensors)
    return path, bytearray(path.read_bytes())


def info_at(data: bytes, name: str) -> int:
    """Where tensor ``name``'s info starts after its name: n_dims (u32), dims (u64 each), type, offset."""
    key = struct.pack("<Q", len(name)) + name.encode()
    return data.rindex(key) + len(key)


def refused(path: Path, data: bytes, error: type):
    path.write_bytes(bytes(data))
    with pytest.raises(error) as caught:
        GGUFFile(path)
    assert caught.value.path == str(path) and "\n" not in str(caught.value)
    return caught.value


@pytest.mark.parametrize("magic", [b"GGML", b"\x00\x00\x00\x00", b"PK\x03\x04"])
def test_a_wrong_magic_is_refused(small, magic):
    path, data = small
    data[:4] = magic
    e = refused(path, data, file_errors.NotGGUF)
    assert e.magic == magic and str(e) == f"{path} is not a GGUF file: it starts with {magic!r}, not b'GGUF'"


@pytest.mark.parametrize("size", [0, 3, 10, 23, 24, 40, 300])
def test_a_file_cut_in_its_header_is_refused(small, size):
    path, data = small
    e = refused(path, data[:size], file_errors.Truncated)
    assert e.size == size and e.needed > size and e.tensor is None
    assert str(e).startswith(f"{path} is cut short: its header runs to byte {e.needed:,}, but the file has ")


def test_a_file_cut_in_its_tensors_is_refused(small):
    path, data = small
    g = GGUFFile(path)
    last = g.info("ccc")
    g.close()
    e = refused(path, data[: last.offset + 10], file_errors.Truncated)
    assert (e.tensor, e.needed, e.size) == ("ccc", last.offset + last.nbytes, last.offset + 10)
    assert str(e) == (f"{path} is cut short: tensor 'ccc' runs to byte {e.needed:,}, but the file has "
                      f"{e.size:,} bytes; download it again")


def test_a_tensor_whose_type_and_shape_need_more_bytes_than_stored_is_refused(small):
    path, data = small
    at = info_at(data, "a")
    struct.pack_into("<Q", data, at + 4 + 8, 5)  # "a" claims 5 rows of 32 float32: 640 bytes, 384 stored
    e = refused(path, data, file_errors.TensorBytesMismatch)
    assert (e.tensor, e.type_name, e.shape, e.needed, e.stored) == ("a", "F32", (5, 32), 640, 384)
    assert str(e) == (f"{path}: tensor 'a' is F32 of shape (5, 32), which takes 640 bytes, "
                      "but the file holds 384 bytes for it")


def test_a_tensor_whose_rows_are_not_whole_blocks_is_refused(small):
    from gguf import GGMLQuantizationType as T

    path, data = small
    at = info_at(data, "bb")
    struct.pack_into("<Q", data, at + 4, 40)  # rows of 40 weights...
    struct.pack_into("<I", data, at + 4 + 16, int(T.Q4_K))  # ...in Q4_K, 256 weights a block
    e = refused(path, data, file_errors.TensorBytesMismatch)
    assert (e.tensor, e.type_name, e.shape, e.needed, e.block_weights) == ("bb", "Q4_K", (3, 40), None, 256)
    assert "whole blocks of 256 weights and its rows have 40" in str(e)


@pytest.mark.parametrize("number", [4, 5, 31, 99, 2**32 - 1])
def test_an_unknown_tensor_type_is_refused_by_its_number(small, number):
    path, data = small
    struct.pack_into("<I", data, info_at(data, "bb") + 4 + 16, number)
    e = refused(path, data, file_errors.UnknownTensorType)
    assert (e.tensor, e.number) == ("bb", number)
    assert str(e) == f"{path}: tensor 'bb' has tensor type number {number}, which is not a GGUF type"


@pytest.mark.parametrize("version", [1, 4, 3 << 24])
def test_an_unsupported_version_is_refused(small, version):
    path, data = small
    struct.pack_into("<I", data, 4, version)
    e = refused(path, data, file_errors.UnsupportedVersion)
    assert e.version == version and e.supported == (2, 3)
    assert str(e) == f"{path} is GGUF version {version}; attnlab reads versions 2, 3"


def test_an_unknown_metadata_value_type_is_refused(small):
    path, data = small
    key = b"t.u16"
    at = data.index(struct.pack("<Q", len(key)) + key) + 8 + len(key)
    struct.pack_into("<I", data, at, 13)
    e = refused(path, data, file_errors.UnknownValueType)
    assert (e.key, e.number) == ("t.u16", 13)


def test_an_alignment_that_is_not_a_power_of_two_is_refused(tmp_path):
    path = write_gguf(tmp_path / "a.gguf", {}, extra=lambda w: w.add_uint32("general.alignment", 48))
    with pytest.raises(file_errors.BadAlignment) as caught:
        GGUFFile(path)
    assert caught.value.alignment == 48 and "not a power of two" in str(caught.value)


def test_a_garbage_count_is_refused_without_reading_it(small):
    """A string array claiming 2^60 strings stops at the file's end, allocating nothing for them."""
    path, data = small
    key = b"tokenizer.ggml.tokens"
    at = data.index(struct.pack("<Q", len(key)) + key) + 8 + len(key) + 4 + 4
    struct.pack_into("<Q", data, at, 1 << 60)
    e = refused(path, data, file_errors.Truncated)
    assert e.needed > len(data) and e.tensor is None
