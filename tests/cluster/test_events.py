"""Cluster mode, part 2 (issue 12): the durable task-event log and its
PostgreSQL LISTEN/NOTIFY bus, across three replica processes.

SubscribeToTask on any replica follows a task running on another with no
gap and no duplicate (its snapshot, then exactly the events after it), over
every binding; a subscriber of a task whose replica is killed ends with the
takeover's FAILED; a relay whose PostgreSQL session is terminated catches
up from the table; events of terminal tasks are pruned after the retention.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest

from a2a_grpc.client import A2AClient
from a2a_grpc.cluster._store import ClusterStore
from a2a_grpc.context import Owner
from a2a_grpc.core.ports import TaskWrite
from a2a_grpc.types import pb
from tests.cluster.conftest import TTL, cluster_args
from tests.cluster.replicas import BINDINGS, Replica, drop_database, fresh_database
from tests.store.storekit import PG_URL, make_task, postgres_skip_reason

pytestmark = [pytest.mark.slow, pytest.mark.postgres]


def _state(event: pb.StreamResponse) -> int:
    kind = event.WhichOneof("payload")
    if kind == "task":
        return event.task.status.state
    if kind == "status_update":
        return event.status_update.status.state
    return pb.TASK_STATE_UNSPECIFIED


async def _collect(
    client: A2AClient, task_id: str, out: list[pb.StreamResponse], three: asyncio.Event | None = None
) -> None:
    """Subscribes and appends every event to ``out``; sets ``three`` once it
    holds three (the snapshot and two updates)."""
    async for event in client.subscribe_to_task(task_id):
        out.append(event)
        if three is not None and len(out) == 3:
            three.set()


async def _follow(
    stream_on: Replica, subscribe_on: list[Replica], binding: str, text: str, steps: int = 12
) -> None:
    """Streams ``text`` on one replica, subscribes on the others as soon as
    the task exists; every subscriber's events after its snapshot are the
    stream's last events, one for one, ending COMPLETED."""
    c1 = await stream_on.client(binding)
    subs = [await r.client(binding) for r in subscribe_on]
    streamed: list[pb.StreamResponse] = []
    followed: list[list[pb.StreamResponse]] = [[] for _ in subs]
    try:
        followers: list[asyncio.Task[None]] = []
        async for event in c1.send_streaming_message(text):
            streamed.append(event)
            if not followers:
                task_id = event.task.id
                followers = [
                    asyncio.create_task(_collect(c, task_id, out))
                    for c, out in zip(subs, followed, strict=True)
                ]
        await asyncio.wait_for(asyncio.gather(*followers), 10)
    finally:
        for c in (c1, *subs):
            await c.close()
    assert _state(streamed[-1]) == pb.TASK_STATE_COMPLETED
    for events in followed:
        snapshot, tail = events[0], events[1:]
        assert snapshot.WhichOneof("payload") == "task"
        assert len(tail) >= 5  # subscribed early: most of the events came through the bus
        assert tail == streamed[len(streamed) - len(tail) :]
        assert _state(tail[-1]) == pb.TASK_STATE_COMPLETED
        # The snapshot plus the tail is the whole task: no gap.
        chunks = len(snapshot.task.artifacts[0].parts) if snapshot.task.artifacts else 0
        chunks += sum(1 for e in tail if e.WhichOneof("payload") == "artifact_update")
        assert chunks == steps


@pytest.mark.parametrize("binding", BINDINGS)
async def test_subscribe_on_other_replicas(replicas: list[Replica], binding: str) -> None:
    r1, r2, r3 = replicas
    await _follow(r1, [r2, r3], binding, "steps=12 delay=0.05")


async def test_events_beyond_the_payload_limit(replicas: list[Replica]) -> None:
    """Every other chunk too large for a NOTIFY payload (read from the log),
    the others carried by it, 5 ms apart: all arrive, in order, once."""
    r1, r2, r3 = replicas
    await _follow(r1, [r2, r3], "grpc", "steps=40 delay=0.005 big=1", steps=40)


async def test_subscriber_ends_when_its_replica_is_killed(
    replicas: list[Replica], database: str, tmp_path: Path
) -> None:
    victim = Replica("victim", cluster_args(database, "victim"), tmp_path / "v.log").start()
    c2 = await replicas[1].client("rest")
    events: list[pb.StreamResponse] = []
    try:
        cv = await victim.client()
        try:
            resp = await cv.send_message(
                "steps=400 delay=0.05", configuration=pb.SendMessageConfiguration(return_immediately=True)
            )
        finally:
            await cv.close()
        three = asyncio.Event()
        follower = asyncio.create_task(_collect(c2, resp.task.id, events, three))
        await asyncio.wait_for(three.wait(), 10)
        victim.kill()
        await asyncio.wait_for(follower, TTL + TTL / 3 + 3)
    finally:
        victim.stop()
        await c2.close()
    assert _state(events[-1]) == pb.TASK_STATE_FAILED
    assert events[-1].status_update.status.message.parts[0].text.startswith("execution lost: replica victim")


async def test_listener_cut_catches_up(replicas: list[Replica], database: str) -> None:
    """pg_terminate_backend on r2's relay mid-task: the subscriber on r2
    still gets every event, caught up from the table on reconnect."""
    r1, r2, _ = replicas
    c1, c2 = await r1.client(), await r2.client()
    events: list[pb.StreamResponse] = []
    try:
        resp = await c1.send_message(
            "steps=30 delay=0.05", configuration=pb.SendMessageConfiguration(return_immediately=True)
        )
        three = asyncio.Event()
        follower = asyncio.create_task(_collect(c2, resp.task.id, events, three))
        await asyncio.wait_for(three.wait(), 10)
        admin = await asyncpg.connect(database)
        try:
            cut = await admin.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = $1 AND datname = current_database()",
                "a2a-relay-r2",
            )
        finally:
            await admin.close()
        assert cut == 1
        await asyncio.wait_for(follower, 10)
        final = await c1.get_task(resp.task.id)
    finally:
        await c1.close()
        await c2.close()
    assert _state(events[-1]) == pb.TASK_STATE_COMPLETED
    snapshot = events[0].task
    chunks = len(snapshot.artifacts[0].parts) if snapshot.artifacts else 0
    chunks += sum(1 for e in events[1:] if e.WhichOneof("payload") == "artifact_update")
    assert chunks == len(final.artifacts[0].parts) == 30
    assert "listening again" in r2.log.read_text()


async def test_event_log_and_retention() -> None:
    """One event row per task version, in the task write's transaction;
    terminal tasks' events go after the retention, active ones stay."""
    reason = await postgres_skip_reason()
    if reason:
        pytest.skip(reason)
    url = await fresh_database(PG_URL)
    store = ClusterStore(url)
    await store.open()
    owner = Owner("acme", "alice")
    try:
        await store.update(TaskWrite(make_task("done"), owner))
        event = pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(task_id="done"))
        event.status_update.status.state = pb.TASK_STATE_COMPLETED
        await store.update(
            TaskWrite(make_task("done", state=pb.TASK_STATE_COMPLETED), owner, 1, events=(event,))
        )
        await store.update(TaskWrite(make_task("active"), owner))
        done, active = (owner.tenant, owner.user, "done"), (owner.tenant, owner.user, "active")
        logged = await store.events_after(done, 0)
        assert [(v, e.WhichOneof("payload"), final) for v, e, final in logged] == [
            (1, "task", False),
            (2, "status_update", True),
        ]
        assert await store.events_after(done, 1) == [(2, event, True)]
        assert await store.events_after(("acme", "bob", "done"), 0) == []  # another owner's task
        assert await store.prune_events(3600) == 0  # not old enough
        await asyncio.sleep(0.01)
        assert await store.prune_events(0) == 2
        assert await store.events_after(done, 0) == []
        assert len(await store.events_after(active, 0)) == 1
    finally:
        await store.close()
        await drop_database(PG_URL, url)
