"""Clients in turn (models/jobs/turns.py): the order the line serves waiting jobs in. No worker, no timing."""

from __future__ import annotations

from attnlab.models.jobs.turns import Client, Turns


class Job:
    """A waiting job: only its name matters here."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def names(jobs) -> list[str]:
    return [job.name for job in jobs]


def queued(turns: Turns, client: Client, *jobs: str) -> list[Job]:
    made = [Job(name) for name in jobs]
    for job in made:
        turns.add(job, client)
    return made


A, B, C = Client("10.0.0.1"), Client("10.0.0.2"), Client("10.0.0.3")


def test_thirty_jobs_of_one_client_do_not_delay_anothers_first():
    # Before: one line, first come first served: B's trace waited behind A's thirty.
    turns = Turns()
    queued(turns, A, *(f"a{i}" for i in range(30)))
    turns.served(A)  # A's job before these is running: A has had its turn
    queued(turns, B, "b0")
    assert names(turns.order())[:3] == ["b0", "a0", "a1"]
    assert names([turns.take(), turns.take()]) == ["b0", "a0"]
    assert len(turns) == 29


def test_addresses_take_turns_a_new_one_first_then_sessions_then_each_sessions_order():
    turns = Turns()
    tab1, tab2 = Client("10.0.0.1", "tab1"), Client("10.0.0.1", "tab2")
    queued(turns, tab1, "a1-1", "a1-2", "a1-3")
    queued(turns, B, "b1", "b2")
    queued(turns, tab2, "a2-1")
    # A came first; then B (never served); then A's other tab; then B; then A's first tab again
    assert names(turns.order()) == ["a1-1", "b1", "a2-1", "b2", "a1-2", "a1-3"]
    assert names(turns.take() for _ in range(6)) == ["a1-1", "b1", "a2-1", "b2", "a1-2", "a1-3"]
    assert turns.take() is None and len(turns) == 0


def test_a_client_served_long_ago_goes_before_one_served_just_now():
    turns = Turns()
    turns.served(A)
    turns.served(B)
    queued(turns, B, "b")
    queued(turns, A, "a")
    queued(turns, C, "c")  # never served: first of all
    assert names(turns.order()) == ["c", "a", "b"]


def test_a_shared_job_is_taken_at_the_first_of_its_clients_turns_and_leaves_every_queue():
    turns = Turns()
    a = queued(turns, A, "a1", "a2")
    turns.served(A)
    shared = a[1]
    turns.add(shared, B)  # B asked for the same thing: it waits in B's queue too
    assert len(turns) == 2 and turns.waiting("10.0.0.2") == 1
    assert turns.take() is shared  # B's turn comes first (A was just served)
    assert names(turns.order()) == ["a1"] and turns.waiting("10.0.0.1") == 1


def test_take_skips_what_is_not_eligible_and_remove_takes_a_job_out():
    turns = Turns()
    a1, a2 = queued(turns, A, "a1", "a2")
    (b1,) = queued(turns, B, "b1")
    assert turns.take(lambda job, client: client != A) is b1
    assert turns.take(lambda job, client: job is a2) is a2
    assert turns.remove(a1) and not turns.remove(a1) and len(turns) == 0


def test_order_is_what_take_gives_and_changes_nothing():
    turns = Turns()
    for i, client in enumerate((A, B, C, Client("10.0.0.1", "t"))):
        queued(turns, client, *(f"{i}-{j}" for j in range(3)))
    turns.served(B)
    expected = names(turns.order())
    assert names(turns.order()) == expected  # asking twice changes nothing
    assert names(turns.take() for _ in range(len(turns))) == expected


def test_the_oldest_turns_are_forgotten_past_the_cap():
    turns = Turns(remember=2)
    for client in (A, B, C):
        turns.served(client)
    queued(turns, C, "c")
    queued(turns, A, "a")  # A's turn is forgotten: it counts as never served
    assert names(turns.order()) == ["a", "c"]
