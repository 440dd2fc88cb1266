"""Our memory-mapped safetensors reader (models/safetensors_file.py) against the safetensors library."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from attnlab.models import file_errors
from attnlab.models.safetensors_file import WIDENED, SafetensorsFile


def bf16_bits(values: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16's 16 bits (the top half: truncated; any 16 bits are a bfloat16)."""
    return (np.ascontiguousarray(values, np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def write(path: Path, tensors: dict[str, tuple[str, np.ndarray]], metadata=None, *, header=None) -> Path:
    """A safetensors file written by hand from the format's definition: name -> (dtype, array)."""
    entries, data, at = {}, b"", 0
    for name, (dtype, array) in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        entries[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [at, at + len(raw)]}
        data, at = data + raw, at + len(raw)
    if metadata is not None:
        entries["__metadata__"] = metadata
    text = json.dumps(entries if header is None else header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return path


@pytest.fixture
def saved(tmp_path, rng):
    """A file saved by safetensors.numpy: float32, float16, int64, and an odd-shaped float16."""
    from safetensors.numpy import save_file

    tensors = {
        "w32": rng.standard_normal((5, 7)).astype(np.float32),
        "w16": rng.standard_normal((3, 4, 2)).astype(np.float16),
        "ids": np.arange(6, dtype=np.int64).reshape(2, 3),
        "scalar": np.array(2.5, np.float16),
    }
    path = tmp_path / "m.safetensors"
    save_file(tensors, str(path), metadata={"format": "np"})
    return path, tensors


@pytest.fixture
def rng():
    return np.random.default_rng(5)


def test_float32_and_float16_equal_the_librarys_exactly(saved):
    from safetensors.numpy import load_file

    path, tensors = saved
    ours, theirs = SafetensorsFile(path), load_file(str(path))
    assert set(ours.tensors) == set(theirs) == {"w32", "w16", "ids", "scalar"}
    assert ours.metadata == {"format": "np"}
    for name, value in theirs.items():
        assert ours.array(name).dtype == value.dtype and ours.array(name).shape == value.shape
        assert ours.array(name).tobytes() == value.tobytes(), name
    w32 = ours.float32("w32")
    assert w32.dtype == np.float32 and not w32.flags.writeable and w32.tobytes() == tensors["w32"].tobytes()
    assert np.shares_memory(w32, ours._buffer)  # a view of the map: nothing copied
    w16 = ours.float32("w16")
    assert w16.dtype == np.float32 and w16.shape == (3, 4, 2)
    assert np.array_equal(w16, tensors["w16"].astype(np.float64))  # widened exactly
    assert ours.float32("scalar").shape == () and ours.float32("scalar") == 2.5


def test_bfloat16_is_widened_exactly(tmp_path, rng):
    values = rng.standard_normal((4, 6)).astype(np.float32)
    bits = bf16_bits(values)
    bits[0, :3] = [0x0001, 0x8000, 0x7F7F]  # a subnormal, -0.0, the largest finite
    path = write(tmp_path / "b.safetensors", {"w": ("BF16", bits)})
    got = SafetensorsFile(path).float32("w")
    expected = (bits.astype(np.uint32) << 16).view(np.float32)
    assert got.dtype == np.float32 and got.tobytes() == expected.tobytes()
    assert got[0, 1] == 0.0 and np.signbit(got[0, 1]) and got[0, 2] == np.float32(3.3895314e38)


def test_bfloat16_equals_torchs_reading(tmp_path, rng):
    torch = pytest.importorskip("torch", reason="torch is the oracle for bfloat16")
    from safetensors.torch import save_file

    t = torch.from_numpy(rng.standard_normal((8, 3)).astype(np.float32)).to(torch.bfloat16)
    path = tmp_path / "t.safetensors"
    save_file({"w": t, "h": t.to(torch.float16)}, str(path))
    ours = SafetensorsFile(path)
    assert ours.info("w").dtype == "BF16" and ours.info("h").dtype == "F16"
    assert ours.float32("w").tobytes() == t.float().numpy().tobytes()
    assert ours.float32("h").tobytes() == t.to(torch.float16).float().numpy().tobytes()


ROUNDED = [("I64", np.arange(3, dtype=np.int64)), ("F64", np.array([0.1, 0.2])),
           ("F8_E4M3", np.zeros(4, np.uint8))]  # fmt: skip


@pytest.mark.parametrize(("dtype", "array"), ROUNDED)
def test_a_dtype_float32_would_round_is_refused_by_name(tmp_path, dtype, array):
    path = write(tmp_path / "i.safetensors", {"x": (dtype, array), "ok": ("F32", np.ones(2, np.float32))})
    f = SafetensorsFile(path)  # the file opens: its other tensors read
    assert f.float32("ok").tolist() == [1.0, 1.0]
    with pytest.raises(file_errors.UnreadableTensorType) as refused:
        f.float32("x")
    assert (refused.value.tensor, refused.value.type_name, refused.value.readable) == ("x", dtype, WIDENED)
    assert str(refused.value) == (f"{path}: tensor 'x' is stored as {dtype}, which attnlab cannot read "
                                  "exactly; it reads F32, F16, BF16")
    if dtype != "F8_E4M3":
        assert f.array("x").tolist() == array.tolist()  # as stored, still


def refused(path: Path, error: type):
    with pytest.raises(error) as caught:
        SafetensorsFile(path)
    assert caught.value.path == str(path) and "\n" not in str(caught.value)
    return caught.value


@pytest.mark.parametrize("keep", [0, 5, 8, 20])
def test_a_file_cut_in_its_header_is_refused(saved, keep):
    path, _ = saved
    path.write_bytes(path.read_bytes()[:keep])
    e = refused(path, file_errors.Truncated)
    assert e.tensor is None and e.size == keep and e.needed > keep
    assert str(e).startswith(f"{path} is cut short: its header runs to byte ")


def test_a_file_cut_in_its_tensors_is_refused(tmp_path):
    path = write(tmp_path / "c.safetensors", {"a": ("F32", np.ones(4, np.float32)),
                                              "b": ("F32", np.ones(10, np.float32))})  # fmt: skip
    data = path.read_bytes()
    path.write_bytes(data[:-8])
    e = refused(path, file_errors.Truncated)
    assert (e.tensor, e.needed, e.size) == ("b", len(data), len(data) - 8)
    assert str(e) == (f"{path} is cut short: tensor 'b' runs to byte {len(data):,}, but the file has "
                      f"{len(data) - 8:,} bytes; download it again")


@pytest.mark.parametrize(("header", "problem"), [
    (b"not json", "not_json"), (b"\xff\xfe", "not_json"), (b"[1, 2]", "not_object"),
    (b'{"__metadata__": 3}', "not_object"),
])  # fmt: skip
def test_a_header_that_is_not_a_json_object_is_refused(tmp_path, header, problem):
    path = tmp_path / "h.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    e = refused(path, file_errors.BadHeader)
    assert e.problem == problem and str(e).startswith(f"{path} is not a safetensors file: its header ")


@pytest.mark.parametrize("entry", [
    {"dtype": "F32", "shape": [2]}, {"dtype": 5, "shape": [2], "data_offsets": [0, 8]},
    {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]},
    {"dtype": "F32", "shape": [2], "data_offsets": [0]},
    {"dtype": "F32", "shape": [2.0], "data_offsets": [0, 8]}, [1, 2],
])  # fmt: skip
def test_an_entry_without_dtype_shape_and_offsets_is_refused(tmp_path, entry):
    path = write(tmp_path / "e.safetensors", {}, header={"w": entry})
    e = refused(path, file_errors.BadHeader)
    assert (e.problem, e.tensor) == ("bad_entry", "w") and "tensor 'w'" in str(e)


def test_a_tensor_whose_dtype_and_shape_need_other_bytes_is_refused(tmp_path):
    header = {"w": {"dtype": "F16", "shape": [3, 5], "data_offsets": [0, 24]}}
    path = write(tmp_path / "m.safetensors", {}, header=header)
    path.write_bytes(path.read_bytes() + bytes(24))
    e = refused(path, file_errors.TensorBytesMismatch)
    assert (e.tensor, e.type_name, e.shape, e.needed, e.stored) == ("w", "F16", (3, 5), 30, 24)
    assert str(e) == (f"{path}: tensor 'w' is F16 of shape (3, 5), which takes 30 bytes, but the file "
                      "holds 24 bytes for it")


def test_a_byte_range_that_runs_backwards_is_refused(tmp_path):
    header = {"w": {"dtype": "F32", "shape": [0], "data_offsets": [8, 4]}}
    path = write(tmp_path / "r.safetensors", {}, header=header)
    path.write_bytes(path.read_bytes() + bytes(8))
    e = refused(path, file_errors.TensorOutside)
    assert (e.tensor, e.begin, e.end, e.size) == ("w", 8, 4, 8)


@pytest.mark.parametrize("dtype", WIDENED)
def test_a_matrix_multiplies_on_the_files_numbers(tmp_path, rng, dtype):
    """A Linear.weight (n_out, n_in) is W (n_in, n_out) over the map: values exact, products on them."""
    weight = rng.standard_normal((48, 64)).astype(np.float32)
    stored = {"F32": weight, "F16": weight.astype(np.float16), "BF16": bf16_bits(weight)}[dtype]
    path = write(tmp_path / "w.safetensors", {"w": (dtype, stored), "odd": (dtype, stored[:, :40])})
    f = SafetensorsFile(path)
    w = f.matrix("w")
    assert w.shape == (64, 48) and w.fmt == dtype and np.shares_memory(w.parts[0], f._buffer)
    values = f.float32("w")
    assert w.values().tobytes() == np.ascontiguousarray(values.T).tobytes()
    x = rng.standard_normal((3, 64)).astype(np.float32)
    x64, v64 = x.astype(np.float64), values.T.astype(np.float64)
    bound = 64 * np.finfo(np.float32).eps * (np.abs(x64) @ np.abs(v64))
    assert np.all(np.abs(x @ w - x64 @ v64) <= bound)
    odd = f.matrix("odd")  # rows of 40: not blocks of 32, so float32 values
    assert isinstance(odd, np.ndarray) and odd.shape == (40, 48)
    assert odd.tobytes() == np.ascontiguousarray(f.float32("odd").T).tobytes()
