"""Float32 weights built once from a model file, kept in a per-user cache and memory-mapped after.

Where: ``$ATTNLAB_CACHE_DIR`` when set (tests point it at a temporary folder),
else ``platformdirs.user_cache_dir("attnlab")`` (``~/.cache/attnlab`` on Linux).

What: for a source file and a ``kind`` (what was built from it, e.g.
``"smollm2-float32"``), ``<kind>-<key>.bin`` holds the arrays one after
another (float32, C order, each at a 64-byte boundary) and ``<kind>-<key>.json``
says where each one is, with the CRC-32 and length of the ``.bin``.

The key names the source without reading all of it: a BLAKE2b hash of the cache
format, attnlab's version, the kind, the source's size and modification time,
its first MiB, 16 chunks of 64 KiB spread evenly over the rest, and its last
64 KiB (~2 MiB read; a reinstalled or changed model file gets a new key, and
the old files are left for the user to clear). A rewrite in place that keeps
size and mtime and changes only unsampled bytes would go unnoticed: accepted
for files that pip installs, and never rewrites in place.

Trust: every start checks the manifest (format, key, names, offsets) and the
``.bin``'s length and CRC-32 (~0.15 s for 538 MB) before mapping it; anything
off, the pair is rebuilt. Files are written under temporary names and renamed
into place (data first, manifest last), so a crash or a second process leaves
no half-written pair behind a valid name. A cache folder that cannot be
written: the arrays are built in memory instead, with a :class:`CacheWarning`.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import tempfile
import warnings
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

FORMAT = 1  # bump when the layout of the files changes
ENV = "ATTNLAB_CACHE_DIR"
_ALIGN = 64
_CHUNK = 1 << 16


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
    directory: Path | str | None = None,
) -> Cached:
    """Map the arrays that ``build()`` makes from ``source``, building and storing them first if needed.

    ``build`` yields ``(name, array)`` pairs (any float dtype; stored as float32),
    one at a time, so a build never holds more than one array beside the file.
    """
    source = Path(source)
    folder = Path(directory) if directory is not None else cache_dir()
    key = source_key(source, kind)
    data, manifest = folder / f"{kind}-{key}.bin", folder / f"{kind}-{key}.json"
    had = data.exists() or manifest.exists()
    if had:
        arrays = _mapped(data, manifest, key)
        if arrays is not None:
            return Cached(arrays, "mapped", data)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write(folder, data, manifest, key, build())
    except OSError as error:
        warnings.warn(
            f"attnlab: cannot write the weight cache in {folder} ({error}); building {kind} in memory "
            f"instead (each start will take as long). Set {ENV} to a writable folder to keep them.",
            CacheWarning,
            stacklevel=2,
        )
        arrays = {}
        for name, a in build():
            arrays[name] = _read_only(np.ascontiguousarray(a, dtype=np.float32))
        return Cached(arrays, "memory", None)
    arrays = _mapped(data, manifest, key)
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
                entries.append({"name": name, "shape": list(a.shape), "offset": at})
                view = memoryview(a).cast("B")
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


def _mapped(data: Path, manifest: Path, key: str) -> dict[str, np.ndarray] | None:
    """The arrays of a checked pair of files, or None when anything is missing, stale or corrupt."""
    try:
        body = json.loads(manifest.read_text())
        if body.get("format") != FORMAT or body.get("key") != key:
            return None
        with open(data, "rb") as f:
            if os.fstat(f.fileno()).st_size != body["nbytes"] or body["nbytes"] == 0:
                return None
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if zlib.crc32(mapped) != body["crc32"]:
            return None
        arrays = {}
        for entry in body["arrays"]:
            shape = tuple(int(n) for n in entry["shape"])
            offset = int(entry["offset"])
            if offset % _ALIGN or offset + 4 * int(np.prod(shape, dtype=np.int64)) > body["nbytes"]:
                return None
            # an array whose base is the map itself, so that views of it (side by side) share one base
            arrays[entry["name"]] = np.ndarray(shape, np.float32, buffer=mapped, offset=offset)
        return arrays
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read_only(a: np.ndarray) -> np.ndarray:
    a = a.view()  # the caller's array stays as it was
    a.flags.writeable = False
    return a
