"""The class store's migrations, up and down, on SQLite and on PostgreSQL."""

from __future__ import annotations

import sqlite3

import pytest

from attnlab.classroom_store import LATEST, MIGRATIONS, SchemaTooNew, SqliteClasses
from attnlab.classroom_store.db import PostgresDb, SqliteDb
from attnlab.classroom_store.migrations import current_version, migrate

TABLES_AT = {0: set(), 1: {"classes", "teacher_tokens"}, 2: {"classes", "teacher_tokens", "learners"},
             3: {"classes", "teacher_tokens", "learners", "events", "studies"}}


def tables(db) -> set[str]:
    with db.transaction() as c:
        if db.dialect == "sqlite":
            rows = c.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        else:
            rows = c.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            ).fetchall()
    return {r[0] for r in rows} - {"schema_version"}


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request, tmp_path):
    if request.param == "sqlite":
        made = SqliteDb(tmp_path / "c.sqlite3")
    else:
        made = PostgresDb(request.getfixturevalue("pg_url"))
    yield made
    made.close()


def test_the_versions_are_one_to_latest_in_order():
    assert [m.version for m in MIGRATIONS] == list(range(1, LATEST + 1)) and LATEST == 3


def test_each_migration_goes_up_and_back_down(db):
    with db.transaction() as c:
        assert current_version(c) == 0
        assert migrate(c, db.dialect) == [1, 2, 3]
    assert tables(db) == TABLES_AT[3]
    for target in (2, 1, 0):
        with db.transaction() as c:
            assert migrate(c, db.dialect, target) == [target]
            assert current_version(c) == target
        assert tables(db) == TABLES_AT[target]
    with db.transaction() as c:  # and up again from nothing, to a middle version
        assert migrate(c, db.dialect, 2) == [1, 2]
    assert tables(db) == TABLES_AT[2]


def test_data_survives_an_upgrade_from_an_older_version(db):
    with db.transaction() as c:
        migrate(c, db.dialect, 2)
        c.execute("INSERT INTO classes (name, public_id, created_at, state) VALUES ('c', 'p', 1, '{}')")
    with db.transaction() as c:
        assert migrate(c, db.dialect) == [3]
        assert c.execute("SELECT name FROM classes").fetchall() == [("c",)]


def test_a_failed_migration_changes_nothing(db):
    with db.transaction() as c:
        migrate(c, db.dialect, 1)
    with pytest.raises(ValueError), db.transaction() as c:
        migrate(c, db.dialect, 9)
    with db.transaction() as c:
        assert current_version(c) == 1


def test_a_database_from_a_newer_attnlab_is_refused(tmp_path):
    classes = SqliteClasses(tmp_path)
    classes.create("physics", state={}, now=1).close()
    conn = sqlite3.connect(tmp_path / "physics.sqlite3")
    conn.execute("UPDATE schema_version SET version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaTooNew) as refused:
        classes.open("physics")
    assert (refused.value.found, refused.value.latest) == (99, LATEST)
