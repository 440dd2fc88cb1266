"""The float32 weight cache (models/weight_cache.py): built once, mapped after, never trusted when off.

Every test gives the cache a folder under ``tmp_path`` (the session's own folder
is set by tests/conftest.py in any case: never the user's cache).
"""

from __future__ import annotations

import json
import mmap
import os
import zlib

import numpy as np
import pytest

from attnlab.models import weight_cache
from attnlab.models.weight_cache import CacheWarning, cached_arrays

KIND = "test-float32"


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(np.arange(300_000, dtype=np.uint8).tobytes())
    return path


class Builder:
    """A build function that counts its calls; its arrays depend on the source's first byte."""

    def __init__(self, source) -> None:
        self.source, self.calls = source, 0

    def __call__(self):
        self.calls += 1
        first = self.source.read_bytes()[0]
        yield "a", np.arange(12, dtype=np.float64).reshape(3, 4) + first  # stored as float32
        yield "b", np.full((5,), 0.5, np.float32)
        yield "c", np.ones((7, 3), np.float32).T  # any layout: stored C-ordered


def expected(first: int = 0) -> dict:
    return {
        "a": np.arange(12, dtype=np.float32).reshape(3, 4) + first,
        "b": np.full((5,), 0.5, np.float32),
        "c": np.ones((3, 7), np.float32),
    }


def check(arrays: dict, first: int = 0) -> None:
    want = expected(first)
    assert arrays.keys() == want.keys()
    for name, a in want.items():
        got = arrays[name]
        assert got.dtype == np.float32 and got.flags.c_contiguous and not got.flags.writeable
        np.testing.assert_array_equal(got, a)


def test_first_run_builds_second_maps(tmp_path, source):
    build = Builder(source)
    first = cached_arrays(source, KIND, build, directory=tmp_path / "cache")
    assert (first.how, build.calls) == ("built", 1)
    check(first.arrays)
    second = cached_arrays(source, KIND, build, directory=tmp_path / "cache")
    assert (second.how, build.calls) == ("mapped", 1)  # not built again
    check(second.arrays)
    assert second.where == first.where and second.where.parent == tmp_path / "cache"
    assert isinstance(second.arrays["a"].base, mmap.mmap)  # a view of the file, not a copy


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "garbage manifest", "wrong crc", "no data"])
def test_a_corrupt_cache_is_rebuilt(tmp_path, source, damage):
    folder = tmp_path / "cache"
    build = Builder(source)
    data = cached_arrays(source, KIND, build, directory=folder).where
    manifest = data.with_suffix(".json")
    if damage == "flip a byte":
        raw = bytearray(data.read_bytes())
        raw[5] ^= 0x40
        data.write_bytes(bytes(raw))
    elif damage == "truncate":
        data.write_bytes(data.read_bytes()[:-4])
    elif damage == "garbage manifest":
        manifest.write_text("{not json")
    elif damage == "wrong crc":
        body = json.loads(manifest.read_text())
        body["crc32"] ^= 1
        manifest.write_text(json.dumps(body))
    else:
        data.unlink()
    again = cached_arrays(source, KIND, build, directory=folder)
    assert (again.how, build.calls) == ("rebuilt", 2)
    check(again.arrays)
    assert cached_arrays(source, KIND, build, directory=folder).how == "mapped"  # and sound again


def test_a_changed_source_gets_a_new_key(tmp_path, source):
    folder = tmp_path / "cache"
    build = Builder(source)
    old = cached_arrays(source, KIND, build, directory=folder)
    before = source.stat()
    raw = bytearray(source.read_bytes())
    raw[0] = 9
    source.write_bytes(bytes(raw))
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size and time: the bytes tell
    new = cached_arrays(source, KIND, build, directory=folder)
    assert new.how == "built" and new.where != old.where and build.calls == 2
    check(new.arrays, first=9)


def test_the_key_covers_version_kind_size_and_time(tmp_path, source, monkeypatch):
    key = weight_cache.source_key(source, KIND)
    assert key == weight_cache.source_key(source, KIND) and len(key) == 32
    assert weight_cache.source_key(source, "other") != key
    os.utime(source, ns=(10**18, 10**18))
    assert weight_cache.source_key(source, KIND) != key
    timed = weight_cache.source_key(source, KIND)
    monkeypatch.setattr(weight_cache, "_version", lambda: "9.9.9")
    assert weight_cache.source_key(source, KIND) != timed


def test_an_unwritable_cache_builds_in_memory_with_a_message(tmp_path, source):
    # A folder that cannot be made (its parent is a file): unwritable even for root, who
    # may write into a read-only directory.
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    build = Builder(source)
    with pytest.warns(CacheWarning, match="cannot write the weight cache .* building test-float32 in memory"):
        got = cached_arrays(source, KIND, build, directory=blocker / "cache")
    assert (got.how, got.where) == ("memory", None)
    check(got.arrays)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_cache_folder_builds_in_memory(tmp_path, source):
    folder = tmp_path / "cache"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.warns(CacheWarning):
            got = cached_arrays(source, KIND, Builder(source), directory=folder)
    finally:
        folder.chmod(0o755)
    assert got.how == "memory"
    check(got.arrays)


def test_the_folder_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(weight_cache.ENV, str(tmp_path / "elsewhere"))
    assert weight_cache.cache_dir() == tmp_path / "elsewhere"
    monkeypatch.delenv(weight_cache.ENV)
    assert weight_cache.cache_dir().name == "attnlab"  # the user's cache folder, by platformdirs


def _body(manifest):
    return json.loads(manifest.read_text())


@pytest.mark.parametrize(
    "edit",
    ["swap two names", "edit a shape", "drop an entry", "null", "one", "a list", "move an offset", "extra"],
)
def test_an_edited_manifest_is_rebuilt_never_trusted(tmp_path, source, edit):
    # Before: swapped names loaded as "mapped" with each other's values; an edited shape or a missing
    # entry raised KeyError; a manifest of null, 1 or a list raised AttributeError.
    folder = tmp_path / "cache"
    build = Builder(source)
    manifest = cached_arrays(source, KIND, build, directory=folder).where.with_suffix(".json")
    body = _body(manifest)
    entries = body["arrays"]
    if edit == "swap two names":
        entries[0]["name"], entries[1]["name"] = entries[1]["name"], entries[0]["name"]
    elif edit == "edit a shape":
        entries[0]["shape"] = [4, 3]
    elif edit == "drop an entry":
        del entries[1]
    elif edit == "move an offset":
        entries[1]["offset"] += 64
    elif edit == "extra":
        body["trusted"] = True
    if edit in ("null", "one", "a list"):
        manifest.write_text({"null": "null", "one": "1", "a list": "[1, 2]"}[edit])
    else:
        manifest.write_text(json.dumps(body))
    again = cached_arrays(source, KIND, build, directory=folder)
    assert (again.how, build.calls) == ("rebuilt", 2)
    check(again.arrays)


def test_swapped_arrays_of_one_shape_are_caught_by_their_digests(tmp_path, source):
    # Two arrays of the same shape (like two layers' w_q): swapping their names keeps every size,
    # offset and CRC right; only the digest that binds each name to its bytes tells.
    def same_shapes():
        yield "first", np.zeros((4, 4), np.float32)
        yield "second", np.ones((4, 4), np.float32)

    folder = tmp_path / "cache"
    manifest = cached_arrays(source, KIND, same_shapes, directory=folder).where.with_suffix(".json")
    body = _body(manifest)
    a, b = body["arrays"]
    a["name"], b["name"] = b["name"], a["name"]
    manifest.write_text(json.dumps(body))
    again = cached_arrays(source, KIND, same_shapes, directory=folder)
    assert again.how == "rebuilt"
    assert again.arrays["first"].max() == 0.0 and again.arrays["second"].min() == 1.0


def test_names_and_shapes_are_checked_against_the_expected_table(tmp_path, source):
    folder = tmp_path / "cache"
    build = Builder(source)
    table = {"a": (3, 4), "b": (5,), "c": (3, 7)}
    assert cached_arrays(source, KIND, build, expect=table, directory=folder).how == "built"
    assert cached_arrays(source, KIND, build, expect=table, directory=folder).how == "mapped"
    # a table that says otherwise (the model file changed what it holds): rebuilt, and the build
    # that cannot make it is refused rather than stored
    with pytest.raises(ValueError, match="'a' of shape \\(3, 4\\); the model file says \\(4, 3\\)"):
        cached_arrays(source, KIND, build, expect={**table, "a": (4, 3)}, directory=folder)
    with pytest.raises(ValueError, match="did not make \\['d'\\]"):
        cached_arrays(source, KIND, build, expect={**table, "d": (1,)}, directory=folder)


@pytest.mark.parametrize("which", ["bin", "json"])
def test_a_symlinked_cache_file_is_refused_and_rebuilt(tmp_path, source, which):
    # Before: a .bin linked to another file of the same size and CRC was mapped as the weights.
    folder = tmp_path / "cache"
    build = Builder(source)
    data = cached_arrays(source, KIND, build, directory=folder).where
    target = data if which == "bin" else data.with_suffix(".json")
    elsewhere = tmp_path / f"elsewhere.{which}"
    elsewhere.write_bytes(target.read_bytes())  # the same bytes: size and CRC match
    target.unlink()
    target.symlink_to(elsewhere)
    again = cached_arrays(source, KIND, build, directory=folder)
    assert (again.how, build.calls) == ("rebuilt", 2)
    check(again.arrays)
    assert not target.is_symlink() and elsewhere.read_bytes()  # replaced by a real file; the other kept


def test_changed_bytes_with_a_matching_crc_are_caught(tmp_path, source):
    # Only the digests can tell: the manifest's CRC is updated to match the new bytes.
    folder = tmp_path / "cache"
    build = Builder(source)
    data = cached_arrays(source, KIND, build, directory=folder).where
    manifest = data.with_suffix(".json")
    raw = bytearray(data.read_bytes())
    raw[0] ^= 0x01
    data.write_bytes(bytes(raw))
    body = _body(manifest)
    body["crc32"] = zlib.crc32(bytes(raw))
    manifest.write_text(json.dumps(body))
    again = cached_arrays(source, KIND, build, directory=folder)
    assert (again.how, build.calls) == ("rebuilt", 2)
    check(again.arrays)


@pytest.mark.models
def test_smollm2s_cache_with_two_tensor_names_swapped_is_rebuilt(tmp_path, smollm2):
    # Before: swapping two same-shape tensors' names in the manifest loaded as "mapped" and silently
    # changed SmolLM2's top token for "hi". Now the digests refuse it; the rebuilt weights give the
    # same logits as the first build.
    from attnlab.models import files, load
    from attnlab.models.families import gguf_weights as sw
    from attnlab.models.gguf_file import GGUFFile

    folder = tmp_path / "cache"
    model = load.smollm2(weights="float32", cache_dir=folder)
    want = model.logits(model.encode("hi"))[-1]
    (manifest,) = folder.glob(f"{sw.CACHE_KIND}-*.json")
    body = json.loads(manifest.read_text())
    by_name = {e["name"]: e for e in body["arrays"]}
    a, b = by_name["blk.3.ffn_down"], by_name["blk.4.ffn_down"]
    a["name"], b["name"] = b["name"], a["name"]
    manifest.write_text(json.dumps(body))
    g = GGUFFile(files.smollm2_gguf())
    _, how = sw.float32_weights(g, model.arch, cache_dir=folder)
    assert how == "rebuilt"
    reloaded = load.smollm2(weights="float32", cache_dir=folder)
    np.testing.assert_array_equal(reloaded.logits(reloaded.encode("hi"))[-1], want)
