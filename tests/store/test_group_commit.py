"""Group commit (issue 17): concurrent writes share one transaction, and
each caller still gets only its own outcome — a compare-and-swap miss or a
taken id fails that caller alone, a database error in one write re-runs the
others without it, and a failing COMMIT fails exactly the callers of that
batch (see ``a2a_grpc.store._sql.batch``).

The failures are the databases' own: a trigger that raises inside one write's
statement, and a deferred constraint that the database checks only at COMMIT.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from storekit import ALICE, COMPLETED, WORKING, entry, make_sql_store, make_task, unique_prefix

from a2a_grpc.core.ports import TaskWrite
from a2a_grpc.store import ListQuery, SqlTaskStore, TaskExistsError, VersionConflictError

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SqlTaskStore]:
    s = await make_sql_store(request.param, tmp_path, unique_prefix())
    await s.open()
    try:
        yield s
    finally:
        if not s._is_sqlite:
            async with s.engine.begin() as conn:
                await conn.execute(text(f"DROP FUNCTION IF EXISTS {s.table_prefix}doom() CASCADE"))
            await s.drop_all()
        await s.close()


async def _total(store: SqlTaskStore, **query: object) -> int:
    return (await store.list_tasks(ALICE, ListQuery(**query))).total_size  # type: ignore[arg-type]


async def test_concurrent_writes_share_one_transaction(store: SqlTaskStore) -> None:
    before = store.write_batches
    versions = await asyncio.gather(*(store.update(TaskWrite(make_task(f"t{i}"), ALICE)) for i in range(32)))
    assert versions == [1] * 32
    batches, writes = store.write_batches
    assert (batches - before[0], writes - before[1]) == (1, 32)
    assert await _total(store) == 32


async def test_a_batch_moving_more_counts_than_one_upsert_holds_counts_them_all(store: SqlTaskStore) -> None:
    # 150 contexts: 152 count rows moved by one batch, more than one SQLite
    # count upsert statement carries (store.sql.tasks._COUNT_ROWS).
    before = store.write_batches
    await asyncio.gather(
        *(store.update(TaskWrite(make_task(f"t{i}", context_id=f"c{i}"), ALICE)) for i in range(150))
    )
    assert store.write_batches[0] - before[0] == 1
    assert await _total(store) == 150
    assert [await _total(store, context_id=f"c{i}") for i in (0, 63, 64, 127, 128, 149)] == [1] * 6
    await store.update(TaskWrite(make_task("again", context_id="c64"), ALICE))
    assert (await _total(store, context_id="c64"), await _total(store)) == (2, 151)


async def test_conflicts_in_a_batch_fail_only_their_callers(store: SqlTaskStore) -> None:
    for tid in ("t1", "t2", "t3"):
        await store.update(TaskWrite(make_task(tid, context_id="ctx-a"), ALICE))
    before = store.write_batches[0]
    outcomes = await asyncio.gather(
        store.update(TaskWrite(make_task("t1", context_id="ctx-a", state=WORKING), ALICE, 1)),
        store.update(
            TaskWrite(
                make_task("t2", context_id="ctx-b", state=COMPLETED), ALICE, 7, outbox=[entry("t2", "c", 8)]
            )
        ),
        store.update(TaskWrite(make_task("t1", context_id="ctx-c"), ALICE)),
        store.update(TaskWrite(make_task("t3", state=COMPLETED), ALICE, 1, outbox=[entry("t3", "c", 2)])),
        return_exceptions=True,
    )
    assert store.write_batches[0] - before == 1  # one transaction for all four
    assert outcomes[0] == 2 and outcomes[3] == 2
    assert isinstance(outcomes[1], VersionConflictError)
    assert isinstance(outcomes[2], TaskExistsError)
    # Nothing of the two failed writes is there: no count moves, no outbox row.
    assert await _total(store, context_id="ctx-b") == 0
    assert await _total(store, context_id="ctx-c") == 0
    assert await _total(store, context_id="ctx-a") == 2
    assert await _total(store, state=WORKING) == 1
    assert await _total(store, state=COMPLETED) == 1
    assert await _total(store) == 3
    due = await store.outbox_due(1e12, 10)
    assert [r.entry.task_id for r in due] == ["t3"]
    stored = await store.get("t2", ALICE)
    assert stored is not None and stored.version == 1


async def _install(store: SqlTaskStore, sqlite: list[str], postgresql: list[str]) -> None:
    async with store.engine.begin() as conn:
        for statement in sqlite if store._is_sqlite else postgresql:
            await conn.execute(text(statement.format(p=store.table_prefix)))


async def test_a_database_error_in_one_write_fails_only_that_write(store: SqlTaskStore) -> None:
    # A trigger refuses tasks named poison*: the INSERT statement itself fails
    # (on PostgreSQL that aborts the whole transaction; the others are re-run).
    await _install(
        store,
        [
            "CREATE TRIGGER {p}poison BEFORE INSERT ON {p}tasks WHEN NEW.id LIKE 'poison%' "
            "BEGIN SELECT RAISE(ABORT, 'poisoned'); END"
        ],
        [
            "CREATE FUNCTION {p}doom() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'poisoned'; END $$",
            "CREATE TRIGGER {p}poison BEFORE INSERT ON {p}tasks FOR EACH ROW "
            "WHEN (NEW.id LIKE 'poison%') EXECUTE FUNCTION {p}doom()",
        ],
    )
    await store.update(TaskWrite(make_task("t0"), ALICE))
    before = store.write_batches[1]
    outcomes = await asyncio.gather(
        store.update(TaskWrite(make_task("t1"), ALICE)),
        store.update(TaskWrite(make_task("poison-1"), ALICE)),
        store.update(TaskWrite(make_task("t0", state=WORKING), ALICE, 1, outbox=[entry("t0", "c", 2)])),
        store.update(TaskWrite(make_task("t2"), ALICE)),
        return_exceptions=True,
    )
    assert store.write_batches[1] - before == 4
    assert outcomes[0] == 1 and outcomes[2] == 2 and outcomes[3] == 1
    assert isinstance(outcomes[1], DBAPIError) and "poisoned" in str(outcomes[1])
    assert await store.get("poison-1", ALICE) is None
    assert await _total(store) == 3  # t0, t1, t2: the counts of the re-run, once
    assert await _total(store, state=WORKING) == 1
    assert await store.outbox_count("pending") == 1


async def test_a_failing_commit_fails_exactly_the_callers_of_its_batch(store: SqlTaskStore) -> None:
    # A deferred constraint: a task named doomed* inserts a row that breaks a
    # constraint checked only at COMMIT, so the COMMIT of its batch fails.
    await _install(
        store,
        [
            "CREATE TABLE {p}doom_parent (id TEXT PRIMARY KEY)",
            "CREATE TABLE {p}doom (task_id TEXT REFERENCES {p}doom_parent (id) DEFERRABLE INITIALLY DEFERRED)",
            "CREATE TRIGGER {p}doom_t AFTER INSERT ON {p}tasks WHEN NEW.id LIKE 'doomed%' "
            "BEGIN INSERT INTO {p}doom VALUES (NEW.id); END",
        ],
        [
            "CREATE FUNCTION {p}doom() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'doomed at commit'; END $$",
            "CREATE CONSTRAINT TRIGGER {p}doom_t AFTER INSERT ON {p}tasks DEFERRABLE INITIALLY DEFERRED "
            "FOR EACH ROW WHEN (NEW.id LIKE 'doomed%') EXECUTE FUNCTION {p}doom()",
        ],
    )
    await store.update(TaskWrite(make_task("t0", context_id="ctx-0"), ALICE))
    before = store.write_batches[0]
    outcomes = await asyncio.gather(
        store.update(TaskWrite(make_task("t1", context_id="ctx-1"), ALICE)),
        store.update(TaskWrite(make_task("doomed-1", context_id="ctx-1"), ALICE)),
        store.update(
            TaskWrite(
                make_task("t0", context_id="ctx-0", state=WORKING), ALICE, 1, outbox=[entry("t0", "c", 2)]
            )
        ),
        store.update(TaskWrite(make_task("t0"), ALICE, 9)),  # decided before the commit: its own error
        return_exceptions=True,
    )
    assert store.write_batches[0] - before == 1
    assert all(isinstance(o, DBAPIError) for o in outcomes[:3]), outcomes
    assert isinstance(outcomes[3], VersionConflictError)
    # Nothing of the batch was written...
    assert await store.get("t1", ALICE) is None
    assert await store.get("doomed-1", ALICE) is None
    t0 = await store.get("t0", ALICE)
    assert t0 is not None and t0.version == 1
    assert await _total(store) == 1 and await _total(store, context_id="ctx-1") == 0
    assert await store.outbox_count("pending") == 0
    # ...and the next batch commits as usual.
    again = await asyncio.gather(
        store.update(TaskWrite(make_task("t1", context_id="ctx-1"), ALICE)),
        store.update(TaskWrite(make_task("t0", context_id="ctx-0", state=WORKING), ALICE, 1)),
    )
    assert again == [1, 2]
    assert await _total(store) == 2 and await _total(store, state=WORKING) == 1


async def test_synchronous_level_is_taken_from_the_url(tmp_path: Path) -> None:
    store = SqlTaskStore(f"sqlite:///{tmp_path}/full.db?synchronous=full")
    assert store.synchronous == "FULL" and store.url.database == f"{tmp_path}/full.db"
    await store.open()
    try:
        assert await store.update(TaskWrite(make_task("t1"), ALICE)) == 1
        assert (await store.get("t1", ALICE)) is not None
    finally:
        await store.close()
    with pytest.raises(ValueError, match="synchronous"):
        SqlTaskStore(f"sqlite:///{tmp_path}/x.db?synchronous=off")


async def test_in_memory_sqlite_is_shared_by_the_writer_and_the_readers() -> None:
    store = SqlTaskStore("sqlite://")
    await store.open()
    try:
        await asyncio.gather(*(store.update(TaskWrite(make_task(f"t{i}"), ALICE)) for i in range(5)))
        assert await store.update(TaskWrite(make_task("t1", state=WORKING), ALICE, 1)) == 2
        store._memory.clear()  # read from the database, not the cache
        got = await store.get("t1", ALICE)
        assert got is not None and got.version == 2
        assert await _total(store) == 5
    finally:
        await store.close()


async def test_close_commits_the_writes_already_queued(store: SqlTaskStore) -> None:
    pending = [asyncio.ensure_future(store.update(TaskWrite(make_task(f"q{i}"), ALICE))) for i in range(8)]
    await asyncio.sleep(0)  # the creates are queued; their flush has not run yet
    await store.close()
    assert [await p for p in pending] == [1] * 8
    await store.open()
    assert await _total(store) == 8
