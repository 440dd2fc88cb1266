"""Float32 weights built once from a model file, kept in a per-user cache and memory-mapped after.

Where: ``$ATTNLAB_CACHE_DIR`` when set (tests point it at a temporary folder),
else ``platformdirs.user_cache_dir("attnlab")`` (``~/.cache/attnlab`` on Linux).

What: for a source file and a ``kind`` (what was built from it, e.g.
``"smollm2-float32"``), ``<kind>-<key>.bin`` holds the arrays one after
another (float32, C order, each at a 64-byte boundary) and ``<kind>-<key>.json``
says where each one is, with the CRC-32 and length of the ``.bin`` and, for
each array, a BLAKE2b digest of its name, shape and bytes keyed by the cache key.

The key names the source without reading all of it: a BLAKE2b hash of the cache
format, attnlab's version, the kind, the source's size and modification time,
its first MiB, 16 chunks of 64 KiB spread evenly over the rest, and its last
64 KiB (~2 MiB read; a reinstalled or changed model file gets a new key, and
the old files are left for the user to clear). A rewrite in place that keeps
size and mtime and changes only unsampled bytes would go unnoticed: accepted
for files that pip installs, and never rewrites in place.

Trust: nothing in the folder is trusted. Before the first map in a process the
manifest is checked against its schema (types, and the arrays laid end to
end as written), the names and shapes against ``expect`` (the model file's own tensor
table, as the caller derives it), the ``.bin``'s length and CRC-32, and every
array's digest: a swapped name, an edited shape or offset, a missing entry or
changed bytes all fail, since each digest binds a name and shape to its bytes.
Either file being a symbolic link fails too. Anything that fails, the pair is
rebuilt. Later maps in the same process of the same files (same device,
inode, size and mtimes, written more than 3 s before) skip the digests.
Files are written under temporary names and renamed into place (data first, manifest last), so a crash or a
second process leaves no half-written pair behind a valid name. A cache folder
that cannot be written: the arrays are built in memory instead, with a
:class:`CacheWarning`.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import tempfile
import threading
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np

FORMAT = 2  # bump when the layout of the files changes (2: a keyed digest for each array)
ENV = "ATTNLAB_CACHE_DIR"
_ALIGN = 64
_CHUNK = 1 << 16
_DIGEST = 16  # bytes of each array's BLAKE2b digest
_verified: set[tuple] = set()  # (path, device, inode, size, mtime) of pairs checked in this process
_verified_lock = threading.Lock()
_SETTLED_NS = 3_000_000_000  # files this much older than now are not being written


class CacheWarning(UserWarning):
    """The weight cache could not be used; the weights were built in memory."""


def cache_dir() -> Path:
    """The cache folder: ``$ATTNLAB_CACHE_DIR``, else the user's cache folder for attnlab."""
    where = os.environ.get(ENV)
    if where:
        return Path(where)
    try:
        from platformdirs import user_cache_dir
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "attnlab"
    return Path(user_cache_dir("attnlab", appauthor=False))


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("attnlab")
    except Exception:  # noqa: BLE001 - running from a source tree without metadata
        return "unknown"


def source_key(path: Path, kind: str) -> str:
    """The cache key of ``path`` (see the module docstring): 32 hex digits."""
    stat = path.stat()
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{FORMAT}\0{_version()}\0{kind}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    with open(path, "rb") as f:
        h.update(f.read(16 * _CHUNK))
        for i in range(16):
            f.seek(stat.st_size * i // 16)
            h.update(f.read(_CHUNK))
        f.seek(max(0, stat.st_size - _CHUNK))
        h.update(f.read(_CHUNK))
    return h.hexdigest()


class Cached:
    """The arrays (name -> read-only float32 array) and how they came: "mapped", "built", "rebuilt" or
    "memory" (built in memory: the cache folder could not be written)."""

    def __init__(self, arrays: dict[str, np.ndarray], how: str, where: Path | None) -> None:
        self.arrays, self.how, self.where = arrays, how, where


def cached_arrays(
    source: Path | str,
    kind: str,
    build: Callable[[], Iterable[tuple[str, np.ndarray]]],
    *,
    expect: Mapping[str, tuple[int, ...]] | None = None,
    directory: Path | str | None = None,
) -> Cached:
    """Map the arrays that ``build()`` makes from ``source``, building and storing them first if needed.

    ``build`` yields ``(name, array)`` pairs (any float dtype; stored as float32),
    one at a time, so a build never holds more than one array beside the file.
    ``expect`` (name -> shape), when given, is every array the cache must hold:
    a cache with other names or shapes is rebuilt, and so is a build that yields them.
    """
    source = Path(source)
    folder = Path(directory) if directory is not None else cache_dir()
    key = source_key(source, kind)
    data, manifest = folder / f"{kind}-{key}.bin", folder / f"{kind}-{key}.json"
    had = data.exists() or manifest.exists()
    if had:
        arrays = _mapped(data, manifest, key, expect)
        if arrays is not None:
            return Cached(arrays, "mapped", data)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write(folder, data, manifest, key, _checked_build(build(), expect))
    except OSError as error:
        warnings.warn(
            f"attnlab: cannot write the weight cache in {folder} ({error}); building {kind} in memory "
            f"instead (each start will take as long). Set {ENV} to a writable folder to keep them.",
            CacheWarning,
            stacklevel=2,
        )
        arrays = {}
        for name, a in _checked_build(build(), expect):
            arrays[name] = _read_only(np.ascontiguousarray(a, dtype=np.float32))
        return Cached(arrays, "memory", None)
    arrays = _mapped(data, manifest, key, expect)
    if arrays is None:  # pragma: no cover - written and checked just now
        raise OSError(f"the weight cache {data} did not read back as written")
    return Cached(arrays, "rebuilt" if had else "built", data)


def _write(folder: Path, data: Path, manifest: Path, key: str, pairs) -> None:
    entries, crc, at = [], 0, 0
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=data.name, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            for name, a in pairs:
                a = np.ascontiguousarray(a, dtype=np.float32)
                pad = -at % _ALIGN
                if pad:
                    crc = zlib.crc32(bytes(pad), crc)
                    f.write(bytes(pad))
                    at += pad
                view = memoryview(a).cast("B")
                digest = _digest(key, name, a.shape, view)
                entries.append({"name": name, "shape": list(a.shape), "offset": at, "blake2b": digest})
                crc = zlib.crc32(view, crc)
                f.write(view)
                at += a.nbytes
        os.replace(tmp, data)
        body = {"format": FORMAT, "key": key, "nbytes": at, "crc32": crc, "arrays": entries}
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=manifest.name, suffix=".part")
        with os.fdopen(fd, "w") as f:
            json.dump(body, f)
        os.replace(tmp, manifest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _digest(key: str, name: str, shape, data) -> str:
    """BLAKE2b of an array's name, shape and bytes, keyed by the cache key: binds each name to its bytes."""
    h = hashlib.blake2b(digest_size=_DIGEST, key=bytes.fromhex(key))
    h.update(json.dumps([name, [int(n) for n in shape]]).encode() + b"\0")
    h.update(data)
    return h.hexdigest()


def _checked_build(pairs, expect):
    """``pairs`` as they come, refusing a name or shape that ``expect`` does not list (a bug, not a cache)."""
    seen = set()
    for name, a in pairs:
        if expect is not None and tuple(expect.get(name, ())) != tuple(np.shape(a)):
            want = expect.get(name)
            raise ValueError(f"the build made {name!r} of shape {np.shape(a)}; the model file says {want}")
        seen.add(name)
        yield name, a
    if expect is not None and seen != set(expect):
        raise ValueError(f"the build did not make {sorted(set(expect) - seen)}")


def _is_count(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _entries(body, key: str, expect) -> list | None:
    """The manifest's entries when it has the schema this format writes, else None."""
    if not isinstance(body, dict) or set(body) != {"format", "key", "nbytes", "crc32", "arrays"}:
        return None
    if body["format"] != FORMAT or body["key"] != key or not _is_count(body["crc32"]):
        return None
    nbytes, entries = body["nbytes"], body["arrays"]
    if not _is_count(nbytes) or nbytes == 0 or not isinstance(entries, list):
        return None
    end, names = 0, set()
    for e in entries:
        if not isinstance(e, dict) or set(e) != {"name", "shape", "offset", "blake2b"}:
            return None
        name, shape, offset, digest = e["name"], e["shape"], e["offset"], e["blake2b"]
        if not isinstance(name, str) or name in names or not isinstance(shape, list):
            return None
        # the arrays lie one after another, each at the next 64-byte boundary, as _write lays them
        if not all(_is_count(n) for n in shape) or not _is_count(offset) or offset != end + (-end % _ALIGN):
            return None
        if not isinstance(digest, str) or len(digest) != 2 * _DIGEST:
            return None
        end = offset + 4 * int(np.prod(shape, dtype=np.int64))
        if end > nbytes:
            return None
        names.add(name)
    if end != nbytes:
        return None
    if expect is not None and {e["name"]: tuple(e["shape"]) for e in entries} != {
        n: tuple(s) for n, s in expect.items()
    }:
        return None
    return entries


def _mapped(data: Path, manifest: Path, key: str, expect=None) -> dict[str, np.ndarray] | None:
    """The arrays of a checked pair of files, or None when anything is missing, stale, corrupt or linked."""
    try:
        if data.is_symlink() or manifest.is_symlink():
            return None
        with open(manifest, "rb", opener=_no_follow) as f:
            body = json.loads(f.read().decode("utf-8"))
        entries = _entries(body, key, expect)
        if entries is None:
            return None
        with open(data, "rb", opener=_no_follow) as f:
            stat = os.fstat(f.fileno())
            if stat.st_size != body["nbytes"]:
                return None
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        written = manifest.stat().st_mtime_ns
        seen = (str(data), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, written)
        with _verified_lock:
            known = seen in _verified
        if not known:
            if zlib.crc32(mapped) != body["crc32"]:
                return None
            view = memoryview(mapped)
            for e in entries:
                n = 4 * int(np.prod(e["shape"], dtype=np.int64))
                if _digest(key, e["name"], e["shape"], view[e["offset"] : e["offset"] + n]) != e["blake2b"]:
                    return None
            view.release()
        arrays = {}
        for e in entries:
            # an array whose base is the map itself, so that views of it (side by side) share one base
            arrays[e["name"]] = np.ndarray(tuple(e["shape"]), np.float32, buffer=mapped, offset=e["offset"])
        # Remembered only once both files are older than the file system's timestamp granularity can
        # blur (as git does for racy files): a rewrite within the same tick would keep the same mtime.
        if max(seen[4], seen[5]) < time.time_ns() - _SETTLED_NS:
            with _verified_lock:
                _verified.add(seen)
        return arrays
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):
        return None


def _no_follow(path, flags):
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))


def _read_only(a: np.ndarray) -> np.ndarray:
    a = a.view()  # the caller's array stays as it was
    a.flags.writeable = False
    return a
