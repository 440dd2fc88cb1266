"""The float32 weight cache (models/weight_cache.py): built once, mapped after, never trusted when off.

Every test gives the cache a folder under ``tmp_path`` (the session's own folder
is set by tests/conftest.py in any case: never the user's cache).
"""

from __future__ import annotations

import json
import mmap
import os

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
