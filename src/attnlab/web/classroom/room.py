"""The class this process serves: its store, what it has read of it, and who is listening.

The store is the truth; a ``Room`` keeps a copy of the class's row, its learners
and its events, kept current by the store's notifications (in SQLite this
process's own; in PostgreSQL every process's, through ``LISTEN/NOTIFY``), so the
teacher's view never waits on a query and several processes show one class. Each
change bumps :attr:`Room.version` and wakes the sockets waiting in :meth:`wait`.

Identities: a learner's page holds a random key in an HttpOnly cookie
(``attnlab_class_<public id>``) whose SHA-256 the store keeps; the teacher holds a
token (in the address printed at the start, then an HttpOnly cookie, or an
``Authorization: Bearer`` header), kept as a SHA-256 too and compared with
``hmac.compare_digest``. Blocking store calls run in worker threads.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict

import anyio

from attnlab.classroom_store import Classes, ClassStore, Event, Learner

LEARNER_COOKIE = "attnlab_class_"
TEACHER_COOKIE = "attnlab_teacher_"
MAX_LEARNERS = 200
JOIN_BURST = 5  # joins one address may make at once ...
JOIN_EVERY_S = 6.0  # ... and one more every this many seconds
COOKIE_DAYS = 7


def now_ms() -> int:
    return int(time.time() * 1000)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_secret() -> str:
    return secrets.token_urlsafe(32)


class JoinLimiter:
    """Joins per address: a bucket of ``JOIN_BURST``, one more every ``JOIN_EVERY_S`` seconds."""

    def __init__(self, burst: int = JOIN_BURST, every: float = JOIN_EVERY_S) -> None:
        self.burst, self.every = burst, every
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, address: str, now: float | None = None) -> int:
        """Take one join for ``address``: 0 when allowed, else the whole seconds until one is."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, at = self._buckets.get(address, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - at) / self.every)
            if tokens >= 1.0:
                self._buckets[address] = (tokens - 1.0, now)
                return 0
            self._buckets[address] = (tokens, now)
            return max(1, int((1.0 - tokens) * self.every + 0.999))


class Room:
    """One running class in this process (see the module)."""

    def __init__(self, *, classes: Classes, store: ClassStore, join_url: str, teacher_url: str = "") -> None:
        self.classes = classes
        self.store = store
        self.join_url = join_url
        self.teacher_url = teacher_url
        self.shared = classes.where == "PostgreSQL"
        self.deleted = False
        self.version = 0
        self.limiter = JoinLimiter()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed: asyncio.Event | None = None
        self._sockets: dict[int, int] = {}  # learner id -> this process's open sockets for them
        self._keys: dict[str, int] = {}  # a learner key's digest -> the learner's id (looked up once)
        self.info = store.info()
        self.learners: dict[int, Learner] = {x.id: x for x in store.learners()}
        self.events: list[dict] = [asdict(e) for e in store.events()]  # as the lab reads them
        self._digests = set(store.token_digests())
        self._stop = store.listen(self._heard)

    # --- identities ----------------------------------------------------------------

    @property
    def learner_cookie(self) -> str:
        return LEARNER_COOKIE + self.store.public_id

    @property
    def teacher_cookie(self) -> str:
        return TEACHER_COOKIE + self.store.public_id

    def issue_token(self) -> str:
        """A new teacher token for this class (earlier ones stay valid until the class is deleted)."""
        token = new_secret()
        self.store.add_token(digest(token), now_ms())
        with self._lock:
            self._digests.add(digest(token))
        return token

    def is_teacher(self, token: str | None) -> bool:
        if not token or self.deleted:
            return False
        given = digest(token)
        with self._lock:
            known = list(self._digests)
        if any(hmac.compare_digest(given, d) for d in known):
            return True
        fresh = set(self.store.token_digests())  # another process may have issued it
        with self._lock:
            self._digests = fresh
        return any(hmac.compare_digest(given, d) for d in fresh)

    def teacher_token(self, cookies: Mapping[str, str], authorization: str | None) -> str | None:
        if authorization and authorization.lower().startswith("bearer "):
            return authorization[7:].strip()
        return cookies.get(self.teacher_cookie)

    def known_learner(self, cookies: Mapping[str, str]) -> Learner | None | bool:
        """The learner a cookie names when this process has met them (no query), None for no
        cookie of this class, or False: not met yet (ask :meth:`learner_of`, which queries)."""
        key = cookies.get(self.learner_cookie)
        if not key or self.deleted:
            return None
        with self._lock:
            known = self._keys.get(digest(key))
            return self.learners.get(known, False) if known is not None else False

    def learner_of(self, cookies: Mapping[str, str]) -> Learner | None:
        key = cookies.get(self.learner_cookie)
        if not key or self.deleted:
            return None
        wanted = digest(key)
        with self._lock:
            known = self._keys.get(wanted)
            if known is not None and known in self.learners:
                return self.learners[known]
        found = self.store.learner_by_key(wanted)  # joined here or on another process
        if found is not None:
            with self._lock:
                self.learners[found.id] = self.learners.get(found.id, found)
                self._keys[wanted] = found.id
        return found

    # --- state -------------------------------------------------------------------------

    @property
    def state(self) -> dict:
        return self.info.state

    @property
    def ended(self) -> bool:
        return self.info.ended_at is not None

    def set_state(self, **changes) -> dict:
        state = {**self.store.info().state, **changes}
        self.store.set_state(state)
        self.info = self.store.info()
        return state

    def class_record(self) -> dict:
        """The class as the lab's plain record (``lab.classroom.view``)."""
        info = self.info
        return {"name": info.name, "state": info.state, "ended": info.ended_at is not None,
                "created_at": info.created_at, "ended_at": info.ended_at}

    def records(self) -> tuple[dict, list[dict], list[dict]]:
        """The class, its learners and its events as the lab's plain records (``lab.classroom.view``)."""
        with self._lock:
            learners, events = list(self.learners.values()), list(self.events)
        ordered = sorted((asdict(x) for x in learners), key=lambda x: x["number"])
        return self.class_record(), ordered, events

    # --- changes -----------------------------------------------------------------------

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._loop is None:
            self._loop = loop
            self._changed = asyncio.Event()

    def _heard(self, what: str, n: int) -> None:
        """A change committed (by this process or another): read it, then wake the sockets."""
        if what == "event":
            with self._lock:
                after = self.events[-1]["seq"] if self.events else 0
            if n > after:
                new = self.store.events(after=after)
                with self._lock:
                    last = self.events[-1]["seq"] if self.events else 0
                    self.events.extend(asdict(e) for e in new if e.seq > last)
        elif what == "learner":
            fresh = {x.id: x for x in self.store.learners()}
            with self._lock:
                self.learners = fresh
        elif what == "state":
            self.info = self.store.info()
        elif what == "deleted":
            self.deleted = True
        self._bump()

    def _bump(self) -> None:
        self.version += 1
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = asyncio.Event()

    async def wait(self, seen: int) -> int:
        """Wait until the room has changed since version ``seen``; return the version now."""
        self.attach(asyncio.get_running_loop())
        while self.version == seen:
            changed = self._changed
            assert changed is not None
            await changed.wait()
        return self.version

    # --- recording and presence ------------------------------------------------------------

    async def record(self, learner_id: int | None, kind: str, **fields) -> Event:
        return await anyio.to_thread.run_sync(
            lambda: self.store.record(learner_id, kind, at=now_ms(), **fields)
        )

    async def presence(self, learner_id: int, *, opened: int = 0, place: dict | None = None) -> None:
        """Note a learner's socket opening (+1), closing (-1) or saying where it is (0)."""
        with self._lock:
            count = self._sockets.get(learner_id, 0) + opened
            self._sockets[learner_id] = max(0, count)
        online = count > 0
        keep = place if place is not None else (self.learners.get(learner_id).place
                                                if learner_id in self.learners else None)
        await anyio.to_thread.run_sync(
            lambda: self.store.set_presence(learner_id, online=online, place=keep, now=now_ms())
        )

    def close(self) -> None:
        self._stop()
        if not self.deleted:
            self.store.close()
