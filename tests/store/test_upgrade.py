"""``open()`` brings a database of the release before per-owner task ids to
their keys (docs/decisions.md, "task ids and callers"): the tables keyed by
the task id alone are rekeyed with the owner (SQLite rebuilds them,
PostgreSQL changes their primary keys), artifact chunks, outbox rows and
logged events take their task's owner, and nothing is lost.

The older layout is made here with that release's table definitions, filled,
and opened with today's store (SQLite, PostgreSQL; the cluster store's
tables on PostgreSQL).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Double,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    insert,
    inspect,
)
from sqlalchemy.ext.asyncio import create_async_engine
from storekit import PG_URL, postgres_skip_reason

from a2a_grpc.cluster._store import ClusterStore
from a2a_grpc.context import Owner
from a2a_grpc.core.ports import ListQuery, TaskExistsError, TaskWrite
from a2a_grpc.store._sql import SqlTaskStore, async_url
from a2a_grpc.store._sql.schema import Schema
from a2a_grpc.types import pb

ALICE, BOB = Owner("acme", "alice"), Owner("acme", "bob")
_Id = String().with_variant(String(collation="C"), "postgresql")
_Seq = BigInteger().with_variant(Integer(), "sqlite")


def _old_tables(md: MetaData, prefix: str) -> tuple[Table, Table, Table]:
    """tasks, artifact_chunks and push_outbox as the older release made them."""
    tasks = Table(
        f"{prefix}tasks",
        md,
        Column("id", _Id, primary_key=True),
        Column("tenant", String(), nullable=False),
        Column("owner_user", String(), nullable=False),
        Column("context_id", String(), nullable=False),
        Column("state", Integer(), nullable=False),
        Column("status_ts_ms", BigInteger(), nullable=False),
        Column("version", Integer(), nullable=False),
        Column("data", LargeBinary(), nullable=False),
        Column("chunks", Integer(), nullable=False, server_default="0"),
    )
    chunks = Table(
        f"{prefix}artifact_chunks",
        md,
        Column("task_id", _Id, nullable=False),
        Column("version", Integer(), nullable=False),
        Column("data", LargeBinary(), nullable=False),
        PrimaryKeyConstraint("task_id", "version", name=f"{prefix}artifact_chunks_key"),
    )
    outbox = Table(
        f"{prefix}push_outbox",
        md,
        Column("seq", _Seq, primary_key=True, autoincrement=True),
        Column("task_id", String(), nullable=False),
        Column("config_id", String(), nullable=False),
        Column("event_id", String(), nullable=False),
        Column("payload", LargeBinary(), nullable=False),
        Column("attempts", Integer(), nullable=False, default=0),
        Column("next_attempt_at", Double(), nullable=False),
        Column("state", String(16), nullable=False),
        Column("last_error", Text(), nullable=False, default=""),
        Column("trace_context", Text(), nullable=True),
    )
    return tasks, chunks, outbox


def _old_cluster_tables(md: MetaData, prefix: str) -> tuple[Table, Table, Table]:
    """The cluster store's leases, task_events and push_claims of the older release."""
    leases = Table(
        f"{prefix}leases",
        md,
        Column("task_id", String(collation="C"), primary_key=True),
        Column("tenant", String(), nullable=False),
        Column("owner_user", String(), nullable=False),
        Column("replica", String(), nullable=False),
        Column("epoch", BigInteger(), nullable=False, unique=True),
        Column("expires_at", Double(), nullable=False),
    )
    events = Table(
        f"{prefix}task_events",
        md,
        Column("task_id", String(collation="C"), primary_key=True),
        Column("version", Integer(), primary_key=True),
        Column("event", LargeBinary(), nullable=False),
        Column("final", Boolean(), nullable=False),
        Column("created_at", Double(), nullable=False),
    )
    claims = Table(
        f"{prefix}push_claims",
        md,
        Column("task_id", String(collation="C"), primary_key=True),
        Column("config_id", String(collation="C"), primary_key=True),
        Column("replica", String(), nullable=False),
        Column("until", Double(), nullable=False),
    )
    return leases, events, claims


def _task(task_id: str, state: int, *parts: str) -> pb.Task:
    task = pb.Task(id=task_id, context_id="ctx-" + task_id)
    task.status.state = state  # type: ignore[assignment]
    task.status.timestamp.FromMilliseconds(1_700_000_000_000)
    if parts:
        task.artifacts.add(artifact_id="a", parts=[pb.Part(text=p) for p in parts])
    return task


def _row(task: pb.Task, owner: Owner, version: int, chunks: int = 0) -> dict[str, object]:
    return {
        "id": task.id,
        "tenant": owner.tenant,
        "owner_user": owner.user,
        "context_id": task.context_id,
        "state": task.status.state,
        "status_ts_ms": 1_700_000_000_000,
        "version": version,
        "data": task.SerializeToString(),
        "chunks": chunks,
    }


def _chunk(text: str) -> bytes:
    return pb.Artifact(artifact_id="a", parts=[pb.Part(text=text)]).SerializeToString()


async def _older_database(url: str, prefix: str, *, cluster: bool = False) -> None:
    """The older release's layout, with alice's working task ``t1`` (two
    chunks kept apart, a webhook and a pending delivery) and bob's
    completed ``t2``."""
    md = MetaData()
    tasks, chunks, outbox = _old_tables(md, prefix)
    if cluster:
        _old_cluster_tables(md, prefix)
    schema = Schema.build(prefix)
    configs = schema.configs.to_metadata(md)
    engine = create_async_engine(async_url(url))
    try:
        async with engine.begin() as conn:
            await conn.run_sync(md.create_all)
            await conn.execute(
                insert(tasks),
                [
                    _row(_task("t1", pb.TASK_STATE_WORKING, "c0"), ALICE, 3, chunks=2),
                    _row(_task("t2", pb.TASK_STATE_COMPLETED), BOB, 2),
                ],
            )
            await conn.execute(
                insert(chunks),
                [
                    {"task_id": "t1", "version": 2, "data": _chunk("c1")},
                    {"task_id": "t1", "version": 3, "data": _chunk("c2")},
                ],
            )
            config = pb.TaskPushNotificationConfig(task_id="t1", id="hook", url="https://hooks.example.com/a")
            await conn.execute(
                insert(configs).values(
                    tenant=ALICE.tenant,
                    owner_user=ALICE.user,
                    task_id="t1",
                    id="hook",
                    data=config.SerializeToString(),
                )
            )
            await conn.execute(
                insert(outbox).values(
                    task_id="t1",
                    config_id="hook",
                    event_id="t1:3",
                    payload=b"",
                    attempts=0,
                    next_attempt_at=0.0,
                    state="pending",
                    last_error="",
                )
            )
            if cluster:
                leases, events, claims = (
                    md.tables[f"{prefix}{n}"] for n in ("leases", "task_events", "push_claims")
                )
                await conn.execute(
                    insert(leases).values(
                        task_id="t1",
                        tenant=ALICE.tenant,
                        owner_user=ALICE.user,
                        replica="r0",
                        epoch=10**12,  # (far from the epochs the sequence hands out)
                        expires_at=0.0,
                    )
                )
                event = pb.StreamResponse(task=_task("t1", pb.TASK_STATE_WORKING)).SerializeToString()
                await conn.execute(
                    insert(events).values(task_id="t1", version=1, event=event, final=False, created_at=0.0)
                )
                await conn.execute(
                    insert(claims).values(task_id="t1", config_id="hook", replica="r0", until=0.0)
                )
    finally:
        await engine.dispose()


async def _keys(store: SqlTaskStore) -> dict[str, list[str]]:
    async with store.engine.connect() as conn:
        return await conn.run_sync(
            lambda sync: {
                table.name.removeprefix(store.table_prefix): inspect(sync).get_pk_constraint(table.name)[
                    "constrained_columns"
                ]
                for table in store.schema.metadata.sorted_tables
            }
        )


async def _check_upgraded(store: SqlTaskStore) -> None:
    mine = await store.get("t1", ALICE)
    assert mine is not None and mine.version == 3
    assert [p.text for p in mine.task.artifacts[0].parts] == ["c0", "c1", "c2"]  # the chunks, folded in
    assert await store.get("t1", BOB) is None
    done = await store.get("t2", BOB)
    assert done is not None and done.task.status.state == pb.TASK_STATE_COMPLETED
    (row,) = await store.outbox_due(1.0, 10)
    assert (row.entry.task_id, row.entry.owner) == ("t1", ALICE)  # the config's owner
    assert await store.get_push_target(ALICE, "t1", "hook") is not None
    # Now keyed per owner: bob may hold a t1 of his own, alice no second one.
    assert await store.update(TaskWrite(_task("t1", pb.TASK_STATE_SUBMITTED), BOB)) == 1
    with pytest.raises(TaskExistsError):
        await store.update(TaskWrite(_task("t1", pb.TASK_STATE_SUBMITTED), ALICE))
    appended = _task("t1", pb.TASK_STATE_WORKING, "c0", "c1", "c2", "c3")
    chunk = pb.Artifact(artifact_id="a", parts=[pb.Part(text="c3")])
    assert await store.update(TaskWrite(appended, ALICE, 3, append=chunk)) == 4
    again = await store.get("t1", ALICE)
    assert again is not None and [p.text for p in again.task.artifacts[0].parts] == ["c0", "c1", "c2", "c3"]
    assert (await store.list_tasks(ALICE, ListQuery())).total_size == 1
    assert (await store.list_tasks(BOB, ListQuery())).total_size == 2
    keys = await _keys(store)
    assert keys["tasks"] == ["id", "tenant", "owner_user"]
    assert keys["artifact_chunks"] == ["task_id", "tenant", "owner_user", "version"]


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_an_older_database_is_rekeyed_per_owner_on_open(backend: str, tmp_path: Path) -> None:
    if backend == "postgresql" and (reason := await postgres_skip_reason()):
        pytest.skip(reason)
    url = f"sqlite:///{tmp_path / 'old.db'}" if backend == "sqlite" else PG_URL
    prefix = f"up{uuid.uuid4().hex[:10]}_"
    await _older_database(url, prefix)
    store = SqlTaskStore(url, table_prefix=prefix)
    await store.open()
    try:
        await _check_upgraded(store)
        await store.close()
        await store.open()  # again: nothing left to upgrade
        assert (await store.list_tasks(BOB, ListQuery())).total_size == 2
    finally:
        if backend == "postgresql":
            await store.drop_all()
        await store.close()


@pytest.mark.postgres
async def test_an_older_cluster_database_is_rekeyed_per_owner_on_open() -> None:
    if reason := await postgres_skip_reason():
        pytest.skip(reason)
    prefix = f"upc{uuid.uuid4().hex[:10]}_"
    await _older_database(PG_URL, prefix, cluster=True)
    store = ClusterStore(PG_URL, table_prefix=prefix)
    await store.open()
    try:
        await _check_upgraded(store)
        keys = await _keys(store)
        assert keys["leases"] == ["task_id", "tenant", "owner_user"]
        assert keys["task_events"] == ["task_id", "tenant", "owner_user", "version"]
        assert keys["push_claims"] == ["task_id", "config_id", "tenant", "owner_user"]
        logged = await store.events_after((ALICE.tenant, ALICE.user, "t1"), 0)
        assert [v for v, _e, _f in logged] == [1, 4]  # the old row took its task's owner; 4: the append above
        assert await store.lease_holder(ALICE, "t1") == "r0"
        assert await store.acquire_lease("t1", BOB, "r1", 5.0) is not None  # bob's t1: a lease of its own
        assert await store.acquire_lease("t1", ALICE, "r1", 5.0) is None  # alice's is held
    finally:
        await store.drop_all()
        await store.close()
