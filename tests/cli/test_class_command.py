"""`attnlab class` and `attnlab serve --class` through the real parser and entry point."""

from __future__ import annotations

import os
import subprocess
import sys

from attnlab.classroom_store import SqliteClasses
from attnlab.cli import build_parser


def run(*args: str, data) -> subprocess.CompletedProcess:
    env = {**os.environ, "ATTNLAB_DATA_DIR": str(data)}
    command = [sys.executable, "-m", "attnlab", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)


def test_the_class_options_parse_on_both_commands():
    parser = build_parser()
    args = parser.parse_args(
        ["class", "--resume", "physics-7", "--database", "postgresql://x/y", "--port", "0"])
    assert (args.command, args.name, args.resume, args.database, args.port) == (
        "class", "physics-7", True, "postgresql://x/y", 0)
    args = parser.parse_args(["serve", "--class", "physics-7", "--resume"])
    assert (args.class_name, args.resume, args.database) == ("physics-7", True, None)
    assert parser.parse_args(["serve"]).class_name is None


def test_list_shows_the_classes_kept_here(tmp_path):
    done = run("class", "--list", data=tmp_path)
    assert done.returncode == 0 and done.stdout == "No classes are kept here yet.\n"
    classes = SqliteClasses(tmp_path / "classes")
    store = classes.create("physics-7", state={}, now=1)
    store.join("Ada", "ada", "k", 2, limit=60)
    store.close()
    ended = classes.create("chem-1", state={}, now=1)
    ended.end(3)
    ended.close()
    done = run("class", "--list", data=tmp_path)
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["chem-1  0 learners  ended", "physics-7  1 learner  open"]


def test_help_names_the_command():
    done = run("--help", data=".")
    assert "class" in done.stdout
    assert "--resume" in run("class", "--help", data=".").stdout
