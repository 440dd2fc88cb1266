"""The class store: a class's learners, recorded events and state in a real database.

SQLite by default (one file per class, WAL mode), PostgreSQL with a
``postgresql://`` URL (several ``attnlab serve`` processes share a class; changes
are announced with ``LISTEN/NOTIFY``). One schema, one versioned migration list
(``migrations.py``). Data only: it imports nothing from ``attnlab.lab`` or
``attnlab.web`` and writes no words; the lab words its typed errors.
"""

from attnlab.classroom_store.migrations import LATEST, MIGRATIONS, migrate
from attnlab.classroom_store.store import (
    ClassEnded,
    Classes,
    ClassExists,
    ClassFull,
    ClassInfo,
    ClassStore,
    Event,
    Learner,
    NicknameTaken,
    NoSuchClass,
    PostgresClasses,
    SchemaTooNew,
    SqliteClasses,
    StoreError,
    open_classes,
)

__all__ = [
    "LATEST", "MIGRATIONS", "ClassEnded", "ClassExists", "ClassFull", "ClassInfo", "ClassStore", "Classes",
    "Event", "Learner", "NicknameTaken", "NoSuchClass", "PostgresClasses", "SchemaTooNew", "SqliteClasses",
    "StoreError", "migrate", "open_classes",
]
