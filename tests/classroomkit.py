"""Test helpers for a class: a throwaway PostgreSQL cluster, and a class served in a subprocess.

``pg_cluster`` (session, one per test process: each pytest-xdist worker starts its own):
``initdb`` and ``pg_ctl`` from Debian's ``postgresql`` package, run as the ``postgres``
user when the tests run as root (initdb refuses root), in a temporary folder that user
owns, on a free port of 127.0.0.1, with trust authentication; stopped and removed at the
end. Skipped, with the reason, only where PostgreSQL is not installed
(``scripts/test.sh`` installs it). ``pg_url`` (function): a fresh database in that
cluster for one test, as a ``postgresql://`` URL.

``ClassServer``: ``attnlab serve --class NAME --no-browser`` through the real entry point,
its data folder a temporary one (``ATTNLAB_DATA_DIR``); it reads the teacher's and the
join addresses from what the command prints.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pg_bin(tool: str) -> str | None:
    found = shutil.which(tool)
    if found:
        return found
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{tool}"))
    return versions[-1] if versions else None


class PgCluster:
    """A PostgreSQL cluster of its own: ``start()``, ``url(database)``, ``stop()``."""

    def __init__(self) -> None:
        self.initdb = _pg_bin("initdb")
        self.pg_ctl = _pg_bin("pg_ctl")
        self.folder: Path | None = None
        self.port = 0

    def _as_postgres(self, args: list[str]) -> list[str]:
        if os.geteuid() != 0:
            return args
        return ["runuser", "-u", "postgres", "--", *args]

    def start(self) -> PgCluster:
        if not (self.initdb and self.pg_ctl):
            pytest.skip("PostgreSQL is not installed (no initdb): scripts/test.sh installs Debian's package")
        self.folder = Path(tempfile.mkdtemp(prefix="attnlab-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        data = self.folder / "data"
        subprocess.run(
            self._as_postgres([self.initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                               "--no-sync"]),
            check=True, capture_output=True, cwd=self.folder,
        )
        for _ in range(5):  # a free port may be taken between the look and the start: try another
            self.port = free_port()
            options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
            done = subprocess.run(
                self._as_postgres([self.pg_ctl, "-D", str(data), "-o", options, "-l",
                                   str(self.folder / "log"), "-w", "-t", "60", "start"]),
                capture_output=True, cwd=self.folder,
            )
            if done.returncode == 0:
                return self
        raise RuntimeError("PostgreSQL did not start: " + (self.folder / "log").read_text(errors="replace"))

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        if self.folder is None:
            return
        subprocess.run(
            self._as_postgres([self.pg_ctl, "-D", str(self.folder / "data"), "-m", "immediate", "stop"]),
            capture_output=True, cwd=self.folder,
        )
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None


@pytest.fixture(scope="session")
def pg_cluster():
    cluster = PgCluster().start()
    yield cluster
    cluster.stop()


@pytest.fixture
def pg_url(pg_cluster) -> str:
    return pg_cluster.create_database()


def worked_held(client) -> dict:
    """The worked A/B/C example, as the page holds it."""
    return client.get("/api/example").json()["sequence"]["example"]


def study(client, action: dict, before: dict | None = None, held: dict | None = None):
    """POST one practice action of the main page, as the page does: ``{held, study, action}``."""
    return client.post("/api/notebook/study", json={
        "held": held or worked_held(client), "study": before or {"version": 1}, "action": action})


def check(client, challenge: str, response=None, before: dict | None = None, held: dict | None = None):
    """Check ``challenge`` with ``response`` (as the page's Check button does); the answer."""
    action = {"kind": "submit", "challenge": challenge}
    if response is not None:
        action["response"] = response
    return study(client, action, before, held)


class ClassServer:
    """``python -m attnlab serve --class NAME --no-browser`` in a subprocess, with its own data folder."""

    def __init__(self, name: str, data_dir: Path, *, database: str | None = None, resume: bool = False,
                 port: int | None = None) -> None:
        self.name = name
        self.data_dir = data_dir
        self.database = database
        self.resume = resume
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None
        self.teacher_url = ""
        self.join_url = ""
        self.lines: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def command(self) -> list[str]:
        args = [sys.executable, "-m", "attnlab", "serve", "--no-browser", "--port", str(self.port),
                "--class", self.name]
        if self.database:
            args += ["--database", self.database]
        if self.resume:
            args.append("--resume")
        return args

    def start(self) -> ClassServer:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "ATTNLAB_DATA_DIR": str(self.data_dir)}
        self.proc = subprocess.Popen(self.command(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=env)
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the class server exited before it was ready: " + "".join(self.lines))
            self.lines.append(line)
            found = re.search(r"(http://\S+/class/teacher\?token=\S+)", line)
            if found:
                self.teacher_url = found.group(1)
            found = re.search(r"(http://\S+/class/join)\b", line)
            if found:
                self.join_url = found.group(1)
            if "the lab is at" in line:
                return self

    @property
    def token(self) -> str:
        return self.teacher_url.partition("token=")[2]

    def kill(self) -> None:
        """``kill -9``: no chance to flush or say goodbye."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=20)
        self._close()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=20)
        self._close()

    def _close(self) -> None:
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()
        self.proc = None

    def __enter__(self) -> ClassServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
