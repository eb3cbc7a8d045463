"""Cluster mode, part 1 (issue 12): execution leases across replica
processes sharing one PostgreSQL database.

Three ``a2a-grpc serve --cluster`` processes on a fresh database; the client
picks the replica per call, over each binding. One execution per task
cluster-wide ("task is busy" on another replica), cancel from another
replica, and takeover of a killed or frozen replica's lease: the task ends
FAILED ("execution lost: replica … stopped") within the lease TTL plus the
reaper interval, and the frozen replica's writes are fenced off once it
resumes. Plus the fence itself on the store: a write whose lease was taken
over fails even when nobody wrote the task in between.
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import asyncpg
import pytest

from a2a_grpc.cluster._store import ClusterStore
from a2a_grpc.context import Owner
from a2a_grpc.core.ports import LeaseLostError, TaskWrite
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb
from tests.cluster.conftest import TTL, cluster_args
from tests.cluster.replicas import BINDINGS, Replica, drop_database, fresh_database
from tests.store.storekit import PG_URL, make_task, postgres_skip_reason

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

NOW = pb.SendMessageConfiguration(return_immediately=True)


async def _leases(database: str) -> int:
    conn = await asyncpg.connect(database.replace("postgresql+asyncpg", "postgresql"))
    try:
        return int(await conn.fetchval("SELECT count(*) FROM a2a_leases"))
    finally:
        await conn.close()


async def _relay_sessions(database: str, replica: str) -> int:
    """The PostgreSQL sessions listening for ``replica``'s event relay."""
    conn = await asyncpg.connect(database.replace("postgresql+asyncpg", "postgresql"))
    try:
        query = "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1"
        return int(await conn.fetchval(query, f"a2a-relay-{replica}"))
    finally:
        await conn.close()


async def _until_relay_sessions(database: str, replica: str, want: int, timeout: float) -> int:
    got = await _relay_sessions(database, replica)
    for _ in range(int(timeout * 10)):
        if got == want:
            break
        await asyncio.sleep(0.1)
        got = await _relay_sessions(database, replica)
    return got


async def _wait_state(replica: Replica, task_id: str, states: set[int], timeout: float) -> pb.Task:
    client = await replica.client()
    try:
        deadline = time.monotonic() + timeout
        while True:
            task = await client.get_task(task_id)
            if task.status.state in states or time.monotonic() > deadline:
                return task
            await asyncio.sleep(0.05)
    finally:
        await client.close()


def test_sqlite_refuses_cluster_mode(tmp_path: Path) -> None:
    import subprocess

    from tests.cluster.replicas import CLI

    out = subprocess.run(
        [CLI, "serve", "--cluster", "--store", f"sqlite:///{tmp_path}/x.db"], capture_output=True, text=True
    )
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "Error: --cluster needs --store postgresql://USER@HOST[:PORT]/DB shared by the replicas "
        "(SQLite serves one process only)"
    ]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_busy_on_another_replica(replicas: list[Replica], binding: str) -> None:
    r1, r2, _ = replicas
    c1, c2 = await r1.client(binding), await r2.client(binding)
    try:
        task = (await c1.send_message("steps=20 delay=0.05", configuration=NOW)).task
        with pytest.raises(A2AError) as err:
            await c2.send_message("more", task_id=task.id)
        assert err.value.code == ErrorCode.UNSUPPORTED_OPERATION
        assert "is busy" in err.value.message
        done = await _wait_state(r2, task.id, {pb.TASK_STATE_COMPLETED}, 10)
        assert done.status.state == pb.TASK_STATE_COMPLETED
        assert len(done.artifacts[0].parts) == 20
    finally:
        await c1.close()
        await c2.close()


async def test_interrupted_task_continues_on_another_replica(replicas: list[Replica]) -> None:
    """The lease goes when the execution ends: the next message to the
    interrupted task may go to any replica, at once."""
    r1, r2, _ = replicas
    c1, c2 = await r1.client("jsonrpc"), await r2.client("rest")
    try:
        task = (await c1.send_message("ask")).task
        assert task.status.state == pb.TASK_STATE_INPUT_REQUIRED
        again = (await c2.send_message("steps=2 delay=0", task_id=task.id)).task
        assert again.status.state == pb.TASK_STATE_COMPLETED
        assert len(again.history) == 3  # ask, the question, the second message
    finally:
        await c1.close()
        await c2.close()


@pytest.mark.parametrize("binding", BINDINGS)
async def test_cancel_on_another_replica(replicas: list[Replica], binding: str) -> None:
    """CancelTask on r3 of a task running on r1: r1's agent is interrupted at
    once (it sees CancelledError) and r1 writes CANCELED; the call returns it."""
    r1, _, r3 = replicas
    c1, c3 = await r1.client(binding), await r3.client(binding)
    try:
        task = (await c1.send_message("steps=100 delay=0.05", configuration=NOW)).task
        await _wait_state(r3, task.id, {pb.TASK_STATE_WORKING}, 5)
        began = time.monotonic()
        canceled = await c3.cancel_task(task.id)
        took = time.monotonic() - began
        assert canceled.status.state == pb.TASK_STATE_CANCELED
        assert canceled.status.message.parts[0].text == "canceled at the client's request"
        assert took < 1.0, took
        await asyncio.sleep(0.3)
        after = await _wait_state(r3, task.id, set(), 0)
        assert after == canceled  # r1 wrote nothing more
        assert f"agent stopped by CancelledError on task {task.id}" in r1.log.read_text() or (
            f"agent stopped by GeneratorExit on task {task.id}" in r1.log.read_text()
        )
    finally:
        await c1.close()
        await c3.close()


async def test_cancel_while_the_runner_is_frozen(
    replicas: list[Replica], database: str, tmp_path: Path
) -> None:
    """The replica running the task is frozen (SIGSTOP): after the grace
    period the canceller forces CANCELED, and once the frozen replica resumes
    none of its writes lands."""
    frozen = Replica("frozen-c", cluster_args(database, "frozen-c"), tmp_path / "fc.log").start()
    try:
        cf = await frozen.client()
        try:
            task = (await cf.send_message("steps=400 delay=0.01", configuration=NOW)).task
        finally:
            await cf.close()
        await _wait_state(replicas[1], task.id, {pb.TASK_STATE_WORKING}, 5)
        assert frozen.proc is not None
        frozen.proc.send_signal(signal.SIGSTOP)
        c2 = await replicas[1].client("rest")
        try:
            canceled = await c2.cancel_task(task.id)
        finally:
            frozen.proc.send_signal(signal.SIGCONT)
            await c2.close()
        assert canceled.status.state == pb.TASK_STATE_CANCELED
        assert "replica r2 forced it" in canceled.status.message.parts[0].text
        await asyncio.sleep(1.0)  # the resumed replica tries to go on writing
        assert await _wait_state(replicas[0], task.id, set(), 0) == canceled
        assert "execution lease lost" in frozen.log.read_text() or "taken over" in frozen.log.read_text()
    finally:
        frozen.stop()


async def test_kill_9_takeover(replicas: list[Replica], database: str, tmp_path: Path) -> None:
    """A replica killed mid-execution: another replica's reaper takes the
    lease over and the task ends FAILED within TTL + reaper interval."""
    victim = Replica(
        "victim",
        cluster_args(database, "victim"),
        tmp_path / "v.log",
    ).start()
    try:
        cv = await victim.client()
        try:
            task = (await cv.send_message("steps=200 delay=0.05", configuration=NOW)).task
        finally:
            await cv.close()
        await _wait_state(replicas[1], task.id, {pb.TASK_STATE_WORKING}, 5)
        victim.kill()
        killed = time.monotonic()
        ended = await _wait_state(replicas[1], task.id, {pb.TASK_STATE_FAILED}, TTL + TTL / 3 + 3)
        took = time.monotonic() - killed
    finally:
        victim.stop()
    assert ended.status.state == pb.TASK_STATE_FAILED
    assert ended.status.message.parts[0].text == (
        "execution lost: replica victim stopped while running the task"
    )
    assert took < TTL + TTL / 3 + 1.0, took


async def test_frozen_replica_is_fenced_off(replicas: list[Replica], database: str, tmp_path: Path) -> None:
    """SIGSTOP a replica longer than the TTL: its task is taken over (FAILED)
    and its event-relay session is ended (it would hold PostgreSQL's
    notification queue); once it resumes, none of its writes lands (the
    version stays) and its relay listens again."""
    frozen = Replica(
        "frozen",
        cluster_args(database, "frozen"),
        tmp_path / "f.log",
    ).start()
    try:
        cf = await frozen.client()
        try:
            task = (await cf.send_message("steps=400 delay=0.01", configuration=NOW)).task
        finally:
            await cf.close()
        await _wait_state(replicas[2], task.id, {pb.TASK_STATE_WORKING}, 5)
        assert frozen.proc is not None
        frozen.proc.send_signal(signal.SIGSTOP)
        try:
            assert await _relay_sessions(database, "frozen") == 1
            failed = await _wait_state(replicas[2], task.id, {pb.TASK_STATE_FAILED}, TTL * 2 + 3)
            assert await _until_relay_sessions(database, "frozen", 0, 3) == 0
        finally:
            frozen.proc.send_signal(signal.SIGCONT)
        assert failed.status.state == pb.TASK_STATE_FAILED
        assert await _until_relay_sessions(database, "frozen", 1, 5) == 1  # listening again
        await asyncio.sleep(1.0)  # the resumed replica tries to go on writing
        later = await _wait_state(replicas[2], task.id, set(), 0)
        assert later == failed
        assert "execution lease lost" in frozen.log.read_text()
    finally:
        frozen.stop()


async def test_no_lease_left(replicas: list[Replica], database: str) -> None:
    """After many tasks on every replica, every lease was released."""
    clients = [await r.client(b) for r, b in zip(replicas, BINDINGS, strict=True)]
    try:
        await asyncio.gather(*(c.send_message("steps=1 delay=0") for _ in range(30) for c in clients))
    finally:
        for c in clients:
            await c.close()
    # Leases of the killed or frozen replicas are reaped within TTL + interval.
    left = await _leases(database)
    for _ in range(int(TTL * 20) + 10):
        if not left:
            break
        await asyncio.sleep(0.1)
        left = await _leases(database)
    assert left == 0


async def test_fence_without_another_write() -> None:
    """The compare-and-swap alone would let the old holder write (nobody
    wrote the task since it read it); the epoch fence refuses it."""
    reason = await postgres_skip_reason()
    if reason:
        pytest.skip(reason)
    url = await fresh_database(PG_URL)
    store = ClusterStore(url)
    await store.open()
    owner = Owner("acme", "alice")
    try:
        old = await store.acquire_lease("t1", owner, "old", 0.2)
        assert old is not None
        assert await store.acquire_lease("t1", owner, "other", 5) is None  # busy
        version = await store.update(
            TaskWrite(make_task("t1", state=pb.TASK_STATE_WORKING), owner, fence=old)
        )
        await asyncio.sleep(0.3)
        taken = await store.take_over_expired("reaper", 5)
        assert [(t.fence.task_id, t.previous_replica) for t in taken] == [("t1", "old")]
        assert taken[0].fence.epoch > old.epoch
        with pytest.raises(LeaseLostError):
            await store.update(
                TaskWrite(make_task("t1", state=pb.TASK_STATE_COMPLETED), owner, version, fence=old)
            )
        assert await store.renew_leases([old.epoch], 5) == set()
        new = taken[0].fence
        assert await store.update(TaskWrite(make_task("t1"), owner, version, fence=new)) == version + 1
        await store.release_lease(new)
        assert await store.lease_count() == 0
    finally:
        await store.close()
        await drop_database(PG_URL, url)
