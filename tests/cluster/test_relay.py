"""The PostgreSQL relay in one process, on a real database (issue 17): the
NOTIFY payload carries the event when it fits, so the next version is
published with no query; an event too large for it, a notification lost or
arriving while a read runs, is read from the log; a duplicate is dropped.
The subscriber sees every version once, in order, whatever the path."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from a2a_grpc.cluster._bus import ClusterBus, EventRelay, PgEventRelay
from a2a_grpc.cluster._store import (
    NOTIFY_LIMIT,
    ClusterStore,
    control_message,
    notification,
    parse_control,
    parse_notification,
)
from a2a_grpc.context import Owner
from a2a_grpc.core._events import Subscription
from a2a_grpc.core.ports import TaskWrite
from a2a_grpc.types import pb
from tests.cluster.replicas import drop_database, fresh_database
from tests.store.storekit import PG_URL, make_task, postgres_skip_reason

pytestmark = [pytest.mark.postgres]

OWNER = Owner("acme", "alice")


KEY = (OWNER.tenant, OWNER.user, "t")


def test_notification_round_trip() -> None:
    for key in (KEY, ("", "", "a:b:c"), ("t:1", "iss|sub:x", "tâche-ü"), ("", "u", "x" * 200)):
        event = b"\x00\xff" * 50
        assert parse_notification(notification(key, 7, event)) == (key, 7, event)
        assert parse_notification(notification(key, 8, b"")) == (key, 8, None)
    # The largest event that fits, and one byte more: left out, the row has it.
    tail = len("12::4:5:acmealicet")
    fits = (NOTIFY_LIMIT - tail) // 4 * 3
    assert len(notification(KEY, 12, b"e" * fits).encode()) <= NOTIFY_LIMIT
    assert parse_notification(notification(KEY, 12, b"e" * (fits + 1))) == (KEY, 12, None)
    assert parse_notification(notification(("", "", "tâche"), 3, b"e" * 10_000)) == (
        ("", "", "tâche"),
        3,
        None,
    )
    for bad in ("t:5", "", "x:abc:t", "5:not base64!:0:0:t", "5:QUJD:0:0:", "5::4:5:acme", "5::x:0:t"):
        with pytest.raises(ValueError):
            parse_notification(bad)


def test_control_round_trip() -> None:
    for key in (KEY, ("", "", "a:b"), ("t:1", "iss|sub:x", "tâche")):
        assert parse_control(control_message("cancel", key)) == ("cancel", key)
    for bad in ("cancel:t", "cancel:0:0:", "cancel"):
        with pytest.raises(ValueError):
            parse_control(bad)


def _chunk(text: str) -> pb.StreamResponse:
    event = pb.StreamResponse()
    event.artifact_update.task_id = "t"
    event.artifact_update.artifact.artifact_id = "out"
    event.artifact_update.artifact.parts.add(text=text)
    return event


def _done() -> pb.StreamResponse:
    event = pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(task_id="t"))
    event.status_update.status.state = pb.TASK_STATE_COMPLETED
    return event


def _count_reads(relay: Any) -> list[int]:
    """Makes ``relay`` note the version after which each of its log reads starts."""
    reads: list[int] = []
    read = relay._events_after

    async def counted(key: Any, after: int) -> list[tuple[int, pb.StreamResponse, bool]]:
        reads.append(after)
        return await read(key, after)

    relay._events_after = counted
    return reads


@pytest.fixture
async def relay() -> AsyncIterator[tuple[ClusterStore, PgEventRelay, list[int]]]:
    """A store on a fresh database and a started relay; the list counts its log reads."""
    reason = await postgres_skip_reason()
    if reason:
        pytest.skip(reason)
    url = await fresh_database(PG_URL)
    store = ClusterStore(url)
    await store.open()
    relay = PgEventRelay(store, ClusterBus(), name="test")
    reads = _count_reads(relay)
    await relay.start()
    try:
        yield store, relay, reads
    finally:
        await relay.stop()
        await store.close()
        await drop_database(PG_URL, url)


async def test_every_version_once_in_order(relay: tuple[ClusterStore, PgEventRelay, list[int]]) -> None:
    store, relay_, reads = relay
    sub = relay_.bus.subscribe(KEY)
    got: list[tuple[int, pb.StreamResponse]] = []
    arrived: asyncio.Queue[None] = asyncio.Queue()

    async def collect() -> None:
        async for version, event in sub:
            got.append((version, event))
            arrived.put_nowait(None)

    async def until(n: int) -> None:
        while len(got) < n:
            await asyncio.wait_for(arrived.get(), 10)

    collector = asyncio.create_task(collect())
    task = make_task("t")
    sent = {1: pb.StreamResponse(task=task)}
    await store.update(TaskWrite(task, OWNER))  # v1: its payload
    sent[2] = _chunk("small")
    await store.update(TaskWrite(task, OWNER, 1, events=(sent[2],)))  # v2: payload
    await until(2)
    assert reads == []  # both from the payloads: no query

    sent[3], sent[4] = _chunk("x" * (NOTIFY_LIMIT + 100)), _chunk("after the large one")
    # v3 too large for the payload (a read), v4 committed with it: its payload
    # arrives while the read runs and must not overtake v3.
    await asyncio.gather(
        store.update(TaskWrite(task, OWNER, 2, events=(sent[3],))),
        store.update(TaskWrite(task, OWNER, 3, events=(sent[4],))),
    )
    await until(4)

    store.notify_in_transaction = False  # v5's notification is lost
    sent[5] = _chunk("unannounced")
    await store.update(TaskWrite(task, OWNER, 4, events=(sent[5],)))
    store.notify_in_transaction = True
    await _notify(store, notification(KEY, 2, _chunk("a duplicate of v2").SerializeToString()))
    sent[6] = _chunk("after the gap")
    await store.update(TaskWrite(task, OWNER, 5, events=(sent[6],)))  # version 6 > 4 + 1: read 5 and 6
    sent[7] = _done()
    await store.update(TaskWrite(task, OWNER, 6, events=(sent[7],)))
    await asyncio.wait_for(collector, 10)
    assert got == sorted(sent.items())
    # v3 (with v4, or v4 again if it came during the read), then the gap,
    # read from the last version delivered.
    assert reads[0] == 2 and reads[-1] == 4 and set(reads) == {2, 4}


async def test_a_new_subscriber_reads_what_it_missed(
    relay: tuple[ClusterStore, PgEventRelay, list[int]],
) -> None:
    """The first notification a new subscriber's replica hears is beyond
    version 1: the relay reads the log from the start, then goes on from the
    payloads (the subscriber drops what its snapshot holds)."""
    store, relay_, reads = relay
    task = make_task("t")
    await store.update(TaskWrite(task, OWNER))
    await store.update(TaskWrite(task, OWNER, 1, events=(_chunk("before"),)))
    await _drained(store, relay_)  # v1 and v2 heard with nobody subscribed
    sub = relay_.bus.subscribe(KEY)
    await store.update(TaskWrite(task, OWNER, 2, events=(_chunk("first heard"),)))
    # The read it makes delivers 1..3 before v4 commits (v4 committed during
    # that read would be beyond the next version too, and read again).
    versions = [(await anext(sub))[0] for _ in range(3)]
    await store.update(TaskWrite(task, OWNER, 3, events=(_done(),)))
    versions += [v async for v, _ in sub]
    assert versions == [1, 2, 3, 4]
    assert reads == [0]


async def _drained(store: ClusterStore, relay: PgEventRelay) -> None:
    """Returns once the relay has heard every notification committed so far
    (they arrive in commit order, the control channel's among them)."""
    heard = asyncio.Event()
    marker = ("", "", "marker")
    relay.on_cancel = lambda key: heard.set() if key == marker else None
    await store.send_control(control_message("cancel", marker))
    await asyncio.wait_for(heard.wait(), 10)
    relay.on_cancel = None


async def _notify(store: ClusterStore, payload: str) -> None:
    conn = await asyncpg.connect(store.url.set(drivername="postgresql").render_as_string(hide_password=False))
    try:
        await conn.execute("SELECT pg_notify($1, $2)", store.channel, payload)
    finally:
        await conn.close()


async def test_redis_entries_carry_the_events() -> None:
    """The Redis relay: one stream entry per event (several events in one
    write each get theirs, with its version), the event in it unless too
    large; the subscriber sees every version once, in order."""
    reason = await postgres_skip_reason()
    if reason:
        pytest.skip(reason)
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=2).close()
    except OSError as exc:
        pytest.skip(f"Redis not reachable: {exc}")
    from a2a_grpc.cluster._redis_bus import RedisEventRelay

    url = await fresh_database(PG_URL)
    store = ClusterStore(url, table_prefix=f"r{uuid.uuid4().hex[:8]}_")
    await store.open()
    relay = RedisEventRelay(store, ClusterBus(), "redis://127.0.0.1:6379", name="test", sweep_seconds=60)
    reads = _count_reads(relay)
    await relay.start()
    try:
        sub = relay.bus.subscribe(KEY)
        task = make_task("t")
        sent = {1: pb.StreamResponse(task=task), 2: _chunk("a"), 3: _chunk("b")}
        await store.update(TaskWrite(task, OWNER))
        await store.update(
            TaskWrite(task, OWNER, 1, events=(sent[2], sent[3]))
        )  # one write, versions 2 and 3
        sent[4], sent[5] = _chunk("x" * (NOTIFY_LIMIT + 1)), _done()
        await store.update(TaskWrite(task, OWNER, 3, events=(sent[4],)))
        await store.update(TaskWrite(task, OWNER, 4, events=(sent[5],)))
        got = await asyncio.wait_for(_all(sub), 10)
    finally:
        await relay.stop()
        await store.close()
        await drop_database(PG_URL, url)
    assert got == sorted(sent.items())
    assert reads[0] == 3  # only the large one was read (with v5, or v5 again)


async def _all(sub: Subscription) -> list[tuple[int, pb.StreamResponse]]:
    return [item async for item in sub]


async def test_a_task_of_another_owner_with_the_same_id_is_another_task() -> None:
    """The relay and the bus key tasks by owner and id: a stranger's task of
    the same id gets its own events and cancels, and ends nobody else's stream."""
    bus = ClusterBus()
    relay = EventRelay(ClusterStore(PG_URL), bus)  # (nothing connects: the payloads carry the events)
    stranger = ("acme", "mallory", "t")
    mine, theirs = bus.subscribe(KEY), bus.subscribe(stranger)
    relay.notified(stranger, 1, _chunk("theirs").SerializeToString())
    relay.notified(stranger, 2, _done().SerializeToString())  # their task ends: their stream ends
    assert bus.subscriber_count(KEY) == 1 and bus.delivered(KEY) == 0
    relay.notified(KEY, 1, _chunk("mine").SerializeToString())
    relay.notified(KEY, 2, _done().SerializeToString())
    assert [(v, e.WhichOneof("payload")) async for v, e in theirs] == [
        (1, "artifact_update"),
        (2, "status_update"),
    ]
    got = [e async for _v, e in mine]
    assert got[0].artifact_update.artifact.parts[0].text == "mine" and len(got) == 2
    canceled: list[object] = []
    relay.on_cancel = canceled.append
    relay.control(control_message("cancel", stranger))
    assert canceled == [stranger]
