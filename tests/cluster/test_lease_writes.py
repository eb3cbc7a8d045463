"""Cluster mode (issue 17): the lease rides the task's own writes.

A new task's lease is taken by the write that creates it
(:class:`~a2a_grpc.cluster._store.NewLease`), and the write that leaves a task
terminal drops it in the same transaction, so a one-write
SendMessage (the echo agent) costs no lease transaction at all. Against a
real PostgreSQL: the store alone, then one in-process cluster replica.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import event

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.cluster._leases import Cluster, ClusterConfig
from a2a_grpc.cluster._store import ClusterStore, NewLease
from a2a_grpc.context import CallContext, Owner
from a2a_grpc.core._execution import Execution, Request
from a2a_grpc.core._handler import RequestHandler
from a2a_grpc.core.ports import Fence, LeaseLostError, TaskWrite, VersionConflictError
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._sql.raw import AsyncpgConnection
from a2a_grpc.types import pb
from tests.cluster.replicas import drop_database, fresh_database
from tests.store.storekit import PG_URL, make_task, postgres_skip_reason

pytestmark = [pytest.mark.postgres]

OWNER = Owner("acme", "alice")


@pytest.fixture
async def store() -> AsyncIterator[ClusterStore]:
    reason = await postgres_skip_reason()
    if reason:
        pytest.skip(reason)
    url = await fresh_database(PG_URL)
    s = ClusterStore(url)
    await s.open()
    try:
        yield s
    finally:
        await s.close()
        await drop_database(PG_URL, url)


def _new_lease(task_id: str, ttl: float = 5.0) -> tuple[NewLease, list[Fence | None]]:
    taken: list[Fence | None] = []
    return NewLease(task_id, 0, "r1", ttl, taken.append, []), taken


def _replica(store: ClusterStore) -> tuple[RequestHandler, Cluster]:
    """The handler and the cluster of an echo replica "r1", as the server
    builds them (not started: the test drives them)."""
    server = A2AServer(EchoAgent(), store, ServerConfig(cluster=ClusterConfig(replica_id="r1")))
    assert server.cluster is not None and server.handler.executions is server.cluster.executions
    return server.handler, server.cluster


async def _holder(store: ClusterStore, task_id: str) -> str | None:
    return await store.lease_holder(OWNER, task_id)


async def test_a_new_lease_alone_fences_nothing_but_a_creation(store: ClusterStore) -> None:
    marker, _ = _new_lease("t0")
    await store.update(TaskWrite(make_task("t0"), OWNER))
    with pytest.raises(LeaseLostError):  # epoch 0: no lease has it
        await store.update(TaskWrite(make_task("t0", state=pb.TASK_STATE_COMPLETED), OWNER, 1, fence=marker))


async def test_creation_takes_the_lease_and_the_terminal_write_drops_it(store: ClusterStore) -> None:
    marker, taken = _new_lease("t1")
    dropped: list[Fence] = []
    store.on_lease_dropped = dropped.append
    version = await store.update(TaskWrite(make_task("t1", state=pb.TASK_STATE_WORKING), OWNER, fence=marker))
    assert len(taken) == 1 and taken[0] is not None and taken[0].epoch > 0
    fence = taken[0]
    assert await _holder(store, "t1") == "r1"  # committed with the task
    version = await store.update(
        TaskWrite(make_task("t1", state=pb.TASK_STATE_WORKING), OWNER, version, fence=fence)
    )
    assert await store.lease_count() == 1 and dropped == []
    await store.update(TaskWrite(make_task("t1", state=pb.TASK_STATE_COMPLETED), OWNER, version, fence=fence))
    assert await store.lease_count() == 0  # gone in the commit that made the task terminal
    assert dropped == [fence]
    assert store.dropping == set()


async def test_an_interrupted_write_keeps_the_lease(store: ClusterStore) -> None:
    """INPUT_REQUIRED is not the end of the execution (the agent may go on):
    the lease stays until the execution releases it."""
    marker, taken = _new_lease("t2")
    version = await store.update(
        TaskWrite(make_task("t2", state=pb.TASK_STATE_INPUT_REQUIRED), OWNER, fence=marker)
    )
    fence = taken[0]
    assert fence is not None and await _holder(store, "t2") == "r1"
    version = await store.update(
        TaskWrite(make_task("t2", state=pb.TASK_STATE_WORKING), OWNER, version, fence=fence)
    )
    asked = make_task("t2", state=pb.TASK_STATE_AUTH_REQUIRED)
    await store.update(TaskWrite(asked, OWNER, version, fence=fence))
    assert await store.lease_count() == 1
    await store.release_lease(fence)
    assert await store.lease_count() == 0


async def test_a_write_after_the_terminal_one_is_fenced_off(store: ClusterStore) -> None:
    marker, taken = _new_lease("t7")
    version = await store.update(TaskWrite(make_task("t7", state=pb.TASK_STATE_WORKING), OWNER, fence=marker))
    fence = taken[0]
    assert fence is not None
    version = await store.update(
        TaskWrite(make_task("t7", state=pb.TASK_STATE_CANCELED), OWNER, version, fence=fence)
    )
    with pytest.raises(LeaseLostError):
        await store.update(
            TaskWrite(make_task("t7", state=pb.TASK_STATE_FAILED), OWNER, version, fence=fence)
        )
    stored = await store.get("t7", OWNER)
    assert stored is not None and stored.task.status.state == pb.TASK_STATE_CANCELED


async def test_a_task_created_terminal_takes_no_lease(store: ClusterStore) -> None:
    marker, taken = _new_lease("t3")
    await store.update(TaskWrite(make_task("t3", state=pb.TASK_STATE_COMPLETED), OWNER, fence=marker))
    assert taken == [None]
    assert await store.lease_count() == 0


async def test_a_creation_followed_by_its_snapshot_write_keeps_its_lease(store: ClusterStore) -> None:
    """A new task with a push config: its creation snapshot is a second
    write (with the outbox row), which the creation's lease must fence."""
    taken: list[Fence | None] = []
    marker = NewLease("t8", 0, "r1", 5.0, taken.append, [], always=True)
    version = await store.update(
        TaskWrite(make_task("t8", state=pb.TASK_STATE_COMPLETED), OWNER, fence=marker)
    )
    fence = taken[0]
    assert fence is not None and await store.lease_count() == 1
    await store.update(TaskWrite(make_task("t8", state=pb.TASK_STATE_COMPLETED), OWNER, version, fence=fence))
    assert await store.lease_count() == 0


async def test_a_refused_final_write_keeps_the_lease(store: ClusterStore) -> None:
    """The lease goes only with a write that commits: a compare-and-swap miss
    (in the same batch as another task's write) leaves it held."""
    marker, taken = _new_lease("t4")
    version = await store.update(TaskWrite(make_task("t4", state=pb.TASK_STATE_WORKING), OWNER, fence=marker))
    fence = taken[0]
    assert fence is not None
    done = make_task("t4", state=pb.TASK_STATE_COMPLETED)
    other, _ = _new_lease("t5")
    results = await asyncio.gather(
        store.update(TaskWrite(done, OWNER, version + 7, fence=fence)),
        store.update(TaskWrite(make_task("t5", state=pb.TASK_STATE_WORKING), OWNER, fence=other)),
        return_exceptions=True,
    )
    assert isinstance(results[0], VersionConflictError) and results[1] == 1
    assert await _holder(store, "t4") == "r1"
    assert store.dropping == set()


async def test_a_takeover_between_creation_and_the_next_write_fences_the_creator(store: ClusterStore) -> None:
    marker, taken = _new_lease("t6", ttl=0.2)
    version = await store.update(TaskWrite(make_task("t6", state=pb.TASK_STATE_WORKING), OWNER, fence=marker))
    old = taken[0]
    assert old is not None
    await asyncio.sleep(0.3)
    took = await store.take_over_expired("reaper", 5)
    assert [(t.fence.task_id, t.previous_replica) for t in took] == [("t6", "r1")]
    with pytest.raises(LeaseLostError):
        await store.update(
            TaskWrite(make_task("t6", state=pb.TASK_STATE_COMPLETED), OWNER, version, fence=old)
        )
    assert await _holder(store, "t6") == "reaper"
    failed = make_task("t6", state=pb.TASK_STATE_FAILED)
    await store.update(TaskWrite(failed, OWNER, version, fence=took[0].fence))
    assert await store.lease_count() == 0


def _send(text: str) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(
        message=pb.Message(message_id="m-" + text, role=pb.ROLE_USER, parts=[pb.Part(text=text)])
    )


async def test_a_cluster_send_message_is_one_write_and_no_lease_transaction(
    store: ClusterStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The echo agent's blocking SendMessage on a cluster replica: one
    group-committed write, one transaction, no statement on the pool and
    none on the lease table (before: a lease INSERT and a lease DELETE on
    the pool, each a transaction of its own, and the fence's SELECT in the
    write), and one event-log statement for all the events it logs (before:
    one per event)."""
    written: list[str] = []
    execute = AsyncpgConnection.execute

    def counted(self: AsyncpgConnection, statement: Any, params: Any = None) -> Any:
        written.append(str(statement))
        return execute(self, statement, params)

    monkeypatch.setattr(AsyncpgConnection, "execute", counted)
    handler, cluster = _replica(store)
    await cluster.start()  # its first reap runs on the pool: counted from here
    pooled: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        pooled.append(statement)

    event.listen(store.engine.sync_engine, "before_cursor_execute", count)
    call = CallContext.from_metadata("/lf.a2a.v1.A2AService/SendMessage", (("a2a-version", "1.0"),))
    try:
        batches, writes = store.write_batches
        written.clear()
        for i in range(5):
            task = (await handler.send_message(_send(f"hi{i}"), call)).task
            assert task.status.state == pb.TASK_STATE_COMPLETED
        assert store.write_batches[0] - batches == 5 and store.write_batches[1] - writes == 5
        assert pooled == []
        assert [w for w in written if store.leases.name in w] == []
        assert sum(f"INTO {store.schema.tasks.name} " in w for w in written) == 5
        # the three events the write logs: one statement (before: one each)
        assert sum(f"INTO {store.events.name} " in w for w in written) == 5
    finally:
        event.remove(store.engine.sync_engine, "before_cursor_execute", count)
        await cluster.stop()
        await handler.close()
    assert await store.lease_count() == 0


async def test_the_heartbeat_does_not_stop_an_execution_whose_terminal_write_is_in_flight(
    store: ClusterStore,
) -> None:
    """A terminal write deletes the lease row before the execution hears of
    its commit: a renewal that misses the row meanwhile is no takeover."""
    handler, cluster = _replica(store)
    ex = Execution(Request("t9", "ctx-1", OWNER, pb.Message()))
    try:
        cluster.executions.leased[987654] = ex  # no such lease row
        store.dropping.add(987654)
        await cluster.heartbeat()
        assert ex.cancel_reason is None and 987654 in cluster.executions.leased
        store.dropping.discard(987654)
        await cluster.heartbeat()  # now it is a lease taken over
        assert ex.cancel_reason == "shutdown" and cluster.executions.leased == {}
    finally:
        await handler.close()


async def test_two_owners_tasks_of_one_id_have_their_own_leases_and_logs(store: ClusterStore) -> None:
    """A task id names a task of one owner: a stranger's task of the same id
    takes its own lease (no "busy"), logs its own events and is canceled
    and stolen alone."""
    stranger = Owner("acme", "mallory")
    mine, _ = _new_lease("same")
    theirs, taken = _new_lease("same")
    await store.update(TaskWrite(make_task("same", state=pb.TASK_STATE_WORKING), OWNER, fence=mine))
    await store.update(TaskWrite(make_task("same", state=pb.TASK_STATE_WORKING), stranger, fence=theirs))
    assert taken[0] is not None and await store.lease_count() == 2
    assert await store.lease_holder(OWNER, "same") == await store.lease_holder(stranger, "same") == "r1"
    assert await store.lease_holder(Owner("acme", "nobody"), "same") is None
    assert await store.acquire_lease("same", OWNER, "r2", 5.0) is None  # its own is busy
    logged = await store.events_after((stranger.tenant, stranger.user, "same"), 0)
    assert len(logged) == 1 and len(await store.events_after((OWNER.tenant, OWNER.user, "same"), 0)) == 1
    stolen = await store.steal_lease(stranger, "same", "r2", 5.0)
    assert stolen is not None and await store.lease_holder(stranger, "same") == "r2"
    assert await store.lease_holder(OWNER, "same") == "r1"
