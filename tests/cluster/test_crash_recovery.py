"""Crash recovery of a single-process server (issue 12): ``kill -9`` under
load, restart on the same store → no task is left SUBMITTED or WORKING, and
every task a client was answered about is still there.

The in-flight ones end FAILED with ``execution lost: …``; interrupted tasks
(INPUT_REQUIRED) and finished ones stay as they were. The recovery write goes
to the push outbox like any state change (tested on the store directly).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from a2a_grpc.cluster._recovery import recover_on_start
from a2a_grpc.context import Owner
from a2a_grpc.core._drive import TaskWriter
from a2a_grpc.core._events import EventBus
from a2a_grpc.core.ports import TaskWrite
from a2a_grpc.errors import A2AError
from a2a_grpc.types import pb
from tests.cluster.replicas import BINDINGS, Replica, drop_database, fresh_database
from tests.store.storekit import (
    PG_URL,
    config,
    make_sql_store,
    make_task,
    postgres_skip_reason,
    unique_prefix,
)

pytestmark = pytest.mark.slow

ACTIVE = (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
NOW = pb.SendMessageConfiguration(return_immediately=True)


async def _load(
    replica: Replica, acked: dict[str, str], enough: asyncio.Event, stop: asyncio.Event, binding: str
) -> None:
    """Sends messages until ``stop`` (or the server dies): long ones, quick
    ones and ``ask`` ones; records each acknowledged task id → its kind, and
    sets ``enough`` once 15 long ones are running."""
    client = await replica.client(binding)
    kinds = ("long", "quick", "ask")
    texts = {"long": "steps=200 delay=0.05", "quick": "steps=1 delay=0", "ask": "ask"}
    n = 0
    try:
        while not stop.is_set():
            kind = kinds[n % 3]
            n += 1
            blocking = kind != "long"
            cfg = None if blocking else NOW
            resp = await client.send_message(texts[kind], configuration=cfg, timeout=10)
            acked[resp.task.id] = kind
            if sum(1 for k in acked.values() if k == "long") >= 15:
                enough.set()
    except (TimeoutError, A2AError, OSError):
        pass  # the server was killed mid-call: that call was never acknowledged
    finally:
        with contextlib.suppress(Exception):
            await client.close()


async def _crash_and_restart(store_url: str, tmp_path: Path) -> None:
    replica = Replica("r1", ["--store", store_url], tmp_path / "r1.log").start()
    acked: dict[str, str] = {}
    stop, enough = asyncio.Event(), asyncio.Event()
    try:
        loads = [asyncio.create_task(_load(replica, acked, enough, stop, b)) for b in BINDINGS * 2]
        await asyncio.wait_for(enough.wait(), 30)
        replica.kill()  # kill -9 with calls in flight
        stop.set()
        await asyncio.gather(*loads)
        replica.start()
        client = await replica.client("grpc")
        try:
            tasks = {tid: await client.get_task(tid) for tid in acked}
        finally:
            await client.close()
    finally:
        replica.stop()
    assert len(tasks) == len(acked) >= 15  # zero acknowledged tasks lost
    states = {tid: t.status.state for tid, t in tasks.items()}
    assert not [tid for tid, s in states.items() if s in ACTIVE]
    for tid, kind in acked.items():
        task = tasks[tid]
        if kind == "long":
            assert task.status.state == pb.TASK_STATE_FAILED
            assert task.status.message.parts[0].text.startswith("execution lost: ")
        elif kind == "ask":
            assert task.status.state == pb.TASK_STATE_INPUT_REQUIRED  # interrupted stays
        else:
            assert task.status.state == pb.TASK_STATE_COMPLETED


async def test_kill_under_load_sqlite(tmp_path: Path) -> None:
    await _crash_and_restart(f"sqlite:///{tmp_path}/store.db", tmp_path)


async def test_kill_under_load_postgresql(tmp_path: Path) -> None:
    reason = await postgres_skip_reason()
    if reason:
        pytest.skip(reason)
    url = await fresh_database(PG_URL)
    try:
        await _crash_and_restart(url, tmp_path)
    finally:
        await drop_database(PG_URL, url)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_recovery_reaches_the_push_outbox(backend: str, tmp_path: Path) -> None:
    """The FAILED write carries one notification per webhook, like any
    state change; interrupted and terminal tasks are left alone."""
    store = await make_sql_store(backend, tmp_path, unique_prefix())
    await store.open()
    owner = Owner("acme", "alice")
    try:
        for tid, state in (
            ("t-sub", pb.TASK_STATE_SUBMITTED),
            ("t-work", pb.TASK_STATE_WORKING),
            ("t-ask", pb.TASK_STATE_INPUT_REQUIRED),
            ("t-done", pb.TASK_STATE_COMPLETED),
        ):
            await store.update(TaskWrite(make_task(tid, state=state), owner))
            await store.put_push_config(owner, config(tid, "hook"))
        woken: list[int] = []
        writer = TaskWriter(store, store, EventBus(), lambda: woken.append(1))
        assert await recover_on_start(store, writer) == 2
        assert await recover_on_start(store, writer) == 0  # nothing left to recover
        for tid, want in (
            ("t-sub", pb.TASK_STATE_FAILED),
            ("t-work", pb.TASK_STATE_FAILED),
            ("t-ask", pb.TASK_STATE_INPUT_REQUIRED),
            ("t-done", pb.TASK_STATE_COMPLETED),
        ):
            stored = await store.get(tid, owner)
            assert stored is not None and stored.task.status.state == want, tid
        due = await store.outbox_due(1e12, 100)
        assert sorted(r.entry.task_id for r in due) == ["t-sub", "t-work"]
        event = pb.StreamResponse.FromString(due[0].entry.payload)
        assert event.status_update.status.state == pb.TASK_STATE_FAILED
        assert event.status_update.status.message.parts[0].text.startswith("execution lost: ")
        assert due[0].entry.event_id == f"{due[0].entry.task_id}:2"
        assert woken
    finally:
        await store.drop_all()
        await store.close()
