"""A class in its store: learners, events in order, studies, presence, notifications, deletion."""

from __future__ import annotations

import threading
import time

import pytest

from attnlab.classroom_store import (
    ClassEnded,
    ClassExists,
    ClassFull,
    NicknameTaken,
    NoSuchClass,
    PostgresClasses,
    SqliteClasses,
)


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request, tmp_path):
    """A function that opens the same place again (a second process would)."""
    if request.param == "sqlite":
        return lambda: SqliteClasses(tmp_path / "classes")
    url = request.getfixturevalue("pg_url")
    return lambda: PostgresClasses(url)


@pytest.fixture
def classes(where):
    opened = where()
    yield opened
    opened.close()


def test_a_class_is_made_once_and_opened_by_name(classes):
    store = classes.create("physics-7", state={"paused": False}, now=1000)
    info = store.info()
    assert (info.name, info.created_at, info.ended_at, info.state, info.last_seq) == (
        "physics-7", 1000, None, {"paused": False}, 0)
    assert len(info.public_id) == 12
    with pytest.raises(ClassExists):
        classes.create("physics-7", state={}, now=2)
    with pytest.raises(NoSuchClass):
        classes.open("chemistry")
    again = classes.open("physics-7")
    assert again.info() == info
    assert [c.name for c in classes.names()] == ["physics-7"]
    again.close()
    store.close()


def test_learners_join_in_order_and_a_taken_nickname_is_refused(classes):
    store = classes.create("c", state={}, now=1)
    ada = store.join("Ada", "ada", "k1", 10, limit=3)
    alan = store.join("Alan", "alan", "k2", 11, limit=3)
    assert (ada.number, alan.number, ada.nickname, ada.online, ada.place) == (1, 2, "Ada", False, None)
    with pytest.raises(NicknameTaken) as taken:
        store.join("ADA", "ada", "k3", 12, limit=3)
    assert taken.value.nickname == "ADA"
    store.join("Emmy", "emmy", "k4", 13, limit=3)
    with pytest.raises(ClassFull):
        store.join("Kurt", "kurt", "k5", 14, limit=3)
    assert store.learner_by_key("k2") == alan
    assert store.learner_by_key("nope") is None
    assert [x.nickname for x in store.learners()] == ["Ada", "Alan", "Emmy"]
    store.close()


def test_events_are_numbered_in_order_and_kept_with_the_latest_study(classes):
    store = classes.create("c", state={}, now=1)
    ada = store.join("Ada", "ada", "k1", 10, limit=60)
    first = store.record(ada.id, "check", at=20, part="notebook", challenge="zero-q",
                         data={"met": False, "response": [10, 80, 10]}, study={"version": 1, "n": 1})
    second = store.record(ada.id, "hint", at=21, part="notebook", challenge="zero-q", data={"detail": 1},
                          study={"version": 1, "n": 2})
    teacher = store.record(None, "pause", at=22, data={})
    assert (first.seq, second.seq, teacher.seq) == (1, 2, 3)
    got = store.events()
    assert [(e.seq, e.kind, e.learner_id) for e in got] == [(1, "check", ada.id), (2, "hint", ada.id),
                                                            (3, "pause", None)]
    assert got[0].data == {"met": False, "response": [10, 80, 10]}
    assert [e.seq for e in store.events(after=1)] == [2, 3]
    assert [e.seq for e in store.events(learner_id=ada.id)] == [1, 2]
    assert store.studies(ada.id) == {"notebook": {"version": 1, "n": 2}}
    assert store.count_events() == 3 and store.info().last_seq == 3
    store.close()


def test_an_ended_class_records_nothing_until_it_is_reopened(classes):
    store = classes.create("c", state={}, now=1)
    ada = store.join("Ada", "ada", "k1", 10, limit=60)
    store.end(50)
    assert store.info().ended_at == 50
    with pytest.raises(ClassEnded):
        store.record(ada.id, "check", at=51)
    with pytest.raises(ClassEnded):
        store.join("Alan", "alan", "k2", 52, limit=60)
    store.set_presence(ada.id, online=True, place={"page": "/"}, now=53)
    store.reopen()
    assert store.info().ended_at is None and store.learners()[0].online is False
    assert store.record(ada.id, "check", at=54).seq == 1
    store.close()


def test_teacher_token_digests_accumulate(classes):
    store = classes.create("c", state={}, now=1)
    store.add_token("d1", 1)
    store.add_token("d2", 2)
    assert sorted(store.token_digests()) == ["d1", "d2"]
    store.close()


def test_presence_and_state_are_kept(classes):
    store = classes.create("c", state={"paused": False}, now=1)
    ada = store.join("Ada", "ada", "k1", 10, limit=60)
    store.set_presence(ada.id, online=True, place={"page": "/", "section": "practice"}, now=30)
    back = store.learners()[0]
    assert (back.online, back.place, back.seen_at) == (True, {"page": "/", "section": "practice"}, 30)
    store.set_state({"paused": True, "pace": ["practice"]})
    assert store.info().state == {"paused": True, "pace": ["practice"]}
    store.close()


def test_changes_are_heard_by_another_opening_of_the_class(where, classes):
    """In SQLite, by this process's listeners; in PostgreSQL, by LISTEN/NOTIFY on another connection."""
    store = classes.create("c", state={}, now=1)
    other_place = where() if isinstance(classes, PostgresClasses) else classes
    other = other_place.open("c")
    heard: list[tuple[str, int]] = []
    got = threading.Event()

    def listener(what, n):
        heard.append((what, n))
        if what == "event":
            got.set()

    stop = other.listen(listener)
    ada = store.join("Ada", "ada", "k1", 10, limit=60)
    store.record(ada.id, "check", at=20)
    assert got.wait(5), heard
    time.sleep(0.1)
    stop()
    assert ("learner", ada.id) in heard and ("event", 1) in heard
    store.close()
    other.close()
    if other_place is not classes:
        other_place.close()


def test_concurrent_writers_get_distinct_increasing_numbers(where, classes):
    store = classes.create("c", state={}, now=1)
    ada = store.join("Ada", "ada", "k1", 10, limit=60)
    others = [where() for _ in range(2)] if isinstance(classes, PostgresClasses) else [classes, classes]
    stores = [o.open("c") for o in others]
    seqs: list[int] = []
    lock = threading.Lock()

    def write(s):
        for i in range(25):
            e = s.record(ada.id, "check", at=i)
            with lock:
                seqs.append(e.seq)

    threads = [threading.Thread(target=write, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seqs) == list(range(1, 51))
    assert [e.seq for e in store.events()] == list(range(1, 51))
    for s in stores:
        s.close()
    for o in others:
        if o is not classes:
            o.close()
    store.close()


def test_deleting_a_class_removes_it_and_its_data(classes, tmp_path):
    store = classes.create("c", state={}, now=1)
    ada = store.join("Ada", "ada", "k1", 10, limit=60)
    store.record(ada.id, "check", at=20, part="notebook", study={"v": 1})
    classes.delete(store)
    with pytest.raises(NoSuchClass):
        classes.open("c")
    assert classes.names() == []
    if isinstance(classes, SqliteClasses):
        assert list((tmp_path / "classes").iterdir()) == []
    else:
        with classes.db.transaction() as c:
            assert c.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
            assert c.execute("SELECT COUNT(*) FROM learners").fetchone()[0] == 0


def test_sqlite_is_in_wal_mode_with_full_sync(tmp_path):
    store = SqliteClasses(tmp_path).create("c", state={}, now=1)
    with store.db.transaction() as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert c.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert c.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    store.close()


def test_the_store_imports_nothing_from_lab_web_or_cli():
    import ast
    from pathlib import Path

    import attnlab.classroom_store as package

    for path in Path(package.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            for name in names:
                assert not name.startswith(("attnlab.lab", "attnlab.web", "attnlab.cli", "attnlab.models")), (
                    path.name, name)
