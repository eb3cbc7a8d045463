"""The SQL store's tasks: the one write door (a creation or a versioned
update, with the push outbox rows it causes), get and ListTasks, and the
task counts they keep.

Tasks are stored as serialized ``pb.Task`` bytes next to the columns ListTasks
filters and sorts on, keyed by (id, tenant, owner_user): a task id names a
task of one owner. Every update is a compare-and-swap on the version column.
The statements are built once per store with bound parameters, so SQLAlchemy
compiles each shape once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Delete,
    Insert,
    Select,
    TextClause,
    Update,
    bindparam,
    delete,
    func,
    insert,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from a2a_grpc.context import Owner
from a2a_grpc.core.ports import (
    Fence,
    ListPage,
    ListQuery,
    OutboxEntry,
    StoredTask,
    TaskExistsError,
    TaskWrite,
    VersionConflictError,
)
from a2a_grpc.protocol._taskupdate import extend_artifact
from a2a_grpc.store._memory import status_ts_ms
from a2a_grpc.store._sql import raw
from a2a_grpc.store._sql.batch import COUNTS_KEY, Job, WriteConnection
from a2a_grpc.store._sql.caches import TaskMemory
from a2a_grpc.store._sql.engine import SqlDatabase
from a2a_grpc.store._sql.outbox import pending_rows
from a2a_grpc.store._sql.schema import Schema
from a2a_grpc.types import is_terminal, pb

__all__ = ["SqlTasks", "TaskStatements"]

#: Moves of the task counts: (dim, val) → +n / -n.
_Deltas = dict[tuple[str, str], int]


@dataclass(frozen=True)
class TaskStatements:
    """The statements every task write or read runs; only bound values
    (``b_*``) change per call."""

    insert_task: Insert
    get: Select[Any]
    old: Select[Any]
    update: Update
    append: Update
    insert_chunk: Insert
    get_chunks: Select[Any]
    delete_chunks: Delete
    insert_outbox: Insert
    count_add: Insert
    count_get: Select[Any]
    #: PostgreSQL: the compare-and-swap update with its count moves in one
    #: statement, for a write alone in its batch (None on SQLite).
    update_alone: TextClause | None
    #: PostgreSQL: a batch of creates as one statement (None on SQLite).
    create_many: TextClause | None

    @classmethod
    def build(cls, schema: Schema, *, sqlite: bool) -> TaskStatements:
        """The statements on ``schema``'s tables; ``sqlite`` picks the
        dialect whose INSERT ... ON CONFLICT the count upsert uses."""
        t, k = schema.tasks.c, schema.chunks.c
        owned = (t.tenant == bindparam("b_tenant"), t.owner_user == bindparam("b_user"))
        chunks_of = (
            k.task_id == bindparam("b_id"),
            k.tenant == bindparam("b_tenant"),
            k.owner_user == bindparam("b_user"),
        )
        at_expected = (t.id == bindparam("b_id"), *owned, t.version == bindparam("b_expected"))
        return cls(
            insert_task=(sqlite_dialect.insert if sqlite else pg_dialect.insert)(
                schema.tasks
            ).on_conflict_do_nothing(),
            get=select(t.data, t.version, t.state, t.chunks).where(t.id == bindparam("b_id"), *owned),
            old=select(t.state, t.context_id, t.chunks).where(*at_expected),
            update=update(schema.tasks)
            .where(*at_expected)
            .values(
                context_id=bindparam("b_context"),
                state=bindparam("b_state"),
                status_ts_ms=bindparam("b_ts"),
                version=bindparam("b_version"),
                data=bindparam("b_data"),
                chunks=0,
            ),
            append=update(schema.tasks)
            .where(*at_expected)
            .values(version=bindparam("b_version"), chunks=t.chunks + 1),
            insert_chunk=insert(schema.chunks),
            get_chunks=select(k.data)
            .where(*chunks_of, k.version <= bindparam("b_version"))
            .order_by(k.version),
            delete_chunks=delete(schema.chunks).where(*chunks_of),
            insert_outbox=insert(schema.outbox),
            count_add=_count_upsert(schema, sqlite=sqlite),
            count_get=select(schema.counts.c.n).where(
                schema.counts.c.tenant == bindparam("b_tenant"),
                schema.counts.c.owner_user == bindparam("b_user"),
                schema.counts.c.dim == bindparam("b_dim"),
                schema.counts.c.val == bindparam("b_val"),
            ),
            update_alone=None if sqlite else _update_counted(schema),
            create_many=None if sqlite else _create_many(schema),
        )


def _update_counted(schema: Schema) -> TextClause:
    """PostgreSQL: the compare-and-swap UPDATE of a whole task and the count
    moves it causes (``b_dims``, ``b_vals``, ``b_ns``: arrays in key order, so
    row locks are taken in the batch flush's order) in one statement of
    data-modifying CTEs; the moves apply only when the row was updated.
    Returns the rows updated (0: a compare-and-swap miss, nothing written)."""
    quote = pg_dialect.dialect().identifier_preparer.format_table
    tasks, counts = quote(schema.tasks), quote(schema.counts)
    return text(
        f"""WITH w AS (
    UPDATE {tasks} SET context_id = :b_context, state = :b_state, status_ts_ms = :b_ts,
        version = :b_version, data = :b_data, chunks = 0
    WHERE id = :b_id AND tenant = :b_tenant AND owner_user = :b_user AND version = :b_expected
    RETURNING 1
), moved AS (
    INSERT INTO {counts} (tenant, owner_user, dim, val, n)
    SELECT :b_tenant, :b_user, m.dim, m.val, m.n
    FROM unnest(CAST(:b_dims AS TEXT[]), CAST(:b_vals AS TEXT[]), CAST(:b_ns AS BIGINT[])) AS m(dim, val, n)
    WHERE EXISTS (SELECT 1 FROM w)
    ON CONFLICT (tenant, owner_user, dim, val) DO UPDATE SET n = {counts}.n + excluded.n
)
SELECT count(*) FROM w"""
    )


def _create_many(schema: Schema) -> TextClause:
    """PostgreSQL: inserts the rows of arrays ``b_id``, ``b_tenant``, ...
    (ON CONFLICT DO NOTHING) and moves the counts of the rows inserted, summed
    and in the key order of the batch flush (``COLLATE "C"``: Python's str
    order), in one statement; returns the keys (id, tenant, owner_user) inserted."""
    quote = pg_dialect.dialect().identifier_preparer.format_table
    tasks, counts = quote(schema.tasks), quote(schema.counts)
    columns = {"id": "TEXT", "tenant": "TEXT", "owner_user": "TEXT", "context_id": "TEXT"}
    columns |= {"state": "INTEGER", "status_ts_ms": "BIGINT", "version": "INTEGER", "data": "BYTEA"}
    arrays = ", ".join(f"CAST(:b_{name} AS {kind}[])" for name, kind in columns.items())
    key = 'tenant COLLATE "C", owner_user COLLATE "C", dim COLLATE "C", val COLLATE "C"'
    return text(
        f"""WITH w AS (
    INSERT INTO {tasks} ({", ".join(columns)}) SELECT * FROM unnest({arrays})
    ON CONFLICT DO NOTHING RETURNING id, tenant, owner_user, context_id, state
), m AS (
    SELECT tenant, owner_user, 'all' AS dim, '' AS val FROM w
    UNION ALL SELECT tenant, owner_user, 'state', CAST(state AS TEXT) FROM w
    UNION ALL SELECT tenant, owner_user, 'context', context_id FROM w
), moved AS (
    INSERT INTO {counts} (tenant, owner_user, dim, val, n)
    SELECT tenant, owner_user, dim, val, count(*) FROM m GROUP BY tenant, owner_user, dim, val ORDER BY {key}
    ON CONFLICT (tenant, owner_user, dim, val) DO UPDATE SET n = {counts}.n + excluded.n
)
SELECT id, tenant, owner_user FROM w"""
    )


def _count_arrays(owner: Owner, deltas: _Deltas) -> dict[str, Any]:
    """The bound values of ``update_alone``'s count moves."""
    moves = sorted((key, n) for key, n in deltas.items() if n)
    return {
        "b_tenant": owner.tenant,
        "b_user": owner.user,
        "b_dims": [dim for (dim, _val), _n in moves],
        "b_vals": [val for (_dim, val), _n in moves],
        "b_ns": [n for _key, n in moves],
    }


def _count_upsert(schema: Schema, *, sqlite: bool) -> Insert:
    """INSERT ... ON CONFLICT (key) DO UPDATE n = n + excluded.n: the same SQL
    on SQLite ≥ 3.24 and PostgreSQL ≥ 9.5."""
    k = schema.counts.c
    dialect_insert = sqlite_dialect.insert if sqlite else pg_dialect.insert
    upsert = dialect_insert(schema.counts).values(
        tenant=bindparam("b_tenant"),
        owner_user=bindparam("b_user"),
        dim=bindparam("b_dim"),
        val=bindparam("b_val"),
        n=bindparam("b_n"),
    )
    return upsert.on_conflict_do_update(
        index_elements=[k.tenant, k.owner_user, k.dim, k.val],
        set_={"n": k.n + upsert.excluded.n},
    )


#: SQLite: count moves per upsert statement at most (its SQL texts are cached
#: by row count; far below SQLite's limit of bound values).
_COUNT_ROWS = 64


def _sqlite_count_upsert(schema: Schema, rows: int) -> str:
    """SQLite: the upsert of ``rows`` count moves in one statement (five
    positional values a row: tenant, owner_user, dim, val, n; distinct keys)."""
    counts = sqlite_dialect.dialect().identifier_preparer.format_table(schema.counts)
    values = ", ".join(["(?, ?, ?, ?, ?)"] * rows)
    return (
        f"INSERT INTO {counts} (tenant, owner_user, dim, val, n) VALUES {values} "
        f"ON CONFLICT (tenant, owner_user, dim, val) DO UPDATE SET n = {counts}.n + excluded.n"
    )


def _count_moves(old: tuple[int, str], state: int, context_id: str) -> _Deltas:
    """How an update from (state, contextId) ``old`` to ``state`` and
    ``context_id`` moves the counts (the total never moves)."""
    old_state, old_context = old
    deltas: _Deltas = {}
    if old_state != state:
        deltas[("state", str(old_state))] = -1
        deltas[("state", str(state))] = 1
    if old_context != context_id:
        deltas[("context", old_context)] = -1
        deltas[("context", context_id)] = 1
    return deltas


def _task_row(
    task: pb.Task, owner: Owner, data: bytes, events: Sequence[pb.StreamResponse]
) -> dict[str, Any]:
    """The tasks row a creation inserts."""
    return {
        "id": task.id,
        "tenant": owner.tenant,
        "owner_user": owner.user,
        "context_id": task.context_id,
        "state": task.status.state,
        "status_ts_ms": status_ts_ms(task),
        "version": max(1, len(events)),
        "data": data,
    }


def _alone(conn: WriteConnection) -> bool:
    """Whether ``conn``'s next statement may run alone: PostgreSQL's writer,
    a write alone in its batch that has run nothing yet (see
    :meth:`~a2a_grpc.store._sql.raw.AsyncpgConnection.execute_alone`)."""
    return bool(getattr(conn, "alone", False))


def _folded(data: bytes, chunks: int, rows: Any) -> pb.Task | None:
    """The task ``data`` with its ``chunks`` artifact chunk ``rows`` folded
    in; None when the rows are not all there (a concurrent whole write removed them: read again)."""
    task = pb.Task.FromString(data)
    if not chunks:
        return task
    if len(rows) != chunks:
        return None
    for chunk in rows:
        extend_artifact(task, pb.Artifact.FromString(chunk))
    return task


class SqlTasks(SqlDatabase):
    """The task half of the store (the ``TaskStore`` methods)."""

    def __init__(self, url: str, *, table_prefix: str = "a2a_", echo: bool = False) -> None:
        super().__init__(url, table_prefix=table_prefix, echo=echo)
        self._st = TaskStatements.build(self.schema, sqlite=self._is_sqlite)
        self._memory = TaskMemory()
        #: SQLite: the count upsert's SQL text by number of rows (:meth:`_flush_counts`).
        self._count_sql: dict[int, str] = {}

    async def close(self) -> None:
        """Forgets what is cached and closes every pooled connection;
        ``open()`` may be called again."""
        self._memory.clear()
        await super().close()

    async def drop_all(self) -> None:
        """Drops this store's tables (tests and maintenance; not part of the store protocols)."""
        self._memory.clear()
        await super().drop_all()

    #: Whether this store keeps a task-event log (see :meth:`log_events`).
    keeps_events = False

    async def update(self, write: TaskWrite) -> int:
        """The one write door (:class:`~a2a_grpc.core.ports.TaskWrite`): a
        creation (``expected_version`` 0: an INSERT, counted) or a versioned
        update, group-committed; returns the new version.

        Raises TaskExistsError when the owner already holds a created id;
        VersionConflictError (nothing written) when no row matched: the
        version moved on, or the task is missing or not the owner's; with a
        ``fence``, LeaseLostError when its lease no longer holds (see
        :meth:`check_fence`)."""
        if write.expected_version == 0:
            return await self._create(write)
        return await self._update(write)

    async def _create(self, write: TaskWrite) -> int:
        """Inserts the task (and counts it) at version 1, or at
        ``len(events)`` given the stream events that made it (logged as
        versions 1, 2, ... by a store that keeps events)."""
        task, owner = write.task, write.owner
        data = task.SerializeToString()
        version = write.version
        await self._run_write(self._create_tx, task, owner, data, write.fence, write.events)
        self._memory.record(
            (owner.tenant, owner.user, task.id), version, task.status.state, task.context_id, data
        )
        return version

    def _create_tx(
        self,
        conn: WriteConnection,
        task: pb.Task,
        owner: Owner,
        data: bytes,
        fence: Fence | None = None,
        events: Sequence[pb.StreamResponse] = (),
    ) -> None:
        if fence is not None:
            self.check_fence(conn, fence, creating=True)
        state = task.status.state
        row = _task_row(task, owner, data, events)
        # ON CONFLICT DO NOTHING: a taken id is decided here, with no database
        # error, so the rest of the batch commits (see store.sql.batch).
        if conn.execute(self._st.insert_task, row).rowcount != 1:
            raise TaskExistsError(task.id)
        self._add_counts(
            conn, owner, {("all", ""): 1, ("state", str(state)): 1, ("context", task.context_id): 1}
        )
        if self.keeps_events:
            self.log_events(conn, owner, task.id, 1, events or (pb.StreamResponse(task=task),))
        if fence is not None:
            self.fenced_write_done(conn, task, owner, fence, creating=True)

    def _run_together(self, conn: Any, jobs: list[Job]) -> bool:
        """PostgreSQL: a batch of plain creates (no fence, no event log,
        distinct tasks; one create alone too) as one statement (:func:`_create_many`), with no BEGIN
        and COMMIT; a taken id fails its caller alone. False, with nothing
        run, for any other batch; also when the statement fails (a database
        error: nothing was written, the batch goes through
        :func:`~a2a_grpc.store._sql.batch.run_batch`, which finds the write to blame)."""
        if self._st.create_many is None or self.keeps_events:
            return False
        rows = []
        for job in jobs:
            if job.body != self._create_tx or job.args[3] is not None:  # (task, owner, data, fence, events)
                return False
            task, owner, data, _fence, events = job.args
            rows.append(_task_row(task, owner, data, events))
        keys = [(row["id"], row["tenant"], row["owner_user"]) for row in rows]
        if len(set(keys)) != len(rows):
            return False
        tx = raw.AsyncpgTransactions(conn, lazy=True)
        tx.begin()
        # Two processes take key locks in one order.
        in_order = sorted(rows, key=lambda row: (row["id"], row["tenant"], row["owner_user"]))
        params = {f"b_{name}": [row[name] for row in in_order] for name in rows[0]}
        try:
            inserted = {tuple(r) for r in conn.execute_alone(self._st.create_many, params).all()}
        except DBAPIError:
            if conn.commit_sent and conn.raw.is_closed():
                raise  # lost after it was sent: the outcome is unknown
            return False
        for job, key in zip(jobs, keys, strict=True):
            job.result = None
            job.error = None if key in inserted else TaskExistsError(key[0])
        return True

    async def get(self, task_id: str, owner: Owner) -> StoredTask | None:
        """The task and its version, or None when missing or not ``owner``'s;
        artifact chunks stored apart are folded in.

        Terminal tasks come from memory after their first read or write."""
        key = (owner.tenant, owner.user, task_id)
        cached = self._memory.cached_terminal(key)
        if cached is not None:
            return StoredTask(pb.Task.FromString(cached[0]), cached[1])
        params = {"b_id": task_id, "b_tenant": owner.tenant, "b_user": owner.user}
        for _attempt in range(5):
            row = self._point_read(params)
            if row is None:
                row = await self._engine_read(params)
            if not row:
                return None
            data, version, state, chunks, chunk_rows = row
            task = _folded(data, chunks, chunk_rows)
            if task is not None:
                break
        else:
            raise VersionConflictError(task_id)  # rewritten under every read: practically impossible
        if chunks:
            data = task.SerializeToString() if is_terminal(state) else b""
        self._memory.record(key, version, state, task.context_id, bytes(data), chunks)
        return StoredTask(task, version)

    def _point_read(self, params: dict[str, Any]) -> tuple[Any, ...] | None:
        """SQLite: the task row and its chunks read on the event loop's own
        ``sqlite3`` connection (~10 µs, where a read through aiosqlite's
        thread costs ~400 µs of CPU); () when there is no such task, None when
        this cannot read here (PostgreSQL, an in-memory database, or SQLite
        busy: the caller reads through the engine instead). Indexed point
        reads only: a WAL reader takes no lock the writer holds, and the busy
        timeout is 0, so the loop never waits on the database."""
        conn = self._loop_reader()
        if conn is None:
            return None
        try:
            row = conn.execute(self._st.get, params).first()
            if row is None:
                return ()
            rows = (
                conn.execute(self._st.get_chunks, {**params, "b_version": row[1]}).scalars() if row[3] else []
            )
        except DBAPIError:
            return None
        return (*row, rows)

    async def _engine_read(self, params: dict[str, Any]) -> tuple[Any, ...]:
        async with self.engine.connect() as conn:
            row = (await conn.execute(self._st.get, params)).first()
            if row is None:
                return ()
            rows: Any = []
            if row[3]:
                chunk_rows = {**params, "b_version": row[1]}
                rows = (await conn.execute(self._st.get_chunks, chunk_rows)).scalars().all()
        return (*row, rows)

    async def _fold(
        self, conn: AsyncConnection, owner: Owner, task_id: str, version: int, chunks: int, data: bytes
    ) -> pb.Task | None:
        """The task row's ``data`` with its ``chunks`` artifact chunks (up to
        ``version``) folded in; None when a concurrent whole write removed
        them between the two reads (read again)."""
        if not chunks:
            return pb.Task.FromString(data)
        params = {"b_id": task_id, "b_tenant": owner.tenant, "b_user": owner.user, "b_version": version}
        rows = (await conn.execute(self._st.get_chunks, params)).scalars().all()
        return _folded(data, chunks, rows)

    async def _update(self, write: TaskWrite) -> int:
        """``UPDATE ... WHERE id AND owner AND version = expected_version``,
        the count changes (when the state or contextId moved) and the outbox
        inserts, in one transaction; returns the new version. An ``append``
        chunk is inserted on its own (the task row only moves its version);
        any other update writes the whole task and drops its chunks. The
        events go to the task-event log of a store that keeps one
        (:attr:`keeps_events`), as versions ``expected_version + 1``, ...."""
        task, owner, expected_version, events, outbox, fence, append = write
        if len(events) > 1:
            append = None  # several events: the task is written whole
        version = write.version
        where = {
            "b_id": task.id,
            "b_tenant": owner.tenant,
            "b_user": owner.user,
            "b_expected": expected_version,
        }
        key = (owner.tenant, owner.user, task.id)
        known = self._memory.known(key, expected_version)
        data = b"" if append is not None else task.SerializeToString()
        chunks = await self._run_write(
            self._update_tx, task, owner, where, version, data, known, outbox, append, fence, events
        )
        if not data and is_terminal(task.status.state):  # an append refused as such: cache it whole
            data = task.SerializeToString()
        self._memory.record(key, version, task.status.state, task.context_id, data, chunks)
        return version

    def _update_tx(
        self,
        conn: WriteConnection,
        task: pb.Task,
        owner: Owner,
        where: dict[str, Any],
        version: int,
        data: bytes,
        known: tuple[int, str, int] | None,
        outbox: Sequence[OutboxEntry],
        append: pb.Artifact | None,
        fence: Fence | None = None,
        events: Sequence[pb.StreamResponse] = (),
    ) -> int:
        """The body of ``_update``; ``known`` is the stored (state, contextId,
        chunks) at the expected version when remembered, else it is read
        here. Returns the chunks the task row has now."""
        if fence is not None:
            self.check_fence(conn, fence)
        state, context_id = task.status.state, task.context_id
        if known is None:
            old = conn.execute(self._st.old, where).first()
            if old is None:
                raise VersionConflictError(task.id)
            known = (old[0], old[1], old[2])
        if append is not None and (state, context_id) == known[:2]:
            chunks = self._append_rows(conn, task, where, version, append, known[2])
        else:
            chunks = 0
            alone = not (outbox or known[2] or fence or self.keeps_events) and _alone(conn)
            self._write_whole(conn, task, owner, where, version, data, known, alone)
        if outbox:
            conn.execute(self._st.insert_outbox, pending_rows(outbox, time.time(), owner))
        if self.keeps_events:
            first = version - len(events) + 1 if events else version
            self.log_events(conn, owner, task.id, first, events or (pb.StreamResponse(task=task),))
        if fence is not None:
            self.fenced_write_done(conn, task, owner, fence, creating=False)
        return chunks

    def _write_whole(
        self,
        conn: WriteConnection,
        task: pb.Task,
        owner: Owner,
        where: dict[str, Any],
        version: int,
        data: bytes,
        known: tuple[int, str, int],
        alone: bool,
    ) -> None:
        """The compare-and-swap UPDATE of the whole task (dropping its
        chunks) and its count moves; ``alone``: the write's only statement
        (PostgreSQL, a write alone in its batch), the moves in it."""
        state, context_id = task.status.state, task.context_id
        params = {
            **where,
            "b_context": context_id,
            "b_state": state,
            "b_ts": status_ts_ms(task),
            "b_version": version,
            "b_data": data or task.SerializeToString(),
        }
        moves = _count_moves(known[:2], state, context_id)
        if alone and self._st.update_alone is not None:
            if not moves:
                written = conn.execute_alone(self._st.update, params).rowcount
            else:
                written = conn.execute_alone(self._st.update_alone, {**params, **_count_arrays(owner, moves)})
                written = written.scalar_one()
            if written != 1:
                raise VersionConflictError(task.id)
            return
        if conn.execute(self._st.update, params).rowcount != 1:
            raise VersionConflictError(task.id)
        if known[2]:
            conn.execute(self._st.delete_chunks, {k: where[k] for k in ("b_id", "b_tenant", "b_user")})
        self._add_counts(conn, owner, moves)

    def log_events(
        self,
        conn: WriteConnection,
        owner: Owner,
        task_id: str,
        first: int,
        events: Sequence[pb.StreamResponse],
    ) -> None:
        """Inside a task write: appends the events that made ``owner``'s task
        versions ``first``, ``first + 1``, ... to the task-event log (only
        called when :attr:`keeps_events`; the cluster store keeps them). A
        write given no event logs the task snapshot."""
        raise NotImplementedError

    def check_fence(self, conn: WriteConnection, fence: Fence, *, creating: bool = False) -> None:
        """Inside a write transaction, before its first row (``creating``: the
        write inserts the task): raises LeaseLostError unless ``fence``'s
        lease still holds. This store keeps no leases (ValueError); the
        cluster store (:mod:`a2a_grpc.cluster._store`) does."""
        raise ValueError(f"{type(self).__name__} keeps no execution leases: use the cluster store")

    def fenced_write_done(
        self, conn: WriteConnection, task: pb.Task, owner: Owner, fence: Fence, *, creating: bool
    ) -> None:
        """Inside a fenced write's transaction, after its rows (``task`` as
        written): what the lease store adds to it (the cluster store takes or
        drops the lease here). Nothing in this store: :meth:`check_fence`
        already refused the write."""

    def _append_rows(
        self,
        conn: WriteConnection,
        task: pb.Task,
        where: dict[str, Any],
        version: int,
        chunk: pb.Artifact,
        had: int,
    ) -> int:
        """Moves the task row to ``version`` and stores ``chunk`` apart;
        returns the task's chunk count now."""
        result = conn.execute(self._st.append, {**where, "b_version": version})
        if result.rowcount != 1:
            raise VersionConflictError(task.id)
        row = {"task_id": task.id, "tenant": where["b_tenant"], "owner_user": where["b_user"]}
        conn.execute(self._st.insert_chunk, {**row, "version": version, "data": chunk.SerializeToString()})
        return had + 1

    def _add_counts(self, conn: WriteConnection, owner: Owner, deltas: _Deltas) -> None:
        """Moves the task counts by ``deltas``: inside a group commit the
        moves are summed over the batch and written once before its COMMIT
        (:meth:`_flush_counts`); otherwise at once."""
        pending: dict[Any, int] | None = conn.info.get(COUNTS_KEY)
        if pending is None:
            self._flush_counts(conn, {(owner.tenant, owner.user, *key): n for key, n in deltas.items()})
            return
        for (dim, val), n in deltas.items():
            key = (owner.tenant, owner.user, dim, val)
            pending[key] = pending.get(key, 0) + n

    def _flush_counts(self, conn: WriteConnection, counts: dict[Any, int]) -> None:
        """Writes summed count moves ((tenant, user, dim, val) → n) in one
        statement. Rows go in key order, so concurrent PostgreSQL
        transactions lock them in one order (no deadlock)."""
        moves = [(key, n) for key, n in sorted(counts.items()) if n]
        if not moves:
            return
        if isinstance(conn, raw.SqliteConnection):
            # One multi-row upsert: one step of the writer (its GIL handoffs)
            # instead of one per row, and positional values, no dicts.
            for at in range(0, len(moves), _COUNT_ROWS):
                part = moves[at : at + _COUNT_ROWS]
                sql = self._count_sql.get(len(part))
                if sql is None:
                    sql = self._count_sql.setdefault(len(part), _sqlite_count_upsert(self.schema, len(part)))
                conn.execute_sql(sql, [v for key, n in part for v in (*key, n)])
            return
        conn.execute(
            self._st.count_add,
            [
                {"b_tenant": tenant, "b_user": user, "b_dim": dim, "b_val": val, "b_n": n}
                for (tenant, user, dim, val), n in moves
            ],
        )

    def _filters(self, owner: Owner, query: ListQuery) -> list[Any]:
        t = self.schema.tasks.c
        conds: list[Any] = [t.tenant == owner.tenant, t.owner_user == owner.user]
        if query.context_id:
            conds.append(t.context_id == query.context_id)
        if query.state:
            conds.append(t.state == query.state)
        if query.status_timestamp_after_ms is not None:
            conds.append(t.status_ts_ms >= query.status_timestamp_after_ms)
        return conds

    def page_statement(self, owner: Owner, query: ListQuery) -> Select[Any]:
        """The keyset-paginated SELECT behind ``list_tasks`` (one row more
        than the page, to tell whether more follow)."""
        t = self.schema.tasks.c
        conds = self._filters(owner, query)
        if query.after is not None:
            conds.append(tuple_(t.status_ts_ms, t.id) < tuple_(*query.after))
        return (
            select(t.id, t.version, t.chunks, t.data)
            .where(*conds)
            .order_by(t.status_ts_ms.desc(), t.id.desc())
            .limit(query.page_size + 1)
        )

    @staticmethod
    def count_key(query: ListQuery) -> tuple[str, str] | None:
        """The ``task_counts`` row that holds ``query``'s total, or None when
        the filters combine (contextId and state, or a status timestamp bound)
        and the total needs a COUNT."""
        if query.status_timestamp_after_ms is not None or (query.context_id and query.state):
            return None
        if query.context_id:
            return ("context", query.context_id)
        if query.state:
            return ("state", str(query.state))
        return ("all", "")

    async def list_tasks(self, owner: Owner, query: ListQuery) -> ListPage:
        """One page of ``owner``'s tasks, newest status first, ties by id
        descending, after the keyset cursor ``query.after`` (spec §3.1.4).

        ``total_size`` is read from the task counts for no filter, one
        contextId or one state, and is a COUNT with the same filters otherwise."""
        key = self.count_key(query)
        async with self.engine.connect() as conn:
            if key is None:
                count = (
                    select(func.count()).select_from(self.schema.tasks).where(*self._filters(owner, query))
                )
                total = (await conn.execute(count)).scalar_one()
            else:
                params = {"b_tenant": owner.tenant, "b_user": owner.user, "b_dim": key[0], "b_val": key[1]}
                total = (await conn.execute(self._st.count_get, params)).scalar_one_or_none() or 0
            rows = (await conn.execute(self.page_statement(owner, query))).all()
            tasks: list[pb.Task] = []
            for task_id, version, chunks, data in rows[: query.page_size]:
                task = await self._fold(conn, owner, task_id, version, chunks, data)
                if task is None:  # rewritten meanwhile: read it again on its own
                    stored = await self.get(task_id, owner)
                    if stored is None:
                        continue
                    task = stored.task
                tasks.append(task)
        return ListPage(tasks=tasks, has_more=len(rows) > query.page_size, total_size=int(total))

    async def active_tasks(
        self, limit: int, after: tuple[str, str, str] = ("", "", "")
    ) -> list[tuple[Owner, StoredTask]]:
        """Up to ``limit`` tasks of every owner that are SUBMITTED or WORKING,
        in (id, tenant, user) order, starting after the task ``after`` (that
        triple): crash recovery's scan (:mod:`a2a_grpc.cluster._recovery`;
        not part of the store protocols)."""
        t = self.schema.tasks.c
        stmt = (
            select(t.tenant, t.owner_user, t.data, t.version)
            .where(
                t.state.in_((pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)),
                tuple_(t.id, t.tenant, t.owner_user) > tuple_(*after),
            )
            .order_by(t.id, t.tenant, t.owner_user)
            .limit(limit)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).all()
        return [(Owner(r[0], r[1]), StoredTask(pb.Task.FromString(r[2]), r[3])) for r in rows]
