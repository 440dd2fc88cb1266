"""The two databases a class can live in, behind one small interface: :class:`Db`.

- :class:`SqliteDb`: one file (a class's own, in the user data folder), WAL mode,
  ``synchronous=FULL`` (a transaction is on disk when its commit returns, so an
  event acknowledged to a learner survives a crash of the process or the machine),
  foreign keys on. One connection, shared by the process's threads under a lock:
  SQLite writes one transaction at a time anyway. Notifications go, after each
  commit, to the listeners of that file in this process (a class in SQLite is
  served by one process).
- :class:`PostgresDb`: a PostgreSQL database (psycopg 3) shared by several
  processes. Notifications are ``NOTIFY attnlab_class, '<payload>'`` sent inside
  the transaction, so they are delivered on commit, to every process (this one
  included) that listens: a thread per listener holds its own connection in
  ``LISTEN attnlab_class``.

SQL is written once with ``?`` placeholders (PostgreSQL's ``%s`` are put in here).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

CHANNEL = "attnlab_class"
Listener = Callable[[str], None]
# SQLite's listeners, by file: every opening of one class's file in this process hears its changes
_LOCAL: dict[str, list[Listener]] = {}
_LOCAL_LOCK = threading.Lock()


class Db:
    """A database connection: :meth:`transaction` yields a cursor; :meth:`notify` inside it."""

    dialect: str

    def __init__(self) -> None:
        self._lock = threading.RLock()

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        raise NotImplementedError

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(payload)`` for every notification from now on; return what stops it."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class Cursor:
    """A cursor that takes ``?`` placeholders on either database and can queue a notification."""

    def __init__(self, raw, dialect: str) -> None:
        self.raw = raw
        self.dialect = dialect
        self.notes: list[str] = []

    def execute(self, sql: str, params: tuple | list = ()) -> Cursor:
        if self.dialect == "postgresql":
            sql = sql.replace("?", "%s")
        self.raw.execute(sql, tuple(params))
        return self

    def fetchone(self):
        return self.raw.fetchone()

    def fetchall(self) -> list:
        return list(self.raw.fetchall())

    def notify(self, payload: str) -> None:
        """Send ``payload`` to every listener once this transaction commits."""
        self.notes.append(payload)


class SqliteDb(Db):
    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._key = str(Path(path).resolve())
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10.0)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute("PRAGMA foreign_keys=ON")

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        with self._lock:
            raw = self._conn.cursor()
            raw.execute("BEGIN IMMEDIATE")
            cursor = Cursor(raw, self.dialect)
            try:
                yield cursor
            except BaseException:
                raw.execute("ROLLBACK")
                raise
            raw.execute("COMMIT")
        with _LOCAL_LOCK:
            listeners = list(_LOCAL.get(self._key, ()))
        for note in cursor.notes:
            for listener in listeners:
                listener(note)

    def listen(self, listener: Listener) -> Callable[[], None]:
        with _LOCAL_LOCK:
            _LOCAL.setdefault(self._key, []).append(listener)

        def stop() -> None:
            with _LOCAL_LOCK:
                found = _LOCAL.get(self._key, [])
                if listener in found:
                    found.remove(listener)

        return stop

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class PostgresDb(Db):
    dialect = "postgresql"

    def __init__(self, url: str) -> None:
        import psycopg

        super().__init__()
        self.url = url
        self._conn = psycopg.connect(url, autocommit=False)

    @contextmanager
    def transaction(self) -> Iterator[Cursor]:
        with self._lock:
            with self._conn.cursor() as raw:
                cursor = Cursor(raw, self.dialect)
                try:
                    yield cursor
                    for note in cursor.notes:
                        raw.execute("SELECT pg_notify(%s, %s)", (CHANNEL, note))
                except BaseException:
                    self._conn.rollback()
                    raise
                self._conn.commit()

    def listen(self, listener: Listener) -> Callable[[], None]:
        import psycopg

        conn = psycopg.connect(self.url, autocommit=True)
        conn.execute(f"LISTEN {CHANNEL}")
        stopped = threading.Event()

        def run() -> None:
            try:
                while not stopped.is_set():
                    for note in conn.notifies(timeout=0.5):
                        if stopped.is_set():
                            break
                        listener(note.payload)
            except psycopg.Error:
                pass  # the connection went away (the server stopped): nothing more to hear
            finally:
                conn.close()

        thread = threading.Thread(target=run, name="attnlab-class-listen", daemon=True)
        thread.start()

        def stop() -> None:
            stopped.set()
            thread.join(timeout=5)

        return stop

    def close(self) -> None:
        with self._lock:
            self._conn.close()
