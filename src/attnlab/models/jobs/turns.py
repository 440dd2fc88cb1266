"""Who a model job is for, and the order the line serves them in: clients in turn.

A :class:`Client` is an address (a learner's computer: the remote address of its
requests) and a session on it (a page's tab, a learner of a class, a socket: any key a
route gives; ``""`` when it gives none). :class:`Turns` holds the waiting jobs and picks the
next one so that a client with thirty jobs waiting does not delay another's first:

- addresses take turns: the address served least recently goes first, and one never served
  (or not for a long while) before any that has been, so a new learner's first job is next
  whatever another has queued;
- within an address, its sessions take turns the same way;
- within a session, its jobs go first come, first served.

A job wanted by several clients (identical requests share one job) waits in each one's
queue and is served at the first of their turns. Not thread-safe by itself: the line calls
it under its lock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

REMEMBER = 4096  # addresses (and sessions) whose last turn is remembered; the oldest are forgotten


@dataclass(frozen=True)
class Client:
    """Who asked: ``address`` (a computer) and ``session`` (a page's tab, a learner, a socket on it)."""

    address: str
    session: str = ""


LOCAL = Client("local")  # a caller in this process (a test, a notebook): one client like any other


class Turns:
    """Waiting jobs by address and session, taken in turn (see the module)."""

    def __init__(self, *, remember: int = REMEMBER) -> None:
        self._remember = remember
        self._queues: dict[str, dict[str, deque]] = {}  # address -> session -> jobs, oldest first
        self._last: dict[str, int] = {}  # address -> the tick of its last turn
        self._last_session: dict[Client, int] = {}
        self._tick = 0
        self._waiting: dict[int, object] = {}  # id(job) -> job, each once however many clients want it
        self._order: list | None = None  # order()'s answer until the next change

    def __len__(self) -> int:
        return len(self._waiting)

    def __contains__(self, job: object) -> bool:
        return id(job) in self._waiting

    def __iter__(self) -> Iterator:
        return iter(list(self._waiting.values()))

    def add(self, job, client: Client) -> None:
        """Put ``job`` in ``client``'s queue (a client joining a waiting job gets a place for it too)."""
        self._order = None
        queue = self._queues.setdefault(client.address, {}).setdefault(client.session, deque())
        if job not in queue:
            queue.append(job)
        self._waiting[id(job)] = job

    def remove(self, job) -> bool:
        """Take ``job`` out of every queue; whether it was waiting."""
        if self._waiting.pop(id(job), None) is None:
            return False
        self._order = None
        for address, sessions in list(self._queues.items()):
            for session, queue in list(sessions.items()):
                if job in queue:
                    queue.remove(job)
                    if not queue:
                        del sessions[session]
            if not sessions:
                del self._queues[address]
        return True

    def take(self, eligible: Callable[[object, Client], bool] | None = None):
        """The next job in turn (``eligible(job, client)``: only such jobs), out of the line; ``None``
        when none waits. Its client's address and session are marked as just served."""
        found = _next(self._queues, self._last, self._last_session, eligible)
        if found is None:
            return None
        job, client = found
        self.remove(job)
        self.served(client)
        return job

    def served(self, client: Client) -> None:
        """Mark ``client`` (its address and its session) as served now."""
        self._order = None
        self._tick += 1
        self._last[client.address] = self._tick
        self._last_session[client] = self._tick
        for marks in (self._last, self._last_session):
            while len(marks) > self._remember:
                del marks[min(marks, key=marks.get)]

    def order(self) -> list:
        """Every waiting job in the order they would be taken if nothing else came."""
        if self._order is None:
            self._order = self._simulated()
        return list(self._order)

    def _simulated(self) -> list:
        queues = {a: {s: deque(q) for s, q in sessions.items()} for a, sessions in self._queues.items()}
        last, last_session, tick = dict(self._last), dict(self._last_session), self._tick
        out, seen = [], set()
        while (found := _next(queues, last, last_session, None)) is not None:
            job, client = found
            for sessions in queues.values():
                for queue in sessions.values():
                    if job in queue:
                        queue.remove(job)
            for a in [a for a, sessions in queues.items() if not any(sessions.values())]:
                del queues[a]
            tick += 1
            last[client.address] = last_session[client] = tick
            if id(job) not in seen:
                seen.add(id(job))
                out.append(job)
        return out

    def waiting(self, address: str) -> int:
        """How many jobs wait in ``address``'s queues (a job wanted by two of its sessions counts once)."""
        return len({id(job) for queue in self._queues.get(address, {}).values() for job in queue})


def _next(queues: dict, last: dict, last_session: dict, eligible) -> tuple[object, Client] | None:
    """The job whose turn it is and the client it is taken for (see the module), or ``None``."""

    def turn(address: str) -> int:
        return last.get(address, -1)

    for address in sorted(queues, key=turn):  # sorted() is stable: arrival order breaks ties
        sessions = queues[address]
        for session in sorted(sessions, key=lambda s, a=address: last_session.get(Client(a, s), -1)):
            client = Client(address, session)
            for job in sessions[session]:
                if eligible is None or eligible(job, client):
                    return job, client
    return None
