"""Artifact chunks kept apart (issue 10, item 9): an ``append`` update may
store just the chunk; every read folds the chunks back in. Every backend."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from storekit import ALICE, BOB, COMPLETED, WORKING, make_sql_store, make_task, unique_prefix

from a2a_grpc.core.ports import TaskWrite
from a2a_grpc.protocol._taskupdate import apply_event
from a2a_grpc.store import ListQuery, SqlTaskStore, TaskStore, VersionConflictError
from a2a_grpc.types import pb


def _chunk(i: int, artifact_id: str = "a-t1") -> pb.TaskArtifactUpdateEvent:
    art = pb.Artifact(artifact_id=artifact_id, parts=[pb.Part(raw=bytes([i]) * (1000 + i))])
    if i % 3 == 0:
        art.metadata.update({f"k{i}": i})
    return pb.TaskArtifactUpdateEvent(task_id="t1", context_id="ctx-1", artifact=art, append=True)


async def _append_all(
    store: TaskStore, task: pb.Task, version: int, events: list[object]
) -> tuple[pb.Task, int]:
    for ev in events:
        task, _ = apply_event(task, ev)
        chunk = ev.artifact if isinstance(ev, pb.TaskArtifactUpdateEvent) and ev.append else None
        version = await store.update(TaskWrite(task, ALICE, version, append=chunk))
    return task, version


async def test_appended_chunks_read_back_as_the_whole_task(store: TaskStore) -> None:
    task = make_task("t1", state=WORKING)
    await store.update(TaskWrite(task, ALICE))
    events: list[object] = [_chunk(i) for i in range(1, 8)]
    events.append(_chunk(8, artifact_id="new"))  # append to an unknown artifact creates it
    expected, version = await _append_all(store, task, 1, events)
    assert version == 9
    got = await store.get("t1", ALICE)
    assert got is not None and got.version == 9
    assert got.task == expected
    assert [len(p.raw) for p in got.task.artifacts[0].parts] == [0, *(1000 + i for i in range(1, 8))]
    assert got.task.artifacts[1].artifact_id == "new"
    page = await store.list_tasks(ALICE, ListQuery())
    assert page.tasks == [expected]
    assert await store.get("t1", BOB) is None


async def test_a_whole_write_after_chunks_keeps_everything(store: TaskStore) -> None:
    task = make_task("t1", state=WORKING)
    await store.update(TaskWrite(task, ALICE))
    task, version = await _append_all(store, task, 1, [_chunk(i) for i in range(1, 4)])
    done = pb.TaskStatusUpdateEvent(task_id="t1", context_id="ctx-1", status=pb.TaskStatus(state=COMPLETED))
    task, version = await _append_all(store, task, version, [done])
    got = await store.get("t1", ALICE)
    assert got is not None and got.task == task and got.version == version == 5
    assert len(got.task.artifacts[0].parts) == 4


async def test_chunks_after_a_whole_write_and_more_whole_writes(store: TaskStore) -> None:
    task = make_task("t1", state=WORKING)
    await store.update(TaskWrite(task, ALICE))
    working = pb.TaskStatusUpdateEvent(task_id="t1", context_id="ctx-1", status=pb.TaskStatus(state=WORKING))
    events: list[object] = []
    for i in range(1, 10):
        events.append(_chunk(i))
        if i % 4 == 0:
            events.append(working)
    task, version = await _append_all(store, task, 1, events)
    got = await store.get("t1", ALICE)
    assert got is not None and got.task == task and got.version == version


async def test_append_is_compare_and_swap(store: TaskStore) -> None:
    task = make_task("t1", state=WORKING)
    await store.update(TaskWrite(task, ALICE))
    one, _ = apply_event(task, _chunk(1))
    assert await store.update(TaskWrite(one, ALICE, 1, append=_chunk(1).artifact)) == 2
    two, _ = apply_event(one, _chunk(2))
    with pytest.raises(VersionConflictError):
        await store.update(TaskWrite(two, ALICE, 1, append=_chunk(2).artifact))
    with pytest.raises(VersionConflictError):
        await store.update(TaskWrite(two, BOB, 2, append=_chunk(2).artifact))
    got = await store.get("t1", ALICE)
    assert got is not None and got.task == one and got.version == 2


async def test_an_append_that_also_moved_the_status_is_stored_whole(store: TaskStore) -> None:
    task = make_task("t1", state=WORKING)
    await store.update(TaskWrite(task, ALICE))
    moved, _ = apply_event(task, _chunk(1))
    moved.status.state = COMPLETED  # a caller breaking the contract: still stored right
    assert await store.update(TaskWrite(moved, ALICE, 1, append=_chunk(1).artifact)) == 2
    got = await store.get("t1", ALICE)
    assert got is not None and got.task == moved
    assert (await store.list_tasks(ALICE, ListQuery(state=COMPLETED))).total_size == 1


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_a_database_from_before_chunks_gets_the_column_on_open(backend: str, tmp_path: Path) -> None:
    from storekit import postgres_skip_reason

    if backend == "postgresql" and (reason := await postgres_skip_reason()):
        pytest.skip(reason)
    prefix = unique_prefix()
    old = await make_sql_store(backend, tmp_path, prefix)
    await old.open()
    try:
        await old.update(TaskWrite(make_task("t1", state=WORKING), ALICE))
        async with old.engine.begin() as conn:  # the schema as it was
            await conn.execute(text(f"DROP TABLE {prefix}artifact_chunks"))
            await conn.execute(text(f"ALTER TABLE {prefix}tasks DROP COLUMN chunks"))
        await old.close()
        new = await make_sql_store(backend, tmp_path, prefix)
        assert isinstance(new, SqlTaskStore)
        await new.open()
        task = (await new.get("t1", ALICE)).task  # type: ignore[union-attr]
        task, _ = await _append_all(new, task, 1, [_chunk(1), _chunk(2)])
        got = await new.get("t1", ALICE)
        assert got is not None and got.task == task and got.version == 3
        old = new
    finally:
        if backend == "postgresql":
            await old.open()
            await old.drop_all()
        await old.close()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_sql_append_writes_only_the_chunk(backend: str, tmp_path: Path) -> None:
    prefix = unique_prefix()
    store = await make_sql_store(backend, tmp_path, prefix)
    await store.open()

    async def sizes() -> tuple[int, int, int]:
        async with store.engine.connect() as conn:
            row = (await conn.execute(text(f"SELECT length(data), chunks FROM {prefix}tasks"))).one()
            n = (await conn.execute(text(f"SELECT count(*) FROM {prefix}artifact_chunks"))).scalar_one()
        return int(row[0]), int(row[1]), int(n)

    try:
        task = make_task("t1", state=WORKING)
        await store.update(TaskWrite(task, ALICE))
        base = (await sizes())[0]
        task, version = await _append_all(store, task, 1, [_chunk(i) for i in range(1, 6)])
        assert await sizes() == (base, 5, 5)  # the task row did not grow
        done = pb.TaskStatusUpdateEvent(
            task_id="t1", context_id="ctx-1", status=pb.TaskStatus(state=COMPLETED)
        )
        task, version = await _append_all(store, task, version, [done])
        whole, chunks, rows = await sizes()
        assert (chunks, rows) == (0, 0) and whole > base + 5000  # folded into the row once
        store._memory.clear()  # read from the database, not the terminal cache
        got = await store.get("t1", ALICE)
        assert got is not None and got.task == task
    finally:
        if backend == "postgresql":
            await store.drop_all()
        await store.close()
