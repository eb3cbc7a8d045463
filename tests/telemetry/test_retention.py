"""Task retention and dead letters (issue 15 §4) on memory, SQLite and
PostgreSQL: exactly the old terminal tasks go, with their push configs and
outbox rows; the background worker of a real server; ``a2a-grpc admin``."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from a2a_grpc.context import Owner
from a2a_grpc.core.ports import ListQuery, OutboxEntry, TaskWrite
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.push import PushDispatcher
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store import InMemoryTaskStore, SqlTaskStore
from a2a_grpc.store._retention import parse_duration, purge
from a2a_grpc.types import pb
from tests.core.agents import ScriptedAgent
from tests.push.conftest import Receiver
from tests.store.storekit import config, make_task
from tests.telemetry.test_metrics import _until, _with_webhook, client

ROOT = Path(__file__).resolve().parents[2]
OWNER = Owner("acme", "alice")
DAY_MS = 86_400_000
TERMINAL = (pb.TASK_STATE_COMPLETED, pb.TASK_STATE_FAILED, pb.TASK_STATE_CANCELED, pb.TASK_STATE_REJECTED)
ACTIVE = (
    pb.TASK_STATE_WORKING,
    pb.TASK_STATE_INPUT_REQUIRED,
    pb.TASK_STATE_SUBMITTED,
    pb.TASK_STATE_AUTH_REQUIRED,
)


def test_parse_duration() -> None:
    assert parse_duration("30d") == 30 * 86400
    assert (
        parse_duration("1.5h") == 5400
        and parse_duration("90m") == 5400
        and parse_duration("2w") == 14 * 86400
    )
    for bad in ("", "30", "d", "-1d", "0s", "3 years"):
        with pytest.raises(ValueError):
            parse_duration(bad)


async def _fill(store: object) -> tuple[list[str], list[str]]:
    """Old tasks in every state and new terminal ones, each with a config and
    an outbox row; (ids that must go, ids that must stay)."""
    now_ms = int(time.time() * 1000)
    gone, kept = [], []
    for i, (state, age_days) in enumerate(
        [*((s, 40) for s in TERMINAL), *((s, 40) for s in ACTIVE), (TERMINAL[0], 1)]
    ):
        task = make_task(f"t{i}", ts_ms=now_ms - age_days * DAY_MS, context_id=f"ctx-{i % 2}")
        await store.update(TaskWrite(task, OWNER))  # type: ignore[attr-defined]
        await store.put_push_config(OWNER, config(task.id, "c1"))  # type: ignore[attr-defined]
        task.status.state = state  # type: ignore[assignment]
        entry = OutboxEntry(task.id, "c1", f"{task.id}:2", pb.StreamResponse(task=task).SerializeToString())
        await store.update(TaskWrite(task, OWNER, 1, outbox=[entry]))  # type: ignore[attr-defined]
        (gone if state in TERMINAL and age_days > 30 else kept).append(task.id)
    return gone, kept


async def test_purge_removes_exactly_the_old_terminal_tasks(store: object) -> None:
    gone, kept = await _fill(store)
    assert len(gone) == 4 and len(kept) == 5
    assert await purge(store, parse_duration("30d")) == 4
    for task_id in gone:
        assert await store.get(task_id, OWNER) is None  # type: ignore[attr-defined]
        assert await store.count_push_configs(OWNER, task_id) == 0  # type: ignore[attr-defined]
    for task_id in kept:
        assert await store.get(task_id, OWNER) is not None  # type: ignore[attr-defined]
        assert await store.count_push_configs(OWNER, task_id) == 1  # type: ignore[attr-defined]
    rows = await store.outbox_due(time.time() + 1, 100)  # type: ignore[attr-defined]
    assert sorted(r.entry.task_id for r in rows) == sorted(kept)
    assert await store.outbox_count("pending") == 5  # type: ignore[attr-defined]
    page = await store.list_tasks(OWNER, ListQuery(page_size=100))  # type: ignore[attr-defined]
    assert sorted(t.id for t in page.tasks) == sorted(kept) and page.total_size == 5
    completed = await store.list_tasks(OWNER, ListQuery(state=pb.TASK_STATE_COMPLETED))  # type: ignore[attr-defined]
    assert completed.total_size == 1  # the counts moved with the deleted tasks
    assert await store.count_push_configs(OWNER) == 5  # type: ignore[attr-defined]
    assert await purge(store, parse_duration("30d")) == 0


async def test_server_prunes_terminal_tasks_in_the_background() -> None:
    srv = A2AServer(
        ScriptedAgent(),
        InMemoryTaskStore(),
        ServerConfig(grpc_port=0, http_port=0, retain_terminal_seconds=0.5),
    )
    await srv.start()
    try:
        async with client(srv, "grpc") as c:
            done = (await c.send_message("echo bye")).task
            waiting = (await c.send_message("ask")).task
            assert waiting.status.state == pb.TASK_STATE_INPUT_REQUIRED

            async def pruned() -> bool:
                try:
                    await c.get_task(done.id)
                except A2AError as err:
                    return err.code is ErrorCode.TASK_NOT_FOUND
                return False

            await _until(pruned, timeout=5)
            assert (await c.get_task(waiting.id)).status.state == pb.TASK_STATE_INPUT_REQUIRED
        assert srv.retention.purged == 1
    finally:
        await srv.stop()


async def cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "a2a_grpc.cli",
        "admin",
        *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_admin_purge(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/a.db"
    store = SqlTaskStore(url)
    await store.open()
    gone, kept = await _fill(store)
    await store.close()
    code, out, _ = await cli("purge", "--store", url, "--older-than", "30d")
    assert code == 0 and out.strip() == "deleted 4 terminal tasks older than 2.592e+06s"
    code, _, err = await cli("purge", "--store", url, "--older-than", "soon")
    assert code == 2 and "'soon' is not a duration" in err
    store = SqlTaskStore(url)
    await store.open()
    try:
        assert [await store.get(t, OWNER) for t in gone] == [None] * 4
        assert None not in [await store.get(t, OWNER) for t in kept]
    finally:
        await store.close()


async def test_dead_letters_list_show_redrive_drop(receiver: Receiver, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/dl.db"
    receiver.always["/hook"] = 404  # not retried: each event is a dead letter at once
    store = SqlTaskStore(url)
    dispatcher = PushDispatcher(store, allow=["127.0.0.1"], poll_interval_seconds=0.05)
    srv = A2AServer(ScriptedAgent(), store, ServerConfig(grpc_port=0, http_port=0), push=dispatcher)
    await srv.start()
    try:
        async with client(srv, "rest") as c:
            task = (await c.send_message("echo x", configuration=_with_webhook(receiver.url("/hook")))).task

        async def all_dead() -> bool:
            return await store.outbox_count("pending") == 0 and await store.outbox_count("dead") >= 3

        await _until(all_dead)
        dead = await store.outbox_count("dead")
        code, out, err = await cli("dead-letters", "list", "--store", url)
        assert code == 0 and err.strip() == f"{dead} dead letters"
        lines = out.splitlines()
        assert len(lines) == dead and all(
            f"task={task.id}" in line and "error=HTTP 404" in line for line in lines
        )
        seqs = [line.split()[0] for line in lines]
        code, out, _ = await cli("dead-letters", "show", "--store", url, seqs[-1])
        assert code == 0 and '"state": "TASK_STATE_COMPLETED"' in out
        hits = len(receiver.on("/hook"))
        receiver.always["/hook"] = 200  # the webhook is fixed: send the last event again
        code, out, _ = await cli("dead-letters", "redrive", "--store", url, seqs[-1])
        assert code == 0 and out.strip() == f"redriven {seqs[-1]}"
        await receiver.wait_for(lambda: len(receiver.on("/hook")) == hits + 1)
        await _until(lambda: _eq(store.outbox_count("dead"), dead - 1))
        code, out, _ = await cli("dead-letters", "drop", "--store", url, *seqs[:-1])
        assert code == 0 and out.splitlines() == [f"dropped {s}" for s in seqs[:-1]]
        assert await store.outbox_count("dead") == 0
        code, _, err = await cli("dead-letters", "drop", "--store", url, seqs[0])
        assert code == 1 and err.strip() == f"Error: no dead letter {seqs[0]}"
    finally:
        await srv.stop()


async def _eq(value: object, expected: int) -> bool:
    return await value == expected  # type: ignore[misc]
