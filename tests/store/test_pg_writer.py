"""PostgreSQL's writer connection (issue 17): a connection lost before a
batch's COMMIT was sent is replaced and the batch written again; a write
alone in its batch is one statement, and so is a batch of creates; either
still fails only the caller whose id is taken or whose version moved.

The connection losses are real: ``pg_terminate_backend`` on the writer's
backend, from another connection between two writes, and from inside a
batch's own transaction.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from storekit import ALICE, BOB, COMPLETED, OTHER_TENANT, WORKING, make_sql_store, make_task, unique_prefix

from a2a_grpc.context import Owner
from a2a_grpc.core.ports import TaskWrite
from a2a_grpc.store import ListQuery, SqlTaskStore, TaskExistsError, VersionConflictError
from a2a_grpc.store._sql.raw import AsyncpgConnection

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


async def _total(store: SqlTaskStore, owner: Owner = ALICE, **query: object) -> int:
    return (await store.list_tasks(owner, ListQuery(**query))).total_size  # type: ignore[arg-type]


async def test_a_killed_writer_backend_is_replaced_for_the_next_write(store: SqlTaskStore) -> None:
    await store.update(TaskWrite(make_task("t1"), ALICE))
    pid = _writer(store).raw.get_server_pid()
    async with store.engine.connect() as conn:
        killed = (await conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})).scalar_one()
    assert killed is True
    # The backend ends a moment after pg_terminate_backend returns; a write
    # sent into that moment may have reached it (its outcome is unknown: its
    # caller gets the error, nothing is retried). Once the writer's socket has
    # closed the connection is known dead, and the next write gets a new one.
    for _ in range(500):
        if _writer(store).raw.is_closed():
            break
        await asyncio.sleep(0.01)
    assert _writer(store).raw.is_closed()
    assert await store.update(TaskWrite(make_task("t2"), ALICE)) == 1
    assert await store.update(TaskWrite(make_task("t2", state=WORKING), ALICE, 1)) == 2
    assert _writer(store).raw.get_server_pid() != pid
    assert await _total(store) == 2
    assert await _total(store, state=WORKING) == 1


async def test_a_connection_lost_before_commit_writes_the_batch_again(store: SqlTaskStore) -> None:
    await store.update(TaskWrite(make_task("t0"), ALICE))
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


async def test_a_connection_lost_after_commit_was_sent_fails_its_callers(store: SqlTaskStore) -> None:
    # A deferred trigger kills the backend while it runs the COMMIT: whether
    # the batch committed is unknown to us, so it must not be written again.
    p = store.table_prefix
    async with store.engine.begin() as conn:
        await conn.execute(
            text(
                f"CREATE FUNCTION {p}doom() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NULL; END $$"
            )
        )
        await conn.execute(
            text(
                f"CREATE CONSTRAINT TRIGGER {p}doom_t AFTER INSERT ON {p}tasks DEFERRABLE INITIALLY DEFERRED "
                f"FOR EACH ROW WHEN (NEW.id LIKE 'doomed%') EXECUTE FUNCTION {p}doom()"
            )
        )
    try:
        runs: list[int] = []
        task = make_task("doomed-1")

        def body(conn: AsyncpgConnection) -> None:
            runs.append(1)
            conn.execute(text("SELECT 1"))  # BEGIN: the insert waits for COMMIT
            store._create_tx(conn, task, ALICE, task.SerializeToString())

        with pytest.raises(DBAPIError, match=r"terminat|closed"):
            await store._run_write(body)
        assert runs == [1]
        assert await store.update(TaskWrite(make_task("t1"), ALICE)) == 1  # the next write reconnects
    finally:
        async with store.engine.begin() as conn:
            await conn.execute(text(f"DROP FUNCTION {p}doom() CASCADE"))


async def test_a_write_alone_fails_only_itself_and_moves_no_counts(store: SqlTaskStore) -> None:
    await store.update(TaskWrite(make_task("t1", context_id="ctx-a"), ALICE))
    with pytest.raises(TaskExistsError):
        await store.update(TaskWrite(make_task("t1", context_id="ctx-b"), ALICE))
    with pytest.raises(VersionConflictError):
        await store.update(TaskWrite(make_task("t1", context_id="ctx-c", state=COMPLETED), ALICE, 5))
    assert await store.update(TaskWrite(make_task("t1", context_id="ctx-d", state=WORKING), ALICE, 1)) == 2
    assert await _total(store) == 1
    assert [await _total(store, context_id=c) for c in ("ctx-a", "ctx-b", "ctx-c", "ctx-d")] == [0, 0, 0, 1]
    assert await _total(store, state=WORKING) == 1
    assert await _total(store, state=COMPLETED) == 0
    batches, writes = store.write_batches
    assert batches == writes == 4  # each write was alone in its batch


async def test_a_batch_of_creates_fails_only_the_taken_ids_and_counts_the_rest(
    store: SqlTaskStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.update(TaskWrite(make_task("taken"), ALICE))
    writer = _writer(store)
    alone: list[object] = []
    run_alone = writer.execute_alone
    monkeypatch.setattr(writer, "execute_alone", lambda st, p=None: alone.append(st) or run_alone(st, p))
    before = store.write_batches
    outcomes = await asyncio.gather(
        store.update(TaskWrite(make_task("a1", context_id="ctx-a"), ALICE)),
        store.update(TaskWrite(make_task("taken", context_id="ctx-a"), ALICE)),  # her own id again
        store.update(TaskWrite(make_task("a2", context_id="ctx-b", state=WORKING), ALICE)),
        store.update(TaskWrite(make_task("b1", context_id="ctx-a"), BOB)),
        store.update(TaskWrite(make_task("taken", context_id="ctx-a"), BOB)),  # ALICE's id: his own task
        store.update(TaskWrite(make_task("o1", context_id="ctx-a"), OTHER_TENANT)),
        return_exceptions=True,
    )
    assert alone == [store._st.create_many]  # the batch was one statement
    batches, writes = store.write_batches
    assert (batches - before[0], writes - before[1]) == (1, 6)
    assert outcomes[0] == outcomes[2] == outcomes[3] == outcomes[4] == outcomes[5] == 1
    assert isinstance(outcomes[1], TaskExistsError)
    assert await _total(store) == 3
    assert await _total(store, context_id="ctx-a") == 1
    assert await _total(store, context_id="ctx-b") == 1
    assert await _total(store, state=WORKING) == 1
    assert await _total(store, BOB) == 2 and await _total(store, BOB, context_id="ctx-a") == 2
    assert await _total(store, OTHER_TENANT) == 1
    stored = await store.get("taken", ALICE)
    assert stored is not None and stored.task.context_id == "ctx-1"
    # The same id twice in one batch: one create wins, the other finds it taken.
    twice = await asyncio.gather(
        store.update(TaskWrite(make_task("same"), ALICE)),
        store.update(TaskWrite(make_task("same", context_id="ctx-z"), ALICE)),
        return_exceptions=True,
    )
    assert sorted(type(o).__name__ for o in twice) == ["TaskExistsError", "int"]
    same = await store.get("same", ALICE)
    assert same is not None and same.task.context_id == ("ctx-1" if twice[0] == 1 else "ctx-z")
    assert await _total(store) == 4
    assert await _total(store, context_id=same.task.context_id) == (2 if twice[0] == 1 else 1)  # ("taken")


async def test_a_database_error_in_a_batch_of_creates_fails_only_its_write(store: SqlTaskStore) -> None:
    async with store.engine.begin() as conn:
        await conn.execute(
            text(
                f"CREATE FUNCTION {store.table_prefix}doom() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'poisoned'; END $$"
            )
        )
        await conn.execute(
            text(
                f"CREATE TRIGGER {store.table_prefix}poison BEFORE INSERT ON {store.table_prefix}tasks "
                f"FOR EACH ROW WHEN (NEW.id LIKE 'poison%') EXECUTE FUNCTION {store.table_prefix}doom()"
            )
        )
    try:
        outcomes = await asyncio.gather(
            *(store.update(TaskWrite(make_task(tid), ALICE)) for tid in ("t1", "poison-1", "t2")),
            return_exceptions=True,
        )
        assert outcomes[0] == 1 and outcomes[2] == 1
        assert isinstance(outcomes[1], DBAPIError) and "poisoned" in str(outcomes[1])
        assert await _total(store) == 2
    finally:
        async with store.engine.begin() as conn:
            await conn.execute(text(f"DROP FUNCTION {store.table_prefix}doom() CASCADE"))
