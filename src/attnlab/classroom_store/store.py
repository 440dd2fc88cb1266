"""Where classes are kept: :class:`Classes` (the folder of SQLite files, or one PostgreSQL database)
and :class:`ClassStore` (one class: its learners, its recorded events, its state).

Data only: numbers, the learner's nickname as typed, JSON the lab gave; no
words. Errors are typed (:class:`ClassExists`, :class:`NicknameTaken`, ...) for
the lab to put into words.

Events are numbered per class (``seq`` 1, 2, 3, ...) by a counter on the class's
row, taken inside the event's own transaction: the row's lock makes concurrent
writers (several processes on one PostgreSQL class) commit in ``seq`` order, so a
reader that has seen event n has seen every event before it. Each change is
announced after its commit with a notification ``"<public_id>:<what>:<n>"``:
``event:<seq>``, ``learner:<id>``, ``state:0``, ``deleted:0``.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attnlab.classroom_store.db import Cursor, Db, PostgresDb, SqliteDb
from attnlab.classroom_store.migrations import LATEST, current_version, migrate

SUFFIX = ".sqlite3"


class StoreError(Exception):
    """A class store's refusal, as data: the lab words it."""


class ClassExists(StoreError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class NoSuchClass(StoreError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class NicknameTaken(StoreError):
    def __init__(self, nickname: str) -> None:
        super().__init__(nickname)
        self.nickname = nickname


class ClassFull(StoreError):
    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


class ClassEnded(StoreError):
    """The class has ended: it records nothing more until it is resumed."""


class SchemaTooNew(StoreError):
    def __init__(self, found: int) -> None:
        super().__init__(found)
        self.found = found
        self.latest = LATEST


@dataclass(frozen=True)
class ClassInfo:
    id: int
    name: str
    public_id: str
    created_at: int
    ended_at: int | None
    state: dict
    last_seq: int


@dataclass(frozen=True)
class Learner:
    id: int
    number: int  # 1 for the first to join, 2 for the next, ...
    nickname: str
    joined_at: int
    online: bool
    place: dict | None  # where the learner's page is, as it last said: {"page", "section"}
    seen_at: int | None


@dataclass(frozen=True)
class Event:
    seq: int
    learner_id: int | None
    at: int
    kind: str
    part: str | None
    challenge: str | None
    data: dict


_CLASS = "id, name, public_id, created_at, ended_at, state, last_seq"
_LEARNER = "id, number, nickname, joined_at, online, place, seen_at"
_EVENT = "seq, learner_id, at, kind, part, challenge, data"


def _class(row) -> ClassInfo:
    return ClassInfo(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]), row[6])


def _learner(row) -> Learner:
    place = json.loads(row[5]) if row[5] else None
    return Learner(row[0], row[1], row[2], row[3], bool(row[4]), place, row[6])


def _event(row) -> Event:
    return Event(row[0], row[1], row[2], row[3], row[4], row[5], json.loads(row[6]))


def _text(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _unique_violation(error: Exception) -> bool:
    if isinstance(error, sqlite3.IntegrityError):
        return "UNIQUE" in str(error)
    return type(error).__name__ == "UniqueViolation"


class ClassStore:
    """One class in its database. Every method is one transaction; safe to call from any thread."""

    def __init__(self, db: Db, class_id: int, public_id: str, *, owns_db: bool) -> None:
        self.db = db
        self.id = class_id
        self.public_id = public_id
        self._owns_db = owns_db

    # --- the class ---------------------------------------------------------------

    def info(self) -> ClassInfo:
        with self.db.transaction() as c:
            row = c.execute(f"SELECT {_CLASS} FROM classes WHERE id = ?", (self.id,)).fetchone()
        if row is None:
            raise NoSuchClass(str(self.id))
        return _class(row)

    def set_state(self, state: dict) -> None:
        with self.db.transaction() as c:
            c.execute("UPDATE classes SET state = ? WHERE id = ?", (_text(state), self.id))
            self._note(c, "state", 0)

    def end(self, now: int) -> None:
        with self.db.transaction() as c:
            c.execute("UPDATE classes SET ended_at = ? WHERE id = ?", (now, self.id))
            self._note(c, "state", 0)

    def reopen(self) -> None:
        """Open an ended class again, with every learner offline until their page reconnects."""
        with self.db.transaction() as c:
            c.execute("UPDATE classes SET ended_at = NULL WHERE id = ?", (self.id,))
            c.execute("UPDATE learners SET online = 0 WHERE class_id = ?", (self.id,))
            self._note(c, "state", 0)

    def add_token(self, digest: str, now: int) -> None:
        with self.db.transaction() as c:
            c.execute(
                "INSERT INTO teacher_tokens (class_id, digest, created_at) VALUES (?, ?, ?)",
                (self.id, digest, now),
            )

    def token_digests(self) -> list[str]:
        with self.db.transaction() as c:
            rows = c.execute("SELECT digest FROM teacher_tokens WHERE class_id = ?", (self.id,)).fetchall()
        return [r[0] for r in rows]

    # --- learners ----------------------------------------------------------------

    def join(self, nickname: str, folded: str, key_digest: str, now: int, *, limit: int) -> Learner:
        """Add a learner (``folded``: the nickname as compared for duplicates); refuse a taken one."""
        try:
            with self.db.transaction() as c:
                ended = c.execute("SELECT ended_at FROM classes WHERE id = ?", (self.id,)).fetchone()
                if ended is None or ended[0] is not None:
                    raise ClassEnded()
                taken = c.execute(
                    "SELECT 1 FROM learners WHERE class_id = ? AND folded = ?", (self.id, folded)
                ).fetchone()
                if taken:
                    raise NicknameTaken(nickname)
                count = c.execute(
                    "SELECT COUNT(*), COALESCE(MAX(number), 0) FROM learners WHERE class_id = ?", (self.id,)
                ).fetchone()
                if count[0] >= limit:
                    raise ClassFull(limit)
                row = c.execute(
                    "INSERT INTO learners (class_id, number, nickname, folded, key_digest, joined_at)"
                    f" VALUES (?, ?, ?, ?, ?, ?) RETURNING {_LEARNER}",
                    (self.id, count[1] + 1, nickname, folded, key_digest, now),
                ).fetchone()
                learner = _learner(row)
                self._note(c, "learner", learner.id)
                return learner
        except Exception as error:
            if _unique_violation(error):  # another process took the name (or the number) first
                raise NicknameTaken(nickname) from None
            raise

    def learner_by_key(self, key_digest: str) -> Learner | None:
        with self.db.transaction() as c:
            row = c.execute(
                f"SELECT {_LEARNER} FROM learners WHERE class_id = ? AND key_digest = ?",
                (self.id, key_digest),
            ).fetchone()
        return None if row is None else _learner(row)

    def learners(self) -> list[Learner]:
        with self.db.transaction() as c:
            rows = c.execute(
                f"SELECT {_LEARNER} FROM learners WHERE class_id = ? ORDER BY number", (self.id,)
            ).fetchall()
        return [_learner(r) for r in rows]

    def set_presence(self, learner_id: int, *, online: bool, place: dict | None, now: int) -> None:
        with self.db.transaction() as c:
            c.execute(
                "UPDATE learners SET online = ?, place = ?, seen_at = ? WHERE id = ? AND class_id = ?",
                (int(online), None if place is None else _text(place), now, learner_id, self.id),
            )
            self._note(c, "learner", learner_id)

    # --- events ------------------------------------------------------------------

    def record(
        self, learner_id: int | None, kind: str, *, at: int, part: str | None = None,
        challenge: str | None = None, data: dict | None = None, study: dict | None = None,
    ) -> Event:
        """Record one event (and, with ``study``, the learner's latest study of ``part``); return it.

        Refused with :class:`ClassEnded` once the class has ended. The event is committed
        (on disk, for SQLite) when this returns.
        """
        with self.db.transaction() as c:
            row = c.execute(
                "UPDATE classes SET last_seq = last_seq + 1 WHERE id = ? AND ended_at IS NULL"
                " RETURNING last_seq",
                (self.id,),
            ).fetchone()
            if row is None:
                raise ClassEnded()
            seq = row[0]
            c.execute(
                "INSERT INTO events (class_id, seq, learner_id, at, kind, part, challenge, data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (self.id, seq, learner_id, at, kind, part, challenge, _text(data or {})),
            )
            if study is not None and learner_id is not None and part is not None:
                c.execute(
                    "INSERT INTO studies (learner_id, part, study, updated_at) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (learner_id, part) DO UPDATE SET study = excluded.study,"
                    " updated_at = excluded.updated_at",
                    (learner_id, part, _text(study), at),
                )
            self._note(c, "event", seq)
        return Event(seq, learner_id, at, kind, part, challenge, data or {})

    def events(self, *, after: int = 0, learner_id: int | None = None) -> list[Event]:
        """The events after ``seq`` ``after``, oldest first (one learner's, with ``learner_id``)."""
        sql = f"SELECT {_EVENT} FROM events WHERE class_id = ? AND seq > ?"
        params: list = [self.id, after]
        if learner_id is not None:
            sql += " AND learner_id = ?"
            params.append(learner_id)
        with self.db.transaction() as c:
            rows = c.execute(sql + " ORDER BY seq", params).fetchall()
        return [_event(r) for r in rows]

    def count_events(self) -> int:
        with self.db.transaction() as c:
            return c.execute("SELECT COUNT(*) FROM events WHERE class_id = ?", (self.id,)).fetchone()[0]

    def studies(self, learner_id: int) -> dict[str, dict]:
        """The learner's latest study of each part of the lab: ``{part: study}``."""
        with self.db.transaction() as c:
            rows = c.execute(
                "SELECT s.part, s.study FROM studies s JOIN learners l ON l.id = s.learner_id"
                " WHERE s.learner_id = ? AND l.class_id = ? ORDER BY s.part",
                (learner_id, self.id),
            ).fetchall()
        return {part: json.loads(study) for part, study in rows}

    # --- notifications -----------------------------------------------------------

    def _note(self, c: Cursor, what: str, n: int) -> None:
        c.notify(f"{self.public_id}:{what}:{n}")

    def listen(self, listener: Callable[[str, int], None]) -> Callable[[], None]:
        """Call ``listener(what, n)`` after each change to this class (from any process); return stop."""
        prefix = self.public_id + ":"

        def heard(payload: str) -> None:
            if payload.startswith(prefix):
                what, _, n = payload[len(prefix):].partition(":")
                listener(what, int(n or 0))

        return self.db.listen(heard)

    def close(self) -> None:
        if self._owns_db:
            self.db.close()


def _prepare(db: Db) -> None:
    with db.transaction() as c:
        found = current_version(c)
        if found > LATEST:
            raise SchemaTooNew(found)
        migrate(c, db.dialect)


def _insert_class(c: Cursor, name: str, state: dict, now: int) -> tuple[int, str]:
    public_id = secrets.token_hex(6)
    row = c.execute(
        "INSERT INTO classes (name, public_id, created_at, state) VALUES (?, ?, ?, ?) RETURNING id",
        (name, public_id, now, _text(state)),
    ).fetchone()
    return row[0], public_id


class Classes:
    """Where the classes live; :func:`open_classes` picks SQLite files or PostgreSQL."""

    where: str

    def names(self) -> list[ClassInfo]:
        raise NotImplementedError

    def create(self, name: str, *, state: dict, now: int) -> ClassStore:
        raise NotImplementedError

    def open(self, name: str) -> ClassStore:
        raise NotImplementedError

    def delete(self, store: ClassStore) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class SqliteClasses(Classes):
    """One SQLite file per class, ``<folder>/<name>.sqlite3`` (names are checked by the lab first)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.where = str(self.folder)

    def path(self, name: str) -> Path:
        return self.folder / f"{name}{SUFFIX}"

    def names(self) -> list[ClassInfo]:
        found = []
        for path in sorted(self.folder.glob(f"*{SUFFIX}")):
            store = self.open(path.name[: -len(SUFFIX)])
            try:
                found.append(store.info())
            finally:
                store.close()
        return found

    def create(self, name: str, *, state: dict, now: int) -> ClassStore:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.path(name)
        try:
            path.touch(exist_ok=False)
        except FileExistsError:
            raise ClassExists(name) from None
        db = SqliteDb(path)
        _prepare(db)
        with db.transaction() as c:
            class_id, public_id = _insert_class(c, name, state, now)
        return ClassStore(db, class_id, public_id, owns_db=True)

    def open(self, name: str) -> ClassStore:
        path = self.path(name)
        if not path.is_file():
            raise NoSuchClass(name)
        db = SqliteDb(path)
        try:
            _prepare(db)
            with db.transaction() as c:
                row = c.execute("SELECT id, public_id FROM classes WHERE name = ?", (name,)).fetchone()
        except BaseException:
            db.close()
            raise
        if row is None:
            db.close()
            raise NoSuchClass(name)
        return ClassStore(db, row[0], row[1], owns_db=True)

    def delete(self, store: ClassStore) -> None:
        with store.db.transaction() as c:
            store._note(c, "deleted", 0)
        path = Path(store.db.path)
        store.close()
        for extra in ("", "-wal", "-shm", "-journal"):
            Path(str(path) + extra).unlink(missing_ok=True)


class PostgresClasses(Classes):
    """Every class in one PostgreSQL database (``postgresql://...``), shared by several processes."""

    def __init__(self, url: str) -> None:
        self.db = PostgresDb(url)
        self.where = "PostgreSQL"
        _prepare(self.db)

    def names(self) -> list[ClassInfo]:
        with self.db.transaction() as c:
            rows = c.execute(f"SELECT {_CLASS} FROM classes ORDER BY name").fetchall()
        return [_class(r) for r in rows]

    def create(self, name: str, *, state: dict, now: int) -> ClassStore:
        try:
            with self.db.transaction() as c:
                if c.execute("SELECT 1 FROM classes WHERE name = ?", (name,)).fetchone():
                    raise ClassExists(name)
                class_id, public_id = _insert_class(c, name, state, now)
        except Exception as error:
            if _unique_violation(error):
                raise ClassExists(name) from None
            raise
        return ClassStore(self.db, class_id, public_id, owns_db=False)

    def open(self, name: str) -> ClassStore:
        with self.db.transaction() as c:
            row = c.execute("SELECT id, public_id FROM classes WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise NoSuchClass(name)
        return ClassStore(self.db, row[0], row[1], owns_db=False)

    def delete(self, store: ClassStore) -> None:
        with self.db.transaction() as c:
            c.execute("DELETE FROM classes WHERE id = ?", (store.id,))
            store._note(c, "deleted", 0)

    def close(self) -> None:
        self.db.close()


def open_classes(database: str | None, folder: Path) -> Classes:
    """The classes at ``database`` (a ``postgresql://`` URL), or else one SQLite file each in ``folder``."""
    if database and database.startswith(("postgresql://", "postgres://")):
        return PostgresClasses(database)
    if database:
        raise ValueError(database)
    return SqliteClasses(folder)
