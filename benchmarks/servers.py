"""Start and stop the servers the web benchmarks measure: the lab and the floor app.

Shared by ``bench_lab.py`` and ``bench_load.py``. Both servers run as their
own processes on loopback, so the client's work never shares their GIL.
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOOR_APP = Path(__file__).resolve().parent / "floor_app.py"
# The explorer's worked example: the state a drag update starts from.
STATE = {
    "q": [2.0, 1.0],
    "keys": [[-1.0, 2.0], [1.0, 0.0], [0.0, 1.0]],
    "values": [[2.0, 0.0], [0.0, 2.0], [-1.0, -1.0]],
    "labels": ["A", "B", "C"],
    "allowed": [True, True, True],
    "scale": None,
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(xs: list[float], p: float) -> float:
    """The p-th percentile of ``xs`` (nearest rank)."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def _wait_until_answering(proc: subprocess.Popen, port: int, path: str) -> None:
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", path)
            conn.getresponse().read()
            conn.close()
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"the server on port {port} exited") from None
            time.sleep(0.005)


def start_lab(port: int) -> tuple[subprocess.Popen, float]:
    """Start ``attnlab serve``; return it and the seconds until it answered GET /api/example."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "attnlab", "serve", "--no-browser", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    _wait_until_answering(proc, port, "/api/example")
    return proc, time.perf_counter() - t0


def start_floor(port: int) -> subprocess.Popen:
    """Start the minimal ASGI app (``floor_app.py``), served the way the lab is."""
    proc = subprocess.Popen(
        [sys.executable, str(FLOOR_APP), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    _wait_until_answering(proc, port, "/")
    return proc


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def rss_mib(pid: int) -> float:
    """Resident memory of process ``pid`` and its children, in MiB (Linux /proc)."""
    total = 0
    for p in [pid, *_children(pid)]:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The parent pid is the 2nd field after the parenthesised command name.
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            found.append(int(entry))
    return found
