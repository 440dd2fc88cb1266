"""Fair shares of the server's time: the explorer's lab work, measured and budgeted per client.

The explorer's work (``POST /api/trace``, ``POST /api/state`` and their drag sockets
``/api/trace/ws`` and ``/api/state/ws``) runs in worker threads, and each call is
measured: the CPU seconds its own thread spent (``time.thread_time``: its work, not
the time it waited for the GIL). Reading each request or message costs the event
loop too, where it cannot be measured apart: each is charged ``MESSAGE_S`` and
``BYTE_S`` a byte (a 64 x 64 state, 160 kB: 4 ms, what parsing its JSON takes). The cost
is charged twice, to the connection the request came on and to the address it came from
(a learner's computer), each a token bucket of CPU seconds that fills at ``rate`` seconds per
second up to ``burst``. An address's rate is its share: ``ADDRESS.rate`` while few
computers are busy, ``TOTAL_RATE`` split between the addresses charged in the last
``ACTIVE_S`` seconds once there are more, never below ``MIN_RATE`` (a person dragging
takes about 0.06 s a second). So three or eight computers flooding take what one would,
together. A call is charged when it ends, so a bucket can go below zero; a client
whose connection or address is below zero is past its budget until it has refilled,
and only that client is slowed:

- over HTTP it is answered 429 with ``Retry-After`` (whole seconds until it is back),
  the page's sentence at ``body`` (``lab.fields.over_share``), and the lab is not called;
  a request to a budgeted route from a client already past its budget is answered so
  before its body is read (``early_refusal``: the guard calls it), after holding it for
  up to ``HOLD_S``, and its connection closed: a flood of refused bodies costs nothing;
- on a socket nothing more is read from it and its next answer waits until then
  (what it sends meanwhile waits in the network: TCP holds the sender back); states
  read before then replace the one waiting (``socket.Latest``), so a flooding socket's
  states are coalesced. A large message (``HEAVY_BYTES``) is the last one read until
  it is taken to be answered: reading is bounded by answering.

One address runs at most ``ADDRESS_SLOTS`` calls at once (one), the rest waiting in the
order they came, so a backlog from one address never holds more than its worker thread,
and its work never competes with itself for the GIL. And heavy work (a request or
message of at least ``HEAVY_BYTES``: a 64 x 64 state is 160 kB, a drag 200 bytes) runs
at most ``HEAVY_LANES`` calls at once across every client, taken in turn by address, so
however many computers send large states, another client's small call competes with one
of them for the GIL, not with all.

An in-process client (Starlette's TestClient) has no budget: it is the process itself.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
from anyio.to_thread import run_sync
from fastapi import Request
from fastapi.responses import JSONResponse, Response
from starlette.types import Scope

from attnlab.lab.fields import over_share
from attnlab.web.errors import body_error
from attnlab.web.hosts import in_process


@dataclass(frozen=True)
class Budget:
    """A token bucket of CPU seconds: ``rate`` seconds per second of the clock, at most ``burst`` saved."""

    rate: float
    burst: float


# A learner's page dragging costs ~0.17 CPU s/s at 60 updates a second (a ~2 ms state answer and
# its reading), less at the page's usual pace; a 64 x 64 trace ~60 ms: a script gets two or three a
# second. What one computer may take is a fifth of the server's time (its GIL), at most.
CONNECTION = Budget(rate=0.15, burst=1.0)
ADDRESS = Budget(rate=0.2, burst=2.0)
TOTAL_RATE = 0.8  # CPU seconds a second for every address together, once more than four are busy
MIN_RATE = 0.05  # an address's share never goes below this (a person's drag: about 0.06)
ACTIVE_S = 2.0  # an address charged within this long is busy: it counts in the split
ADDRESS_SLOTS = 1  # calls of one address at once: its backlog never holds more than one worker thread
HEAVY_BYTES = 16 * 1024  # a request or message this large is heavy work (about 24 sources of 24 numbers)
HEAVY_LANES = 1  # heavy calls at once, every client together, taken in turn by address
HOLD_S = 1.0  # a request refused before its body is read is answered after at most this long
MESSAGE_S = 0.0002  # the event loop's reading of one request or message, charged as CPU seconds...
BYTE_S = 2.5e-8  # ...and of each of its bytes: a 64 x 64 state's JSON (160 kB) takes ~4 ms to parse
KEPT_CLIENTS = 4096  # buckets kept before the full (idle) ones are forgotten
BUDGETED = frozenset({"/api/trace", "/api/state"})  # the routes whose work is budgeted (``answer``)


class Bucket:
    """One client's CPU seconds in hand (below zero: in debt), as of clock time ``at``."""

    __slots__ = ("at", "balance")

    def __init__(self, budget: Budget, now: float) -> None:
        self.balance = budget.burst
        self.at = now

    def level(self, budget: Budget, now: float) -> float:
        self.balance = min(budget.burst, self.balance + max(0.0, now - self.at) * budget.rate)
        self.at = now
        return self.balance


@dataclass(frozen=True)
class Client:
    """Who asked: an address and one connection from it (its port)."""

    address: str
    connection: tuple[str, int]


class _Slots:
    """At most ``n`` calls of one address at once, granted first come, first served."""

    def __init__(self, n: int) -> None:
        self.limiter = anyio.Semaphore(n)
        self.users = 0


class Lane:
    """At most ``n`` heavy calls at once across every client; waiting ones are let in by address in
    turn (the address that waited first, then the next, ...), each address's own in their order."""

    def __init__(self, n: int) -> None:
        self.free = n
        self._waiting: OrderedDict[str, deque[anyio.Event]] = OrderedDict()

    async def enter(self, address: str) -> None:
        if self.free and not self._waiting:
            self.free -= 1
            return
        turn = anyio.Event()
        self._waiting.setdefault(address, deque()).append(turn)
        try:
            await turn.wait()
        except BaseException:  # cancelled while waiting (its client left): give back a turn it was given
            queue = self._waiting.get(address)
            if queue is not None and turn in queue:
                queue.remove(turn)
                if not queue:
                    del self._waiting[address]
            elif turn.is_set():
                self.leave()
            raise

    def leave(self) -> None:
        """Let the next address's call in (its place passes on), or free the lane."""
        if not self._waiting:
            self.free += 1
            return
        address, queue = next(iter(self._waiting.items()))
        queue.popleft().set()
        del self._waiting[address]
        if queue:
            self._waiting[address] = queue  # its next call waits for every other address's turn


class Shares:
    """The server's budgets: one bucket per connection and one per address, and each address's slots.

    ``clock`` (seconds), ``cpu`` (a thread's CPU seconds) and ``sleep`` are the real ones
    unless a test gives its own; reading a request or message of n bytes is charged
    ``message_s + n * byte_s``; ``total``, ``min_rate`` and ``active_s``: how an address's
    rate shrinks when many are busy; ``heavy_bytes`` and ``lanes``: the heavy lane. Used from
    the event loop only (the calls run in threads).
    """

    def __init__(
        self,
        *,
        connection: Budget = CONNECTION,
        address: Budget = ADDRESS,
        slots: int = ADDRESS_SLOTS,
        clock: Callable[[], float] = time.monotonic,
        cpu: Callable[[], float] = time.thread_time,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        message_s: float = MESSAGE_S,
        byte_s: float = BYTE_S,
        total: float = TOTAL_RATE,
        min_rate: float = MIN_RATE,
        active_s: float = ACTIVE_S,
        heavy_bytes: int = HEAVY_BYTES,
        lanes: int = HEAVY_LANES,
        hold_s: float = HOLD_S,
    ) -> None:
        self.connection, self._address, self.slots = connection, address, slots
        self.message_s, self.byte_s = message_s, byte_s
        self.clock, self.cpu, self.sleep = clock, cpu, sleep
        self.total, self.min_rate, self.active_s = total, min_rate, active_s
        self.heavy_bytes, self.hold_s = heavy_bytes, hold_s
        self.lane = Lane(lanes)
        self._connections: dict[tuple[str, int], Bucket] = {}
        self._addresses: dict[str, Bucket] = {}
        self._slots: dict[str, _Slots] = {}
        self._charged: dict[str, float] = {}  # address -> when it was last charged (the busy ones)

    @property
    def address(self) -> Budget:
        """An address's budget now: its share of ``total`` among the busy addresses (see the module)."""
        now = self.clock()
        for key in [k for k, at in self._charged.items() if now - at > self.active_s]:
            del self._charged[key]
        share = self.total / max(1, len(self._charged))
        return Budget(rate=min(self._address.rate, max(self.min_rate, share)), burst=self._address.burst)

    def client(self, scope: Scope) -> Client | None:
        """The client of an HTTP request or a WebSocket; None for an in-process caller (no budget)."""
        if in_process(scope):
            return None
        host, port = scope.get("client") or ("", 0)
        return Client(address=host, connection=(host, port))

    def wait(self, client: Client) -> tuple[float, bool]:
        """Seconds until ``client`` is within budget again (0: it is), and whether its address is why."""
        now = self.clock()
        own = self._debt(self._connections, client.connection, self.connection, now)
        whole = self._debt(self._addresses, client.address, self.address, now)
        return max(own, whole), whole > 0 and whole >= own

    async def within_budget(self, client: Client | None) -> None:
        """Wait until ``client`` is within its budget (a socket's next answer)."""
        while client is not None and (seconds := self.wait(client)[0]) > 0:
            await self.sleep(seconds)

    async def run(self, client: Client | None, fn: Callable, *args, size: int = 0):
        """Run ``fn(*args)`` in a worker thread in one of the address's slots; charge its CPU seconds.

        ``size``: the bytes of the request or message it answers: from ``heavy_bytes`` on, the call
        also waits for the heavy lane (its turn among every client's heavy calls).
        """
        if client is None:
            return await run_sync(fn, *args)
        slots = self._slots.setdefault(client.address, _Slots(self.slots))
        slots.users += 1
        try:
            async with slots.limiter:
                heavy = size >= self.heavy_bytes
                if heavy:
                    await self.lane.enter(client.address)
                try:
                    result, error, spent = await run_sync(_measured, self.cpu, fn, args)
                finally:
                    if heavy:
                        self.lane.leave()
        finally:
            slots.users -= 1
            if not slots.users:
                del self._slots[client.address]
        self.charge(client, spent)
        if error is not None:
            raise error
        return result

    def read(self, client: Client | None, size: int) -> None:
        """Charge the reading of one request or message of ``size`` bytes (the event loop's part)."""
        if client is not None:
            self.charge(client, self.message_s + size * self.byte_s)

    def charge(self, client: Client, seconds: float) -> None:
        """Take ``seconds`` of CPU from the client's connection and address."""
        now = self.clock()
        self._charged[client.address] = now
        for buckets, key, budget in (
            (self._connections, client.connection, self.connection),
            (self._addresses, client.address, self.address),
        ):
            bucket = buckets.get(key) or buckets.setdefault(key, Bucket(budget, now))
            bucket.level(budget, now)
            bucket.balance -= seconds
            if len(buckets) > KEPT_CLIENTS:
                _forget_full(buckets, budget, now)

    def _debt(self, buckets: dict, key, budget: Budget, now: float) -> float:
        bucket = buckets.get(key)
        if bucket is None:
            return 0.0
        level = bucket.level(budget, now)
        return -level / budget.rate if level < 0 else 0.0


def _measured(cpu: Callable[[], float], fn: Callable, args: tuple) -> tuple:
    """``fn(*args)`` in this thread: (result, the exception it raised or None, CPU seconds spent)."""
    start = cpu()
    try:
        return fn(*args), None, cpu() - start
    except Exception as error:  # noqa: BLE001 - raised again on the loop, once charged
        return None, error, cpu() - start


def _forget_full(buckets: dict, budget: Budget, now: float) -> None:
    """Drop the buckets that are full again: an idle client starts full anyway."""
    for key in [k for k, b in buckets.items() if b.level(budget, now) >= budget.burst]:
        del buckets[key]


def shares_of(scope: Scope) -> Shares:
    """The app's budgets (``create_app`` puts one ``Shares`` on ``app.state``)."""
    return scope["app"].state.shares


def refusal(seconds: float, *, computer: bool) -> JSONResponse:
    """429 for a client past its budget: Retry-After and the page's sentence, in the errors' shape."""
    after = max(1, math.ceil(seconds))
    content = body_error(over_share(after, computer=computer), "over_share")
    return JSONResponse(content, status_code=429, headers={"Retry-After": str(after)})


async def answer(request: Request, fn: Callable[..., bytes], *args) -> Response:
    """A route's JSON answer ``fn(*args)`` (bytes), run in the client's share, or 429 past its budget."""
    shares = shares_of(request.scope)
    client = shares.client(request.scope)
    if client is not None:
        seconds, computer = shares.wait(client)
        if seconds > 0:
            return refusal(seconds, computer=computer)
    size = len(await request.body())  # read already: FastAPI keeps it
    shares.read(client, size)
    return Response(await shares.run(client, fn, *args, size=size), media_type="application/json")


async def early_refusal(shares: Shares, scope: Scope) -> JSONResponse | None:
    """A budgeted request from a client past its budget: its 429, given before its body is read
    (after holding it up to ``hold_s``: a flood of refused bodies costs nothing); else ``None``.

    The guard calls it before it reads a body, and closes the connection after the 429.
    """
    if scope.get("method") != "POST" or scope.get("path") not in BUDGETED:
        return None
    client = shares.client(scope)
    if client is None:
        return None
    seconds, computer = shares.wait(client)
    if seconds <= 0:
        return None
    await shares.sleep(min(seconds, shares.hold_s))
    seconds, computer = shares.wait(client)
    if seconds <= 0:
        return None  # back within its budget while held: answered as usual
    return refusal(seconds, computer=computer)
