"""PostgreSQL's writer connection (issue 17): a connection lost before a
batch's COMMIT was sent is replaced and the batch written again; a write
alone in its batch is one statement that still fails only its caller.

The connection losses are real: ``pg_terminate_backend`` on the writer's
backend, from another connection between two writes, and from inside a
batch's own transaction.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from storekit import ALICE, COMPLETED, WORKING, make_sql_store, make_task, unique_prefix

from a2a_grpc.store import ListQuery, SqlTaskStore, TaskExistsError, VersionConflictError
from a2a_grpc.store.sql.raw import AsyncpgConnection

pytestmark = pytest.mark.postgres


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqlTaskStore]:
    s = await make_sql_store("postgresql", tmp_path, unique_prefix())
    await s.open()
    try:
        yield s
    finally:
        await s.drop_all()
        await s.close()


def _writer(store: SqlTaskStore) -> AsyncpgConnection:
    conn = store._pg_raw
    assert conn is not None, "no write has opened the writer connection yet"
    return conn


async def _total(store: SqlTaskStore, **query: object) -> int:
    return (await store.list_tasks(ALICE, ListQuery(**query))).total_size  # type: ignore[arg-type]


async def test_a_killed_writer_backend_is_replaced_for_the_next_write(store: SqlTaskStore) -> None:
    await store.create(make_task("t1"), ALICE)
    pid = _writer(store).raw.get_server_pid()
    async with store.engine.connect() as conn:
        killed = (await conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})).scalar_one()
    assert killed is True
    assert await store.create(make_task("t2"), ALICE) == 1
    assert await store.update(make_task("t2", state=WORKING), ALICE, 1) == 2
    assert _writer(store).raw.get_server_pid() != pid
    assert await _total(store) == 2
    assert await _total(store, state=WORKING) == 1


async def test_a_connection_lost_before_commit_writes_the_batch_again(store: SqlTaskStore) -> None:
    await store.create(make_task("t0"), ALICE)
    first = _writer(store).raw.get_server_pid()
    runs: list[int] = []
    task = make_task("t1")

    def body(conn: AsyncpgConnection) -> str:
        runs.append(conn.raw.get_server_pid())
        conn.execute(text("SELECT 1"))  # BEGIN: the insert below is not alone, it waits for COMMIT
        store._create_tx(conn, task, ALICE, task.SerializeToString())
        if len(runs) == 1:  # the backend dies inside the transaction, before COMMIT
            conn.execute(text("SELECT pg_terminate_backend(pg_backend_pid())"))
        return "written"

    assert await store._run_write(body) == "written"
    assert len(runs) == 2 and runs[0] == first and runs[1] != first
    stored = await store.get("t1", ALICE)
    assert stored is not None and stored.version == 1
    assert await _total(store) == 2  # counted once: the first run's insert was rolled back


async def test_a_write_alone_fails_only_itself_and_moves_no_counts(store: SqlTaskStore) -> None:
    await store.create(make_task("t1", context_id="ctx-a"), ALICE)
    with pytest.raises(TaskExistsError):
        await store.create(make_task("t1", context_id="ctx-b"), ALICE)
    with pytest.raises(VersionConflictError):
        await store.update(make_task("t1", context_id="ctx-c", state=COMPLETED), ALICE, 5)
    assert await store.update(make_task("t1", context_id="ctx-d", state=WORKING), ALICE, 1) == 2
    assert await _total(store) == 1
    assert [await _total(store, context_id=c) for c in ("ctx-a", "ctx-b", "ctx-c", "ctx-d")] == [0, 0, 0, 1]
    assert await _total(store, state=WORKING) == 1
    assert await _total(store, state=COMPLETED) == 0
    batches, writes = store.write_batches
    assert batches == writes == 4  # each write was alone in its batch
