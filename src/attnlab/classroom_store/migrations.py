"""The class store's schema: one versioned list of migrations, for SQLite and PostgreSQL alike.

Each :class:`Migration` moves the schema one version up (``up``) or back down
(``down``). The SQL is the same for both databases except the auto-numbered key,
written ``{serial}``: ``INTEGER PRIMARY KEY`` in SQLite (its rowid),
``BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY`` in PostgreSQL. Times are
milliseconds since the Unix epoch (``BIGINT``); JSON is stored as ``TEXT``;
flags are ``INTEGER`` 0 or 1. The version reached is the one row of
``schema_version`` (no row: version 0, an empty database).

Version 1: classes and the digests of their teacher tokens; 2: learners and their
presence; 3: the recorded events and each learner's latest study per part of the lab.
"""

from __future__ import annotations

from dataclasses import dataclass

SERIAL = {
    "sqlite": "INTEGER PRIMARY KEY",
    "postgresql": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
}


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    up: tuple[str, ...]
    down: tuple[str, ...]


MIGRATIONS = (
    Migration(
        1,
        "classes and teacher tokens",
        up=(
            """CREATE TABLE classes (
                id {serial},
                name TEXT NOT NULL UNIQUE,
                public_id TEXT NOT NULL UNIQUE,
                created_at BIGINT NOT NULL,
                ended_at BIGINT,
                state TEXT NOT NULL,
                last_seq BIGINT NOT NULL DEFAULT 0
            )""",
            """CREATE TABLE teacher_tokens (
                id {serial},
                class_id BIGINT NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
                digest TEXT NOT NULL UNIQUE,
                created_at BIGINT NOT NULL
            )""",
        ),
        down=("DROP TABLE teacher_tokens", "DROP TABLE classes"),
    ),
    Migration(
        2,
        "learners",
        up=(
            """CREATE TABLE learners (
                id {serial},
                class_id BIGINT NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
                number INTEGER NOT NULL,
                nickname TEXT NOT NULL,
                folded TEXT NOT NULL,
                key_digest TEXT NOT NULL UNIQUE,
                joined_at BIGINT NOT NULL,
                online INTEGER NOT NULL DEFAULT 0,
                place TEXT,
                seen_at BIGINT,
                UNIQUE (class_id, folded),
                UNIQUE (class_id, number)
            )""",
        ),
        down=("DROP TABLE learners",),
    ),
    Migration(
        3,
        "events and studies",
        up=(
            """CREATE TABLE events (
                id {serial},
                class_id BIGINT NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
                seq BIGINT NOT NULL,
                learner_id BIGINT REFERENCES learners(id) ON DELETE CASCADE,
                at BIGINT NOT NULL,
                kind TEXT NOT NULL,
                part TEXT,
                challenge TEXT,
                data TEXT NOT NULL,
                UNIQUE (class_id, seq)
            )""",
            "CREATE INDEX events_by_learner ON events (learner_id, seq)",
            """CREATE TABLE studies (
                learner_id BIGINT NOT NULL REFERENCES learners(id) ON DELETE CASCADE,
                part TEXT NOT NULL,
                study TEXT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (learner_id, part)
            )""",
        ),
        down=("DROP TABLE studies", "DROP INDEX events_by_learner", "DROP TABLE events"),
    ),
)
LATEST = MIGRATIONS[-1].version


def statements(migration: Migration, dialect: str, *, up: bool = True) -> list[str]:
    """The SQL of one step of ``migration`` for ``dialect`` (``"sqlite"`` or ``"postgresql"``)."""
    return [sql.replace("{serial}", SERIAL[dialect]) for sql in (migration.up if up else migration.down)]


def current_version(cursor) -> int:
    """The schema's version in the database behind ``cursor`` (0 when it has none yet)."""
    cursor.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
    )
    cursor.execute("SELECT version FROM schema_version")
    row = cursor.fetchone()
    return 0 if row is None else int(row[0])


def migrate(cursor, dialect: str, target: int = LATEST) -> list[int]:
    """Move the schema to version ``target``, up or down, one migration at a time, in one transaction.

    Returns the versions passed through, in order (``[1, 2, 3]`` from an empty database,
    ``[2, 1]`` from 3 down to 1). The caller commits.
    """
    if not 0 <= target <= LATEST:
        raise ValueError(f"schema version {target} does not exist (0 to {LATEST})")
    version = current_version(cursor)
    passed = []
    while version < target:
        step = MIGRATIONS[version]
        for sql in statements(step, dialect, up=True):
            cursor.execute(sql)
        version = step.version
        passed.append(version)
    while version > target:
        step = MIGRATIONS[version - 1]
        for sql in statements(step, dialect, up=False):
            cursor.execute(sql)
        version = step.version - 1
        passed.append(version)
    cursor.execute("DELETE FROM schema_version")
    cursor.execute(f"INSERT INTO schema_version (version) VALUES ({int(version)})")
    return passed
