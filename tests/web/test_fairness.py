"""Fair shares (web/fairness.py): a client past its budget is slowed, never anyone else.

Deterministic: the clock is the test's, every call "costs" what the test says (an injected
CPU meter) and a socket's wait is the test's gate. Nothing here is timed.
"""

from __future__ import annotations

import json
import math
import threading

import anyio
import pytest
from fastapi.testclient import TestClient

from attnlab.lab.explorer.sequence import STARTING
from attnlab.lab.fields import over_share
from attnlab.web.app import create_app
from attnlab.web.explorer.socket import Latest, _read, answer_latest
from attnlab.web.fairness import Budget, Client, Shares, early_refusal, refusal

WORKED = {"q": [2, 1], "keys": [[-1, 2], [1, 0], [0, 1]], "values": [[2, 0], [0, 2], [-1, -1]]}
WAIT_S = 60  # only a bound on a hang


class Clock:
    """The test's clock: it moves only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Costs:
    """A CPU meter under which every call costs ``cost`` seconds (read twice per call: before and after)."""

    def __init__(self, cost: float) -> None:
        self.cost, self.reads = cost, 0

    def __call__(self) -> float:
        self.reads += 1
        return (self.reads // 2) * self.cost


UNSPLIT = {"total": math.inf, "hold_s": 0.0}  # each address its own budget, however many are busy


def shares(*, connection: Budget, address: Budget, clock: Clock | None = None, **kw) -> Shares:
    """Budgets under which every call costs 2 CPU seconds and reading costs nothing (not split)."""
    clock = clock or Clock()
    free = {"message_s": 0.0, "byte_s": 0.0}
    return Shares(connection=connection, address=address, clock=clock, cpu=Costs(2.0), **free,
                  **{**UNSPLIT, **kw})  # fmt: skip


def client_at(app, host: str, port: int) -> TestClient:
    """A client from ``host``: a computer on the network, not the process itself."""
    return TestClient(app, base_url="http://localhost", client=(host, port))


def post(c: TestClient, state: dict = WORKED):
    return c.post("/api/trace", json=state)


def test_an_address_past_its_budget_gets_429_with_retry_after_while_another_is_served():
    clock = Clock()
    app = create_app(shares=shares(connection=Budget(rate=10, burst=100), address=Budget(rate=0.5, burst=1),
                                   clock=clock))  # fmt: skip
    first = client_at(app, "10.0.0.1", 1001)
    assert post(first).status_code == 200  # charged 2 s: the address is 1 s in debt
    refused = post(client_at(app, "10.0.0.1", 1002))  # another connection, the same computer
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "2"  # 1 s of debt at 0.5 s a second
    assert refused.json() == {"detail": [{
        "loc": ["body"], "field": "body", "type": "over_share",
        "msg": "This computer has asked for more than its share of the server's time: try again in 2 seconds",
    }]}  # fmt: skip
    assert post(client_at(app, "10.0.0.2", 1001)).status_code == 200  # another computer is served
    clock.now += 2  # the debt is paid
    assert post(first).status_code == 200


def test_budgets_are_per_connection_and_per_address():
    app = create_app(shares=shares(connection=Budget(rate=1, burst=1), address=Budget(rate=1, burst=5)))
    page = client_at(app, "10.0.0.1", 1)
    assert post(page).status_code == 200  # its connection 1 s in debt, its address at 3
    again = post(page)
    assert again.status_code == 429 and again.headers["retry-after"] == "1"
    assert again.json()["detail"][0]["msg"] == over_share(1, computer=False)
    assert over_share(1, computer=False) == (
        "This page has asked for more than its share of the server's time: try again in 1 second"
    )
    assert post(client_at(app, "10.0.0.1", 2)).status_code == 200  # a second page: address at 1
    assert post(client_at(app, "10.0.0.1", 3)).status_code == 200  # a third: address 1 s in debt
    fourth = post(client_at(app, "10.0.0.1", 4))
    assert fourth.status_code == 429 and fourth.json()["detail"][0]["msg"] == over_share(1, computer=True)
    assert post(client_at(app, "10.0.0.2", 1)).status_code == 200  # another computer's page


def test_the_state_route_is_budgeted_too_and_a_refusal_calls_no_lab():
    meter = Costs(2.0)
    app = create_app(shares=Shares(connection=Budget(rate=1, burst=1), address=Budget(rate=1, burst=9),
                                   **UNSPLIT,
                                   clock=Clock(), cpu=meter, message_s=0.0, byte_s=0.0))  # fmt: skip
    c = client_at(app, "10.0.0.1", 1)
    body = {"held": STARTING.to_dict()}
    assert c.post("/api/state", json=body).status_code == 200
    reads = meter.reads
    assert c.post("/api/state", json=body).status_code == 429
    assert meter.reads == reads  # nothing measured: the lab was not called


def test_an_in_process_client_has_no_budget():
    tiny = Budget(rate=0.001, burst=0.001)
    app = create_app(shares=shares(connection=tiny, address=tiny))
    with TestClient(app) as c:  # Starlette's TestClient: the process itself
        assert all(post(c).status_code == 200 for _ in range(3))


def test_a_failing_call_is_charged_and_answered_as_before():
    app = create_app(shares=shares(connection=Budget(rate=1, burst=1), address=Budget(rate=1, burst=9)))
    c = client_at(app, "10.0.0.1", 1)
    wide = {**WORKED, "keys": [[-1, 2], [1, 0], [0, 1, 5]]}  # the engine's FieldError: 422 at its field
    r = post(c, wide)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "keys", 2]
    assert post(c).status_code == 429  # the refused call's work was charged all the same


# -- the sockets: coalesced while past the budget, not read from, one call per address at once --------------


def test_a_socket_past_its_budget_waits_and_its_states_are_coalesced(run_async):
    clock, sleeps = Clock(), []
    gate = anyio.Event()

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        await gate.wait()
        clock.now += seconds

    budget = shares(connection=Budget(rate=1, burst=1), address=Budget(rate=10, burst=10), clock=clock,
                    sleep=sleep)  # fmt: skip
    client = Client(address="10.0.0.1", connection=("10.0.0.1", 1))

    async def main() -> tuple[list, int]:
        latest, answered = Latest(), []
        first, second = anyio.Event(), anyio.Event()

        async def send(text: str) -> None:
            answer = json.loads(text)
            assert answer["status"] == 200
            answered.append(answer["body"]["trace"]["q"])
            (first if len(answered) == 1 else second).set()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(answer_latest, send, latest, "trace", budget, client)
            latest.put(json.dumps(WORKED))
            await first.wait()  # answered and charged 2 s: 1 s in debt
            for q in ([1, 0], [2, 0], [3, 0]):  # a flood while in debt
                latest.put(json.dumps({**WORKED, "q": q}))
            while not sleeps:
                await anyio.sleep(0)
            assert len(answered) == 1  # waiting for its budget, not answering
            gate.set()
            await second.wait()
            tasks.cancel_scope.cancel()
        return answered, latest.replaced

    answered, replaced = run_async(main)
    assert sleeps == [1.0]  # 1 s of debt at 1 s a second
    assert answered == [[2, 1], [3, 0]] and replaced == 2  # only the newest state was answered


class FakeSocket:
    """The ASGI side of a socket: ``receive`` hands out text messages, counting the calls."""

    def __init__(self, texts: list[str]) -> None:
        self.texts, self.calls = list(texts), 0

    async def receive(self) -> dict:
        self.calls += 1
        if self.texts:
            return {"type": "websocket.receive", "text": self.texts.pop(0)}
        return {"type": "websocket.disconnect"}


def test_nothing_is_read_from_a_socket_past_its_budget(run_async):
    clock, gate, sleeps = Clock(), anyio.Event(), []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        await gate.wait()
        clock.now += seconds

    budget = Shares(connection=Budget(rate=1, burst=1), address=Budget(rate=1, burst=1), clock=clock,
                    **UNSPLIT,
                    sleep=sleep, message_s=0.5, byte_s=0.25)  # fmt: skip
    client = Client(address="10.0.0.1", connection=("10.0.0.1", 1))

    async def main() -> tuple[int, int]:
        socket, latest = FakeSocket(["a", "b", "c"]), Latest()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read, socket, latest, budget, client)
            while not sleeps:
                await anyio.sleep(0)
            held = socket.calls  # two read (0.5 s and 0.25 s a byte each): 0.5 s in debt, so no third
            gate.set()
        return held, socket.calls

    held, calls = run_async(main)
    assert held == 2 and sleeps[0] == 0.5
    assert calls == 4  # then the rest, and the disconnect


def test_one_address_runs_one_call_at_a_time_and_another_address_is_not_held(run_async):
    budget = Shares(clock=Clock())
    a1 = Client(address="10.0.0.1", connection=("10.0.0.1", 1))
    a2 = Client(address="10.0.0.1", connection=("10.0.0.1", 2))
    b = Client(address="10.0.0.2", connection=("10.0.0.2", 1))
    release, started, done = threading.Event(), threading.Event(), []

    def slow() -> str:
        started.set()
        assert release.wait(WAIT_S)
        return "a1"

    async def call(client: Client, fn, name: str) -> None:
        done.append(await budget.run(client, fn) if fn is slow else await budget.run(client, lambda: name))

    async def main() -> list:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call, a1, slow, "a1")
            while not started.is_set():
                await anyio.sleep(0)
            tasks.start_soon(call, a2, None, "a2")  # the same computer: waits for its one slot
            await call(b, None, "b")  # another computer: answered while a1's call still runs
            seen = list(done)
            release.set()
        return seen

    seen = run_async(main)
    assert seen == ["b"] and done == ["b", "a1", "a2"]


def test_reading_is_charged_by_the_message_and_its_bytes():
    budget = Shares(connection=Budget(rate=1, burst=1), address=Budget(rate=2, burst=1), clock=Clock(),
                    **UNSPLIT,
                    message_s=0.5, byte_s=0.001)  # fmt: skip
    client = Client(address="10.0.0.1", connection=("10.0.0.1", 1))
    budget.read(client, 1_500)  # 0.5 s + 1.5 s: 1 s in debt on both
    assert budget.wait(client) == (1.0, False)  # the connection's debt is the longer wait (1 s a second)
    budget.read(None, 10**9)  # an in-process caller: nothing charged
    assert budget.wait(client) == (1.0, False)


@pytest.mark.parametrize("seconds", [0.2, 1.0, 2.5])
def test_retry_after_is_whole_seconds_never_zero(seconds):
    r = refusal(seconds, computer=False)
    assert r.status_code == 429 and int(r.headers["retry-after"]) == max(1, -(-seconds // 1))



# -- many computers at once: the total split, the heavy lane, refusals before the body --------------


def test_busy_computers_split_the_total_so_eight_take_what_one_would():
    # Before: each address had its own 0.2 s a second however many were busy: eight flooding
    # computers took 1.6 s a second together, and another client's p95 went 363x its idle one.
    clock = Clock()
    budget = Shares(connection=Budget(rate=10, burst=100), address=Budget(rate=0.2, burst=1), total=0.8,
                    min_rate=0.05, active_s=2.0, clock=clock)  # fmt: skip
    one = Client(address="10.0.1.1", connection=("10.0.1.1", 1))
    budget.charge(one, 2.0)  # 1 s in debt
    assert budget.address.rate == 0.2 and budget.wait(one) == (5.0, True)  # alone: 0.2 s a second
    for i in range(2, 9):  # seven more computers at work
        budget.charge(Client(address=f"10.0.1.{i}", connection=(f"10.0.1.{i}", 1)), 0.5)
    assert budget.address.rate == 0.1 and budget.wait(one) == (10.0, True)  # 0.8 split eight ways
    for i in range(9, 41):
        budget.charge(Client(address=f"10.0.1.{i}", connection=(f"10.0.1.{i}", 1)), 0.5)
    assert budget.address.rate == 0.05  # never below the least a person's drag needs
    clock.now += 2.5  # the others went quiet; only the first is charged again
    budget.charge(one, 0.0)
    assert budget.address.rate == 0.2


def test_heavy_calls_take_one_lane_in_turn_by_address_and_small_ones_pass(run_async):
    budget = Shares(clock=Clock(), heavy_bytes=1000, lanes=1)
    gates = {name: threading.Event() for name in ("a1", "b", "c", "a2")}
    order: list[str] = []

    def work(name: str) -> str:
        order.append(name)
        assert gates[name].wait(WAIT_S)
        return name

    def client(address: str, port: int = 1) -> Client:
        return Client(address=address, connection=(address, port))

    async def main() -> list:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: budget.run(client("10.0.0.1"), work, "a1", size=5000))
            while order != ["a1"]:
                await anyio.sleep(0)
            tasks.start_soon(lambda: budget.run(client("10.0.0.1", 2), work, "a2", size=5000))
            for _ in range(20):  # a2 waits for its computer's slot (a1 has it), then for the lane
                await anyio.sleep(0)
            tasks.start_soon(lambda: budget.run(client("10.0.0.2"), work, "b", size=5000))
            tasks.start_soon(lambda: budget.run(client("10.0.0.3"), work, "c", size=5000))
            small = await budget.run(client("10.0.0.4"), lambda: "small", size=200)  # not held by the lane
            assert small == "small" and order == ["a1"]
            for name in ("a1", "b", "c", "a2"):
                while name not in order:
                    await anyio.sleep(0)
                assert order[-1] == name
                gates[name].set()
        return order

    assert run_async(main) == ["a1", "b", "c", "a2"]  # b and c before the first computer's second


def test_a_large_message_is_the_last_one_read_until_it_is_taken(run_async):
    budget = Shares(clock=Clock(), heavy_bytes=10, **UNSPLIT)
    client = Client(address="10.0.0.1", connection=("10.0.0.1", 1))

    async def main() -> tuple[int, int, str]:
        socket, latest = FakeSocket(["x" * 50, "small", "next"]), Latest()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read, socket, latest, budget, client)
            for _ in range(100):
                await anyio.sleep(0)
            held = socket.calls  # the large one read; nothing more until it is taken
            first = await latest.take()
            while socket.calls < 4:
                await anyio.sleep(0)
        return held, len(first), await latest.take()

    held, first, last = run_async(main)
    assert (held, first) == (1, 50)
    assert last == "next"  # the small ones after it were read ahead, the newest replacing the other


def test_a_flood_past_its_budget_is_refused_before_its_body_is_read(run_async):
    clock, slept = Clock(), []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    budget = shares(connection=Budget(rate=10, burst=100), address=Budget(rate=0.5, burst=1), clock=clock,
                    sleep=sleep, hold_s=1.0)  # fmt: skip
    flooder = Client(address="10.0.0.1", connection=("10.0.0.1", 1))
    scope = {"type": "http", "method": "POST", "path": "/api/trace", "client": ("10.0.0.1", 1), "headers": []}
    assert run_async(lambda: early_refusal(budget, scope)) is None  # within its budget: read and answered
    budget.charge(flooder, 3.0)  # 2 s in debt: 4 s at 0.5 s a second
    refused = run_async(lambda: early_refusal(budget, scope))
    assert refused.status_code == 429 and refused.headers["retry-after"] == "4" and slept == [1.0]
    assert run_async(lambda: early_refusal(budget, {**scope, "path": "/api/example"})) is None
    assert run_async(lambda: early_refusal(budget, {**scope, "client": ("testclient", 50000)})) is None
    app = create_app(shares=budget)
    answer = client_at(app, "10.0.0.1", 2).post("/api/trace", json=WORKED)
    assert answer.status_code == 429 and answer.headers["connection"] == "close"
