"""What only the SQL store has: restart survival, index use, URLs, open_store."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import text
from storekit import ALICE, COMPLETED, WORKING, config, entry, make_sql_store, make_task, unique_prefix

from a2a_grpc.context import Owner
from a2a_grpc.core.ports import TaskWrite
from a2a_grpc.store import (
    InMemoryTaskStore,
    ListQuery,
    OutboxEntry,
    SqlTaskStore,
    TaskExistsError,
    VersionConflictError,
    default_store_url,
    open_store,
)
from a2a_grpc.types import pb


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_tasks_configs_and_pending_outbox_survive_restart(backend: str, tmp_path: Path) -> None:
    prefix = unique_prefix()
    first = await make_sql_store(backend, tmp_path, prefix)
    await first.open()
    try:
        await first.update(TaskWrite(make_task("t1", ts_ms=1000), ALICE))
        await first.update(TaskWrite(make_task("t2", ts_ms=2000), ALICE))
        await first.update(
            TaskWrite(make_task("t1", ts_ms=3000, state=WORKING), ALICE, 1, outbox=[entry("t1", "c1", 2)])
        )
        await first.put_push_config(ALICE, config("t1", "c1"))
        await first.put_push_config(ALICE, config("t1", "c0"))
        old_seq = (await first.outbox_due(time.time() + 1, 10))[0].seq
    finally:
        await first.close()

    second = await make_sql_store(backend, tmp_path, prefix)
    await second.open()
    try:
        got = await second.get("t1", ALICE)
        assert got is not None and got.version == 2 and got.task == make_task("t1", ts_ms=3000, state=WORKING)
        page = await second.list_tasks(ALICE, ListQuery())
        assert [t.id for t in page.tasks] == ["t1", "t2"] and page.total_size == 2
        assert [c.id for c in await second.list_push_configs(ALICE, "t1")] == ["c1", "c0"]
        due = await second.outbox_due(time.time() + 1, 10)
        assert [(r.seq, r.entry, r.state) for r in due] == [(old_seq, entry("t1", "c1", 2), "pending")]
        # Work continues where it stopped: versions and outbox seqs keep growing.
        assert (
            await second.update(
                TaskWrite(make_task("t1", state=COMPLETED), ALICE, 2, outbox=[entry("t1", "c1", 3)])
            )
            == 3
        )
        assert [r.seq for r in await second.outbox_due(time.time() + 1, 10)][-1] > old_seq
    finally:
        if backend == "postgresql":
            await second.drop_all()
        await second.close()


async def _sqlite_plan(store: SqlTaskStore, owner: Owner, query: ListQuery) -> str:
    stmt = store.page_statement(owner, query)
    sql = str(stmt.compile(store.engine.sync_engine, compile_kwargs={"literal_binds": True}))
    async with store.engine.connect() as conn:
        rows = (await conn.execute(text("EXPLAIN QUERY PLAN " + sql))).all()
    return "\n".join(str(r[-1]) for r in rows)


@pytest.mark.parametrize(
    ("query", "index"),
    [
        (ListQuery(), "tasks_owner_ts"),
        (ListQuery(after=(5000, "task-3")), "tasks_owner_ts"),
        (ListQuery(status_timestamp_after_ms=2000), "tasks_owner_ts"),
        (ListQuery(context_id="ctx-1", after=(5000, "task-3")), "tasks_owner_context"),
        (ListQuery(state=WORKING, after=(5000, "task-3")), "tasks_owner_state"),
    ],
    ids=["plain", "cursor", "since", "context", "state"],
)
async def test_sqlite_list_tasks_uses_an_index_and_no_sort(
    tmp_path: Path, query: ListQuery, index: str
) -> None:
    store = SqlTaskStore(f"sqlite:///{tmp_path}/plan.db", table_prefix="p_")
    await store.open()
    try:
        for i in range(40):
            task = make_task(
                f"task-{i}", ts_ms=i * 250, context_id=f"ctx-{i % 4}", state=WORKING if i % 5 else COMPLETED
            )
            await store.update(TaskWrite(task, ALICE if i % 2 else Owner("acme", f"user-{i}")))
        async with store.engine.begin() as conn:
            await conn.execute(text("ANALYZE"))
        plan = await _sqlite_plan(store, ALICE, query)
        assert f"USING INDEX p_{index}" in plan or f"USING COVERING INDEX p_{index}" in plan, plan
        assert "TEMP B-TREE" not in plan, plan
        # The query still answers correctly with that plan.
        page = await store.list_tasks(ALICE, query)
        keys = [(t.status.timestamp.ToMilliseconds(), t.id) for t in page.tasks]
        assert keys == sorted(keys, reverse=True) and keys
        if query.after:
            assert all(k < query.after for k in keys)
    finally:
        await store.close()


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("query", "index"),
    [
        (ListQuery(after=(5000, "task-3")), "tasks_owner_ts"),
        (ListQuery(context_id="ctx-1", after=(5000, "task-3")), "tasks_owner_context"),
        (ListQuery(state=WORKING, after=(5000, "task-3")), "tasks_owner_state"),
    ],
    ids=["cursor", "context", "state"],
)
async def test_postgres_list_tasks_can_use_its_index(tmp_path: Path, query: ListQuery, index: str) -> None:
    # With sequential scans and sorts priced out, the plan shows whether the
    # keyset condition and ORDER BY match an index at all (id collation included).
    prefix = unique_prefix()
    store = await make_sql_store("postgresql", tmp_path, prefix)
    await store.open()
    try:
        for i in range(120):
            task = make_task(f"task-{i}", ts_ms=i * 100, context_id=f"ctx-{i % 12}", state=(i % 6) + 1)
            await store.update(TaskWrite(task, ALICE if i % 2 else Owner("acme", f"user-{i % 10}")))
        async with store.engine.begin() as conn:
            await conn.execute(text(f"ANALYZE {prefix}tasks"))
        sql = str(
            store.page_statement(ALICE, query).compile(
                store.engine.sync_engine, compile_kwargs={"literal_binds": True}
            )
        )
        async with store.engine.begin() as conn:
            await conn.execute(text("SET LOCAL enable_seqscan = off"))
            await conn.execute(text("SET LOCAL enable_sort = off"))
            plan = "\n".join(r[0] for r in (await conn.execute(text("EXPLAIN " + sql))).all())
        assert "Index Scan" in plan and f"{prefix}{index}" in plan, plan
        assert "ROW(status_ts_ms" in plan and "Sort" not in plan, plan
    finally:
        await store.drop_all()
        await store.close()


async def test_sqlite_file_is_created_with_parents_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "a2a.db"
    store = SqlTaskStore(f"sqlite:///{path}")
    await store.open()
    try:
        assert path.is_file()
        async with store.engine.connect() as conn:
            assert (await conn.execute(text("PRAGMA journal_mode"))).scalar_one() == "wal"
    finally:
        await store.close()


async def test_default_store_url_uses_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A2A_GRPC_DATA_DIR", str(tmp_path / "state"))
    url = default_store_url()
    assert url == f"sqlite:///{tmp_path}/state/a2a-grpc.db"
    store = open_store(url)
    await store.open()
    try:
        await store.update(TaskWrite(make_task("t1"), ALICE))
    finally:
        await store.close()
    assert (tmp_path / "state" / "a2a-grpc.db").is_file()

    monkeypatch.delenv("A2A_GRPC_DATA_DIR")
    monkeypatch.chdir(tmp_path)
    assert default_store_url() == f"sqlite:///{tmp_path}/data/a2a-grpc.db"


def test_open_store_picks_the_backend() -> None:
    assert isinstance(open_store("memory"), InMemoryTaskStore)
    lite = open_store("sqlite:///var/a2a.db")
    assert isinstance(lite, SqlTaskStore)
    assert lite.url.drivername == "sqlite+aiosqlite" and lite.url.database == "var/a2a.db"
    pg = open_store("postgresql://postgres@127.0.0.1:5432/test")
    assert isinstance(pg, SqlTaskStore) and pg.url.drivername == "postgresql+asyncpg"
    assert isinstance(open_store("postgres://u@h/db"), SqlTaskStore)
    assert isinstance(open_store("sqlite+aiosqlite:////tmp/x.db"), SqlTaskStore)


@pytest.mark.parametrize(
    "bad", ["", "redis://127.0.0.1:6379", "mysql://u@h/db", "memory:", "/tmp/a2a.db", "sqlite+pysqlite:///x"]
)
def test_open_store_rejects_unknown_values(bad: str) -> None:
    with pytest.raises(ValueError, match="unsupported"):
        open_store(bad)


async def test_sql_store_before_open_says_so(tmp_path: Path) -> None:
    store = SqlTaskStore(f"sqlite:///{tmp_path}/x.db")
    with pytest.raises(RuntimeError, match="open"):
        await store.get("t1", ALICE)


def test_outbox_entry_payload_roundtrip_type() -> None:
    # Payloads are serialized StreamResponses; the store keeps them as bytes.
    resp = pb.StreamResponse(task=make_task("t1"))
    e = OutboxEntry(task_id="t1", config_id="c", event_id="t1:1", payload=resp.SerializeToString())
    assert pb.StreamResponse.FromString(e.payload) == resp


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_two_stores_on_one_database_stay_consistent(backend: str, tmp_path: Path) -> None:
    # Two server processes on one database: each store only keeps what cannot
    # go stale (terminal tasks; facts keyed by version), so each sees the
    # other's writes, and the counts move right whichever store writes.
    prefix = unique_prefix()
    first = await make_sql_store(backend, tmp_path, prefix)
    second = await make_sql_store(backend, tmp_path, prefix)
    await first.open()
    await second.open()
    try:
        await first.update(TaskWrite(make_task("t1", context_id="ctx-a"), ALICE))
        got = await second.get("t1", ALICE)
        assert got is not None and got.version == 1
        assert (
            await first.update(TaskWrite(make_task("t1", context_id="ctx-b", state=WORKING), ALICE, 1)) == 2
        )
        # second remembers version 1 only: its update must lose the race...
        with pytest.raises(VersionConflictError):
            await second.update(TaskWrite(make_task("t1", state=COMPLETED), ALICE, 1))
        # ...while an update at the right version (known without reading) moves
        # the counts from what first wrote, not from what second saw before.
        interrupted = make_task("t1", context_id="ctx-c", state=pb.TASK_STATE_INPUT_REQUIRED)
        assert await second.update(TaskWrite(interrupted, ALICE, 2)) == 3
        assert (await first.list_tasks(ALICE, ListQuery(context_id="ctx-c"))).total_size == 1
        assert (
            await first.update(TaskWrite(make_task("t1", context_id="ctx-b", state=COMPLETED), ALICE, 3)) == 4
        )
        for store in (first, second):
            got = await store.get("t1", ALICE)
            assert got is not None and got.version == 4 and got.task.status.state == COMPLETED
            assert (await store.list_tasks(ALICE, ListQuery(state=WORKING))).total_size == 0
            assert (await store.list_tasks(ALICE, ListQuery(state=COMPLETED))).total_size == 1
            assert (await store.list_tasks(ALICE, ListQuery(context_id="ctx-a"))).total_size == 0
            assert (await store.list_tasks(ALICE, ListQuery(context_id="ctx-c"))).total_size == 0
            assert (await store.list_tasks(ALICE, ListQuery(context_id="ctx-b"))).total_size == 1
            assert (await store.list_tasks(ALICE, ListQuery())).total_size == 1
        # A terminal task read from memory is still a copy, and still owner-checked.
        cached = await first.get("t1", ALICE)
        assert cached is not None
        cached.task.history.clear()
        again = await first.get("t1", ALICE)
        assert again is not None and len(again.task.history) == 1
        assert await first.get("t1", Owner("acme", "bob")) is None
    finally:
        if backend == "postgresql":
            await first.drop_all()
        await first.close()
        await second.close()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
async def test_counts_are_rebuilt_for_a_database_written_without_them(backend: str, tmp_path: Path) -> None:
    prefix = unique_prefix()
    store = await make_sql_store(backend, tmp_path, prefix)
    await store.open()
    try:
        for i in range(7):
            task = make_task(f"t{i}", context_id=f"ctx-{i % 2}", state=WORKING if i % 3 else COMPLETED)
            await store.update(TaskWrite(task, ALICE if i < 5 else Owner("acme", "bob")))
        async with store.engine.begin() as conn:
            await conn.execute(text(f"DROP TABLE {prefix}task_counts"))
    finally:
        await store.close()
    await store.open()
    try:
        await store.update(TaskWrite(make_task("t7", context_id="ctx-1"), Owner("acme", "carol")))
        # A bulk import behind the store's back, while no server runs.
        async with store.engine.begin() as conn:
            await conn.execute(
                text(f"UPDATE {prefix}tasks SET owner_user = 'bob' WHERE owner_user = 'carol'")
            )
            await conn.execute(
                text(
                    f"INSERT INTO {prefix}tasks (id, tenant, owner_user, context_id, state, status_ts_ms,"
                    " version, data) VALUES ('t8', 'acme', 'alice', 'ctx-1', :state, 0, 1, :data)"
                ),
                {
                    "state": WORKING,
                    "data": make_task("t8", context_id="ctx-1", state=WORKING).SerializeToString(),
                },
            )
    finally:
        await store.close()
    await store.open()
    try:
        expected = {
            ListQuery(): 6,
            ListQuery(state=WORKING): 4,
            ListQuery(state=COMPLETED): 2,
            ListQuery(context_id="ctx-0"): 3,
            ListQuery(context_id="ctx-1"): 3,
        }
        for query, total in expected.items():
            assert (await store.list_tasks(ALICE, query)).total_size == total, query
        assert (await store.list_tasks(Owner("acme", "bob"), ListQuery())).total_size == 3
        assert (await store.list_tasks(Owner("acme", "carol"), ListQuery())).total_size == 0
        # ...and kept from there on.
        await store.update(TaskWrite(make_task("t9", context_id="ctx-1"), ALICE))
        assert (await store.list_tasks(ALICE, ListQuery(context_id="ctx-1"))).total_size == 4
    finally:
        if backend == "postgresql":
            await store.drop_all()
        await store.close()


async def test_sqlite_write_that_fails_at_commit_leaves_nothing(tmp_path: Path) -> None:
    # On SQLite the insert and the count changes go to the database together
    # with the COMMIT: a duplicate id must still roll all of them back.
    store = SqlTaskStore(f"sqlite:///{tmp_path}/d.db")
    await store.open()
    try:
        await store.update(TaskWrite(make_task("t1", context_id="ctx-a"), ALICE))
        with pytest.raises(TaskExistsError):
            await store.update(TaskWrite(make_task("t1", context_id="ctx-b", state=WORKING), ALICE))
        assert (await store.list_tasks(ALICE, ListQuery(context_id="ctx-b"))).total_size == 0
        assert (await store.list_tasks(ALICE, ListQuery(state=WORKING))).total_size == 0
        assert (await store.list_tasks(ALICE, ListQuery())).total_size == 1
        # The writer connection is usable afterwards.
        assert await store.update(TaskWrite(make_task("t1", state=WORKING), ALICE, 1)) == 2
        assert (await store.list_tasks(ALICE, ListQuery(state=WORKING))).total_size == 1
    finally:
        await store.close()


async def test_sqlite_update_that_loses_at_commit_leaves_nothing(tmp_path: Path) -> None:
    # On SQLite the compare-and-swap UPDATE travels with the COMMIT: when it
    # finds no row there, the counts and outbox rows of that transaction must
    # not be written either.
    url = f"sqlite:///{tmp_path}/cas.db"
    first, second = SqlTaskStore(url), SqlTaskStore(url)
    await first.open()
    await second.open()
    try:
        await first.update(TaskWrite(make_task("t1", context_id="ctx-a"), ALICE))
        assert await second.get("t1", ALICE) is not None  # second now knows version 1
        assert (
            await first.update(TaskWrite(make_task("t1", context_id="ctx-a", state=WORKING), ALICE, 1)) == 2
        )
        with pytest.raises(VersionConflictError):
            await second.update(
                TaskWrite(
                    make_task("t1", context_id="ctx-b", state=COMPLETED),
                    ALICE,
                    1,
                    outbox=[entry("t1", "c1", 2)],
                )
            )
        assert await second.outbox_count("pending") == 0
        for query, total in [
            (ListQuery(state=WORKING), 1),
            (ListQuery(state=COMPLETED), 0),
            (ListQuery(context_id="ctx-a"), 1),
            (ListQuery(context_id="ctx-b"), 0),
        ]:
            assert (await second.list_tasks(ALICE, query)).total_size == total, query
        got = await second.get("t1", ALICE)
        assert got is not None and got.version == 2 and got.task.status.state == WORKING
        # Both stores write on afterwards.
        assert (
            await second.update(
                TaskWrite(make_task("t1", state=COMPLETED), ALICE, 2, outbox=[entry("t1", "c1", 3)])
            )
            == 3
        )
        assert await first.outbox_count("pending") == 1
    finally:
        await first.close()
        await second.close()


async def test_terminal_task_memory_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Finished tasks are read from memory, within a count and a byte budget;
    # whatever was evicted (or never kept: too large) still reads from the database.
    from a2a_grpc.store._sql import caches

    monkeypatch.setattr(caches, "TERMINAL_CACHE_SIZE", 3)
    monkeypatch.setattr(caches, "TERMINAL_CACHE_BYTES", 16 * 1024)
    store = SqlTaskStore(f"sqlite:///{tmp_path}/lru.db")
    await store.open()
    try:
        big = make_task("big", state=COMPLETED)
        big.artifacts[0].parts[0].text = "x" * 2000  # over 1/16 of the budget
        await store.update(TaskWrite(big, ALICE))
        for i in range(5):
            await store.update(TaskWrite(make_task(f"t{i}", state=WORKING), ALICE))
            await store.update(TaskWrite(make_task(f"t{i}", state=COMPLETED), ALICE, 1))
        kept = store._memory.terminal
        assert list(kept) == [("acme", "alice", f"t{i}") for i in (2, 3, 4)]
        assert store._memory.terminal_bytes == sum(len(data) for data, _v in kept.values())
        for task_id in ["big", "t0", "t1", "t2", "t3", "t4"]:
            got = await store.get(task_id, ALICE)
            assert got is not None and got.task.status.state == COMPLETED, task_id
        assert len(kept) == 3 and ("acme", "alice", "big") not in kept
        assert await store.get("big", ALICE) is not None
    finally:
        await store.close()


@pytest.mark.parametrize("statement", ["insert_task", "get", "old", "update", "count_add", "count_get"])
def test_task_statements_are_the_same_sql_on_sqlite_and_postgresql(statement: str) -> None:
    # Issue 2: one set of SQL for both databases. What may differ is the
    # driver's parameter style, PostgreSQL's parameter casts and the id collation.
    import re

    from sqlalchemy.dialects import postgresql, sqlite

    def normalized(sql: str) -> str:
        sql = re.sub(r"%\(\w+\)s(::\w+)?", "?", sql)
        return sql.replace(' COLLATE "C"', "")

    lite = getattr(SqlTaskStore("sqlite:///x.db")._st, statement).compile(dialect=sqlite.dialect())
    pg = getattr(SqlTaskStore("postgresql://u@h/db")._st, statement).compile(dialect=postgresql.dialect())
    assert normalized(str(pg)) == str(lite)


#: The tasks and task_counts tables as the release before issue 17's layout
#: change created them on SQLite (a descending owner_ts index, counts with rowids).
_OLD_SQLITE_DDL = """
CREATE TABLE o_tasks (
    id VARCHAR NOT NULL, tenant VARCHAR NOT NULL, owner_user VARCHAR NOT NULL, context_id VARCHAR NOT NULL,
    state INTEGER NOT NULL, status_ts_ms BIGINT NOT NULL, version INTEGER NOT NULL, data BLOB NOT NULL,
    chunks INTEGER DEFAULT '0' NOT NULL, PRIMARY KEY (id));
CREATE INDEX o_tasks_owner_ts ON o_tasks (tenant, owner_user, status_ts_ms DESC, id DESC);
CREATE INDEX o_tasks_owner_state ON o_tasks (tenant, owner_user, state, status_ts_ms, id);
CREATE INDEX o_tasks_owner_context ON o_tasks (tenant, owner_user, context_id, status_ts_ms, id);
CREATE TABLE o_task_counts (
    tenant VARCHAR NOT NULL, owner_user VARCHAR NOT NULL, dim VARCHAR(16) NOT NULL, val VARCHAR NOT NULL,
    n BIGINT NOT NULL, CONSTRAINT o_task_counts_key PRIMARY KEY (tenant, owner_user, dim, val));
"""


async def test_sqlite_database_of_the_older_layout_opens_with_every_task_and_count(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.db"
    raw = sqlite3.connect(path)
    raw.executescript(_OLD_SQLITE_DDL)
    tasks = [
        make_task(
            f"task-{i}", ts_ms=1000 + i * 10, context_id=f"ctx-{i % 3}", state=WORKING if i % 2 else COMPLETED
        )
        for i in range(30)
    ]
    for i, task in enumerate(tasks):
        raw.execute(
            "INSERT INTO o_tasks (id, tenant, owner_user, context_id, state, status_ts_ms, version, data)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                task.id,
                ALICE.tenant,
                ALICE.user,
                task.context_id,
                task.status.state,
                1000 + i * 10,
                1,
                task.SerializeToString(),
            ),
        )
    counts = {("all", ""): 30, ("state", str(WORKING)): 15, ("state", str(COMPLETED)): 15}
    counts |= {("context", f"ctx-{k}"): 10 for k in range(3)}
    raw.executemany(
        "INSERT INTO o_task_counts VALUES (?, ?, ?, ?, ?)",
        [(ALICE.tenant, ALICE.user, dim, val, n) for (dim, val), n in counts.items()],
    )
    raw.commit()
    raw.close()

    for reopen in range(2):  # the upgrade, then an open of the upgraded database
        store = SqlTaskStore(f"sqlite:///{path}", table_prefix="o_")
        await store.open()
        try:
            got = await store.get("task-7", ALICE)
            assert got is not None and got.version == 1 and got.task == tasks[7]
            page = await store.list_tasks(ALICE, ListQuery(page_size=50))
            newest_first = sorted(
                tasks, key=lambda t: (t.status.timestamp.ToMilliseconds(), t.id), reverse=True
            )
            assert page.tasks == newest_first and page.total_size == len(tasks)
            in_ctx1 = sum(t.context_id == "ctx-1" for t in tasks)
            assert (await store.list_tasks(ALICE, ListQuery(context_id="ctx-1"))).total_size == in_ctx1
            assert (await store.list_tasks(ALICE, ListQuery(state=WORKING))).total_size == 15
            plan = await _sqlite_plan(store, ALICE, ListQuery(after=(1100, "task-10")))
            assert "o_tasks_owner_ts" in plan and "TEMP B-TREE" not in plan, plan
            async with store.engine.connect() as conn:
                ddl = dict((await conn.execute(text("SELECT name, sql FROM sqlite_master"))).all())
            assert "DESC" not in ddl["o_tasks_owner_ts"] and "WITHOUT ROWID" in ddl["o_task_counts"]
            # Writes go on, and move the rebuilt counts.
            tasks.append(make_task(f"new-{reopen}", ts_ms=5000 + reopen, context_id="ctx-1"))
            await store.update(TaskWrite(tasks[-1], ALICE))
            assert (await store.list_tasks(ALICE, ListQuery(context_id="ctx-1"))).total_size == in_ctx1 + 1
        finally:
            await store.close()


async def test_sqlite_open_creates_the_owner_ts_index_a_crashed_upgrade_dropped(tmp_path: Path) -> None:
    store = SqlTaskStore(f"sqlite:///{tmp_path}/t.db", table_prefix="o_")
    await store.open()
    await store.update(TaskWrite(make_task("t1", ts_ms=1000), ALICE))
    async with store.engine.begin() as conn:
        await conn.execute(text("DROP INDEX o_tasks_owner_ts"))
    await store.close()
    await store.open()
    try:
        plan = await _sqlite_plan(store, ALICE, ListQuery(after=(5000, "t9")))
        assert "o_tasks_owner_ts" in plan and "TEMP B-TREE" not in plan, plan
        assert [t.id for t in (await store.list_tasks(ALICE, ListQuery())).tasks] == ["t1"]
    finally:
        await store.close()
