"""A real JupyterLab server for the notebook widgets' browser tests.

The fixtures built on it live in ``conftest.py`` (next to this file); the page side
(a notebook open in Chromium, what it requested) is in ``notebookpage.py``.

- :class:`JupyterLab`: ``python -m jupyter lab`` from this interpreter (the project's
  venv) on a free 127.0.0.1 port with a random token, in a folder of its own: root
  dir, config, data, runtime, IPython, settings and workspaces all in a temporary
  folder, so the user's Jupyter set-up is never read or written. Its only kernel is
  this interpreter (a ``python3`` kernelspec written into its data dir, which comes
  first on Jupyter's path). News, update checks and PyPI extension lookups are off.

Its kernels inherit ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1``: model files
come from the installed packages only. :meth:`JupyterLab.stop` shuts the server
down through its API (which shuts every kernel down), then kills whatever of it,
and of its kernels, is left, and copies its log to ``test-artifacts/jupyter-server.log``
(``jupyter-server-gw0.log`` and so on under pytest-xdist: one a worker).

A port another process took between :func:`free_port` and the server's bind (an xdist
worker's server, say) makes the server exit at once (``port_retries=0``): :meth:`JupyterLab.start`
then tries again on a new free port, up to three times.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

KERNEL_NAME = "Python 3 (attnlab tests)"  # our kernelspec's name, as JupyterLab shows it
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# one log a test process: two xdist workers never write the same file
_WORKER = f"-{os.environ['PYTEST_XDIST_WORKER']}" if os.environ.get("PYTEST_XDIST_WORKER") else ""
_PORT_TRIES = 3

# Settings written into the server's own settings dir: never ask about, or fetch,
# Jupyter's news, and never look for updates (both would reach jupyter.org).
_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


# Straight to 127.0.0.1, whatever HTTP(S)_PROXY the environment sets.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class JupyterLab:
    """A JupyterLab 4 server in a subprocess, in a temporary folder of its own.

    ``app="notebook"`` starts ``jupyter notebook`` (Notebook 7) instead, with the
    same isolation, token, kernelspec and flags (Notebook 7 loads JupyterLab's
    server extension, so the ``LabApp`` options apply to it too).
    """

    def __init__(self, app: str = "lab") -> None:
        self.app = app
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.home = Path(tempfile.mkdtemp(prefix="attnlab-jupyter-"))
        self.root = self.home / "root"
        self.log_path = self.home / "server.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def _env(self) -> dict[str, str]:
        dirs = {
            "JUPYTER_CONFIG_DIR": "config",
            "JUPYTER_DATA_DIR": "data",
            "JUPYTER_RUNTIME_DIR": "runtime",
            "IPYTHONDIR": "ipython",
            "JUPYTERLAB_SETTINGS_DIR": "settings",
            "JUPYTERLAB_WORKSPACES_DIR": "workspaces",
        }
        # JUPYTER_PREFER_ENV_PATH=0: our folders come before the venv's on Jupyter's
        # paths (in a venv the venv's come first by default), so our kernelspec wins.
        env = {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "JUPYTER_PLATFORM_DIRS": "1",
            "JUPYTER_PREFER_ENV_PATH": "0",
        }
        env.pop("JUPYTER_PATH", None)  # no other data dirs: only ours, then the venv's
        env.pop("JUPYTER_CONFIG_PATH", None)
        for name, folder in dirs.items():
            (self.home / folder).mkdir(parents=True, exist_ok=True)
            env[name] = str(self.home / folder)
        # The kernel inherits these: the model files are read from the installed
        # package, never from the Hugging Face hub.
        env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
        return env

    def _write_kernelspec_and_settings(self, env: dict[str, str]) -> None:
        # JUPYTER_DATA_DIR comes first on Jupyter's path, so this python3 kernelspec
        # wins over any other: the kernel is this very interpreter, by absolute path.
        kernel = Path(env["JUPYTER_DATA_DIR"]) / "kernels" / "python3"
        kernel.mkdir(parents=True, exist_ok=True)
        spec = {
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": KERNEL_NAME,
            "language": "python",
        }
        (kernel / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
        for name, values in _SETTINGS.items():
            path = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values), encoding="utf-8")

    def start(self) -> JupyterLab:
        self.root.mkdir(parents=True, exist_ok=True)
        env = self._env()
        self._write_kernelspec_and_settings(env)
        for attempt in range(_PORT_TRIES):
            try:
                self._start(env)
                return self
            except RuntimeError:
                if attempt + 1 == _PORT_TRIES or "already in use" not in self.log():
                    raise
                self.port = free_port()  # another process took it: a new one
        return self

    def _start(self, env: dict[str, str]) -> None:
        command = [
            sys.executable, "-m", "jupyter", self.app,
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",  # fail rather than move to a port we do not know
            f"--IdentityProvider.token={self.token}",
            "--allow-root",  # CI runs the tests as root
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",  # no PyPI look-ups
        ]  # fmt: skip
        log = self.log_path.open("w", encoding="utf-8")
        # A session of its own, so stop() can end the server and its kernels together.
        self.proc = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.root, start_new_session=True
        )
        log.close()
        self._wait_ready()

    def _wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited before it was ready:\n{self.log()}")
            try:
                with _DIRECT.open(self.api_url("api/status"), timeout=5) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.25)  # polling a subprocess's readiness, not a test's timing
        raise RuntimeError(f"JupyterLab was not ready after {timeout:.0f} s:\n{self.log()}")

    def api_url(self, path: str) -> str:
        return f"{self.url}{path}?token={self.token}"

    def api(self, method: str, path: str):
        request = urllib.request.Request(self.api_url(path), method=method)
        with _DIRECT.open(request, timeout=30) as answer:
            body = answer.read()
        return json.loads(body) if body else None

    def lab_url(self, notebook: str, workspace: str) -> str:
        return f"{self.url}lab/workspaces/{workspace}/tree/{notebook}?token={self.token}"

    def shutdown_kernels_of(self, path: str) -> None:
        """Shut down the kernel of every session on notebook ``path``."""
        for session in self.api("GET", "api/sessions"):
            if session.get("path") == path:
                self.api("DELETE", f"api/sessions/{session['id']}")

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def _children(self) -> list[int]:
        """The server's child processes (its kernels), from /proc."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # it ended while we looked
            if int(fields[1]) == self.proc.pid:
                found.append(int(stat.parent.name))
        return found

    def _ours(self, pid: int) -> bool:
        """True while ``pid`` is still one of our kernels (its connection file is in our folder)."""
        try:
            return str(self.home) in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            return False  # it has ended

    def stop(self) -> None:
        """Shut the server and every kernel down, then remove the temporary folder."""
        kernels = self._children() if self.proc else []
        if self.proc and self.proc.poll() is None:
            try:
                self.api("POST", "api/shutdown")  # also shuts every kernel down
                self.proc.wait(timeout=30)
            except (urllib.error.URLError, ConnectionError, TimeoutError, subprocess.TimeoutExpired):
                pass
        if self.proc:
            # Whatever is left (a stuck server or kernel): end the server's process
            # group, and each kernel it started (kernels run in sessions of their own).
            for pid in kernels:
                if self._ours(pid):
                    os.kill(pid, signal.SIGKILL)
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=30)
        self.proc = None
        ARTIFACTS.mkdir(exist_ok=True)
        if self.log_path.exists():
            app = "" if self.app == "lab" else f"-{self.app}"
            log_name = f"jupyter{app}-server{_WORKER}.log"
            shutil.copy(self.log_path, ARTIFACTS / log_name)
        shutil.rmtree(self.home, ignore_errors=True)
