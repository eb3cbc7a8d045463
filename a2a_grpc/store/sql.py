"""A TaskStore in any SQL database SQLAlchemy's asyncio API can reach.

SQLite (through ``aiosqlite``) is the embedded default; PostgreSQL (through
``asyncpg``) runs the very same statements. Tasks are stored as serialized
``pb.Task`` bytes next to the columns ListTasks filters and sorts on, and every
update is a compare-and-swap on a version column (design.md, "terminal is
final"). Push configs and the push outbox live in the same database, so an
update and the notifications it causes commit together or not at all.

Tables (names start with ``table_prefix``, ``a2a_`` by default):

- ``tasks``: id, tenant, owner_user, context_id, state, status_ts_ms, version, data
- ``push_configs``: seq (creation order), tenant, owner_user, task_id, id, data
- ``push_outbox``: seq, task_id, config_id, event_id, payload, attempts,
  next_attempt_at (Unix seconds), state, last_error
- ``task_counts``: tenant, owner_user, dim, val, n — how many tasks each owner
  has in all (dim ``all``), per state (dim ``state``, val the enum number) and
  per contextId (dim ``context``), kept by the same transaction as every task
  write, so ListTasks' ``totalSize`` is one primary-key lookup instead of a
  ``COUNT(*)`` over the matching rows (combined filters still count). On
  PostgreSQL one owner's concurrent task writes therefore queue on that
  owner's count rows until each commits (rows are taken in key order: no
  deadlock); different owners never meet. ``open()`` rebuilds the counts when
  they disagree with the tasks (tasks written without the store).

Speed (issue 6, hot spots 1 and 6): statements are built once with bound
parameters (SQLAlchemy compiles each shape once and reuses it from its
compiled cache); a task write is one transaction whose statements run in one
greenlet (``run_sync``), with only the statements the change needs; terminal
tasks, which never change again (spec §9.1), are served from a small bounded
cache. On SQLite every call into aiosqlite is a round trip to its worker
thread; SQLAlchemy's stock aiosqlite adapter is used as it is (no driver
internals), so that cost remains and is the main difference to raw sqlite3.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import (
    BigInteger,
    Column,
    Double,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Select,
    String,
    Table,
    Text,
    UniqueConstraint,
    bindparam,
    cast,
    delete,
    event,
    func,
    insert,
    literal,
    select,
    tuple_,
    update,
)
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from a2a_grpc.context import Owner
from a2a_grpc.store.base import (
    ListPage,
    ListQuery,
    OutboxEntry,
    OutboxRecord,
    StoredTask,
    TaskExistsError,
    VersionConflictError,
)
from a2a_grpc.store.memory import status_ts_ms
from a2a_grpc.types import is_terminal, pb

__all__ = ["SqlTaskStore", "async_url"]

# Autoincrementing 64-bit keys; SQLite only autoincrements an INTEGER PRIMARY KEY.
_SeqType = BigInteger().with_variant(Integer(), "sqlite")
# Task ids sort by code point everywhere (the ListTasks tiebreak), whatever the
# PostgreSQL database's default collation is.
_IdType = String().with_variant(String(collation="C"), "postgresql")

_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "sqlite+aiosqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
    "postgresql+asyncpg": "postgresql+asyncpg",
}


def async_url(url: str) -> URL:
    """Maps a store URL to its asyncio driver: ``sqlite:///PATH`` to
    ``sqlite+aiosqlite:///PATH`` and ``postgresql://...`` (or ``postgres://``)
    to ``postgresql+asyncpg://...``.

    Raises ValueError for anything else."""
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise ValueError(f"not a database URL: {url!r}") from exc
    driver = _DRIVERS.get(parsed.drivername)
    if driver is None:
        raise ValueError(
            f"unsupported database URL scheme {parsed.drivername!r} in {url!r}: "
            "use sqlite:///PATH or postgresql://USER@HOST/DB"
        )
    return parsed.set(drivername=driver)


def _schema(prefix: str) -> tuple[MetaData, Table, Table, Table, Table]:
    md = MetaData()
    tasks = Table(
        f"{prefix}tasks",
        md,
        Column("id", _IdType, primary_key=True),
        Column("tenant", String(), nullable=False),
        Column("owner_user", String(), nullable=False),
        Column("context_id", String(), nullable=False),
        Column("state", Integer(), nullable=False),
        Column("status_ts_ms", BigInteger(), nullable=False),
        Column("version", Integer(), nullable=False),
        Column("data", LargeBinary(), nullable=False),
    )
    c = tasks.c
    Index(f"{prefix}tasks_owner_ts", c.tenant, c.owner_user, c.status_ts_ms.desc(), c.id.desc())
    Index(f"{prefix}tasks_owner_context", c.tenant, c.owner_user, c.context_id, c.status_ts_ms, c.id)
    Index(f"{prefix}tasks_owner_state", c.tenant, c.owner_user, c.state, c.status_ts_ms, c.id)

    configs = Table(
        f"{prefix}push_configs",
        md,
        Column("seq", _SeqType, primary_key=True, autoincrement=True),
        Column("tenant", String(), nullable=False),
        Column("owner_user", String(), nullable=False),
        Column("task_id", String(), nullable=False),
        Column("id", String(), nullable=False),
        Column("data", LargeBinary(), nullable=False),
        # Leading (task_id, id) also serves the push dispatcher's owner-less lookup.
        UniqueConstraint("task_id", "id", "tenant", "owner_user", name=f"{prefix}push_configs_key"),
    )
    Index(
        f"{prefix}push_configs_task",
        configs.c.tenant,
        configs.c.owner_user,
        configs.c.task_id,
        configs.c.seq,
    )

    outbox = Table(
        f"{prefix}push_outbox",
        md,
        Column("seq", _SeqType, primary_key=True, autoincrement=True),
        Column("task_id", String(), nullable=False),
        Column("config_id", String(), nullable=False),
        Column("event_id", String(), nullable=False),
        Column("payload", LargeBinary(), nullable=False),
        Column("attempts", Integer(), nullable=False, default=0),
        Column("next_attempt_at", Double(), nullable=False),
        Column("state", String(16), nullable=False),
        Column("last_error", Text(), nullable=False, default=""),
    )
    o = outbox.c
    Index(f"{prefix}push_outbox_due", o.state, o.next_attempt_at, o.seq)
    Index(f"{prefix}push_outbox_config", o.task_id, o.config_id, o.state)

    counts = Table(
        f"{prefix}task_counts",
        md,
        Column("tenant", String(), nullable=False),
        Column("owner_user", String(), nullable=False),
        Column("dim", String(16), nullable=False),  # "all", "state" or "context"
        Column("val", String(), nullable=False),  # "", the state number, the contextId
        Column("n", BigInteger(), nullable=False),
        PrimaryKeyConstraint("tenant", "owner_user", "dim", "val", name=f"{prefix}task_counts_key"),
    )
    return md, tasks, configs, outbox, counts


#: Terminal tasks kept in memory per store (spec §9.1: they never change
#: again): at most this many, and this many bytes of serialized tasks (a task
#: larger than 1/16 of it is not kept).
TERMINAL_CACHE_SIZE = 4096
TERMINAL_CACHE_BYTES = 32 * 1024 * 1024
#: (version, tenant, user, state, contextId) remembered per task id, so an
#: update knows which counts it moves without reading the row first.
_META_CACHE_SIZE = 16384

_Meta = tuple[int, str, str, int, str]
_T = TypeVar("_T")


def _in_transaction(conn: Connection, body: Callable[..., _T], *args: Any) -> _T:
    with conn.begin():
        return body(conn, *args)


class SqlTaskStore:
    """The :class:`~a2a_grpc.store.base.TaskStore` protocol over SQLAlchemy's
    asyncio engine.

    ``url`` is ``sqlite:///PATH`` (parent directories are created; WAL mode)
    or ``postgresql://USER@HOST[:PORT]/DB``; ``table_prefix`` lets several
    stores share one database. Construction only checks the URL (ValueError
    when unsupported); ``open()`` connects and creates missing tables.

    Several processes may share one database: every task write is a
    compare-and-swap on the version, the counts move in the same transaction,
    and the only task state held in memory is either keyed by version (a
    task's content at one version never changes) or terminal (never changes).
    """

    def __init__(self, url: str, *, table_prefix: str = "a2a_", echo: bool = False) -> None:
        self.url = async_url(url)
        self.table_prefix = table_prefix
        self.metadata, self._tasks, self._configs, self._outbox, self._counts = _schema(table_prefix)
        self._echo = echo
        self._engine: AsyncEngine | None = None
        self._is_sqlite = self.url.get_backend_name() == "sqlite"
        # SQLite has one writer at a time: queue this process's writers here
        # instead of spinning on "database is locked".
        self._write_lock = asyncio.Lock() if self._is_sqlite else None
        # ... through one connection kept open for them (no pool round per write).
        self._writer: AsyncConnection | None = None
        self._terminal: OrderedDict[tuple[str, str, str], tuple[bytes, int]] = OrderedDict()
        self._terminal_bytes = 0
        self._meta: OrderedDict[str, _Meta] = OrderedDict()
        self._build_statements()

    def _build_statements(self) -> None:
        """The task statements, built once: only bound values change per call."""
        t, k = self._tasks.c, self._counts.c
        owned = (t.tenant == bindparam("b_tenant"), t.owner_user == bindparam("b_user"))
        self._st_insert_task = insert(self._tasks)
        self._st_get = select(t.data, t.version, t.state).where(t.id == bindparam("b_id"), *owned)
        self._st_old = select(t.state, t.context_id).where(
            t.id == bindparam("b_id"), *owned, t.version == bindparam("b_expected")
        )
        self._st_update = (
            update(self._tasks)
            .where(t.id == bindparam("b_id"), *owned, t.version == bindparam("b_expected"))
            .values(
                context_id=bindparam("b_context"),
                state=bindparam("b_state"),
                status_ts_ms=bindparam("b_ts"),
                version=bindparam("b_version"),
                data=bindparam("b_data"),
            )
        )
        self._st_insert_outbox = insert(self._outbox)
        dialect_insert = sqlite_dialect.insert if self._is_sqlite else pg_dialect.insert
        upsert = dialect_insert(self._counts).values(
            tenant=bindparam("b_tenant"),
            owner_user=bindparam("b_user"),
            dim=bindparam("b_dim"),
            val=bindparam("b_val"),
            n=bindparam("b_n"),
        )
        # INSERT ... ON CONFLICT (key) DO UPDATE: the same SQL on SQLite ≥ 3.24
        # and PostgreSQL ≥ 9.5.
        self._st_count_add = upsert.on_conflict_do_update(
            index_elements=[k.tenant, k.owner_user, k.dim, k.val],
            set_={"n": self._counts.c.n + upsert.excluded.n},
        )
        self._st_count_get = select(k.n).where(
            k.tenant == bindparam("b_tenant"),
            k.owner_user == bindparam("b_user"),
            k.dim == bindparam("b_dim"),
            k.val == bindparam("b_val"),
        )

    @property
    def engine(self) -> AsyncEngine:
        """The open engine (RuntimeError before ``open()``)."""
        if self._engine is None:
            raise RuntimeError("SqlTaskStore is not open: await store.open() first")
        return self._engine

    async def open(self) -> None:
        """Connects, creates missing tables and indexes, and checks the task
        counts (rebuilt when they disagree with the tasks). Idempotent."""
        if self._engine is not None:
            return
        kwargs: dict[str, Any] = {"echo": self._echo}
        if self._is_sqlite:
            database = self.url.database or ""
            if database in ("", ":memory:"):
                database = ":memory:"
                kwargs["poolclass"] = StaticPool
            elif not database.startswith("file:"):
                database = await asyncio.to_thread(_make_parent_dir, database)
            kwargs["url"] = self.url.set(database=database)
        else:
            kwargs["pool_pre_ping"] = True
        url = kwargs.pop("url", self.url)
        engine = create_async_engine(url, **kwargs)
        if self._is_sqlite:
            event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        try:
            # SERIALIZABLE: a count rebuild must not interleave with another
            # process's writes (PostgreSQL; SQLite writers are serial anyway).
            async with engine.connect() as conn:
                conn = await conn.execution_options(isolation_level="SERIALIZABLE")
                async with conn.begin():
                    await conn.run_sync(self._create_schema)
            if self._is_sqlite:
                self._writer = await engine.connect()
        except BaseException:
            await engine.dispose()
            raise
        self._engine = engine

    def _create_schema(self, conn: Connection) -> None:
        """Creates what is missing, then checks the task counts against the
        tasks (one COUNT, ~40 ms per million tasks on SQLite) and rebuilds
        them when they disagree: a database from before the counts existed, or
        tasks written behind the store's back (bulk imports)."""
        self.metadata.create_all(conn)
        t, k = self._tasks.c, self._counts.c
        tasks_total = select(func.count()).select_from(self._tasks).scalar_subquery()
        counted = select(func.coalesce(func.sum(k.n), 0)).where(k.dim == "all").scalar_subquery()
        total, known = conn.execute(select(tasks_total, counted)).one()
        if total == known:
            return
        conn.execute(delete(self._counts))
        cols = ["tenant", "owner_user", "dim", "val", "n"]
        for dim, val in (
            ("all", literal("")),
            ("state", cast(t.state, String())),
            ("context", t.context_id),
        ):
            conn.execute(
                insert(self._counts).from_select(
                    cols,
                    select(t.tenant, t.owner_user, literal(dim), val, func.count()).group_by(
                        t.tenant, t.owner_user, val
                    ),
                )
            )

    async def close(self) -> None:
        """Closes every pooled connection; ``open()`` may be called again."""
        self._forget_terminal()
        self._meta.clear()
        if self._engine is not None:
            engine, self._engine = self._engine, None
            writer, self._writer = self._writer, None
            try:
                if writer is not None:
                    await writer.close()
            finally:
                await engine.dispose()

    async def drop_all(self) -> None:
        """Drops this store's tables (tests and maintenance; not part of TaskStore)."""
        self._forget_terminal()
        self._meta.clear()
        async with self.engine.begin() as conn:
            await conn.run_sync(self.metadata.drop_all)

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncConnection]:
        """One write transaction: commits on success, rolls back on error."""
        if self._write_lock is None:
            async with self.engine.begin() as conn:
                yield conn
        else:
            async with self._write_lock:
                writer = self._writer
                if writer is None:
                    raise RuntimeError("SqlTaskStore is not open: await store.open() first")
                async with writer.begin():
                    yield writer

    async def _run_write(self, body: Callable[..., _T], *args: Any) -> _T:
        """Runs ``body(conn, *args)`` (synchronous SQLAlchemy calls) as one
        write transaction in one greenlet: cheaper than awaiting each
        statement. Commits on return, rolls back on error."""
        if self._write_lock is None:
            async with self.engine.connect() as conn:
                return await conn.run_sync(_in_transaction, body, *args)
        async with self._write_lock:
            writer = self._writer
            if writer is None:
                raise RuntimeError("SqlTaskStore is not open: await store.open() first")
            return await writer.run_sync(_in_transaction, body, *args)

    # --- in-memory knowledge that stays true ----------------------------------

    def _remember(self, task_id: str, meta: _Meta) -> None:
        self._meta[task_id] = meta
        self._meta.move_to_end(task_id)
        if len(self._meta) > _META_CACHE_SIZE:
            self._meta.popitem(last=False)

    def _remember_terminal(self, key: tuple[str, str, str], data: bytes, version: int) -> None:
        self._drop_terminal(key)
        if len(data) > TERMINAL_CACHE_BYTES // 16:
            return
        self._terminal[key] = (data, version)
        self._terminal_bytes += len(data)
        while len(self._terminal) > TERMINAL_CACHE_SIZE or self._terminal_bytes > TERMINAL_CACHE_BYTES:
            _key, (old, _version) = self._terminal.popitem(last=False)
            self._terminal_bytes -= len(old)

    def _drop_terminal(self, key: tuple[str, str, str]) -> None:
        entry = self._terminal.pop(key, None)
        if entry is not None:
            self._terminal_bytes -= len(entry[0])

    def _forget_terminal(self) -> None:
        self._terminal.clear()
        self._terminal_bytes = 0

    def _add_counts(self, conn: Connection, owner: Owner, deltas: dict[tuple[str, str], int]) -> None:
        """Moves the task counts by ``deltas`` in one statement. Rows go in key
        order, so concurrent PostgreSQL transactions lock them in one order."""
        rows = [
            {"b_tenant": owner.tenant, "b_user": owner.user, "b_dim": dim, "b_val": val, "b_n": n}
            for (dim, val), n in sorted(deltas.items())
            if n
        ]
        if rows:
            conn.execute(self._st_count_add, rows)

    # --- tasks ---------------------------------------------------------------

    async def create(self, task: pb.Task, owner: Owner) -> int:
        """Inserts ``task`` at version 1 (and counts it) and returns 1.

        Raises TaskExistsError if ``task.id`` is taken by any owner."""
        state = task.status.state
        data = task.SerializeToString()
        try:
            await self._run_write(self._create_tx, task, owner, data)
        except IntegrityError as exc:
            raise TaskExistsError(task.id) from exc
        self._remember(task.id, (1, owner.tenant, owner.user, state, task.context_id))
        if is_terminal(state):
            self._remember_terminal((task.id, owner.tenant, owner.user), data, 1)
        return 1

    def _create_tx(self, conn: Connection, task: pb.Task, owner: Owner, data: bytes) -> None:
        state = task.status.state
        conn.execute(
            self._st_insert_task,
            {
                "id": task.id,
                "tenant": owner.tenant,
                "owner_user": owner.user,
                "context_id": task.context_id,
                "state": state,
                "status_ts_ms": status_ts_ms(task),
                "version": 1,
                "data": data,
            },
        )
        self._add_counts(
            conn, owner, {("all", ""): 1, ("state", str(state)): 1, ("context", task.context_id): 1}
        )

    async def get(self, task_id: str, owner: Owner) -> StoredTask | None:
        """The task and its version, or None when missing or not ``owner``'s.

        Terminal tasks come from memory after their first read or write."""
        key = (task_id, owner.tenant, owner.user)
        cached = self._terminal.get(key)
        if cached is not None:
            self._terminal.move_to_end(key)
            return StoredTask(pb.Task.FromString(cached[0]), cached[1])
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    self._st_get, {"b_id": task_id, "b_tenant": owner.tenant, "b_user": owner.user}
                )
            ).first()
        if row is None:
            return None
        data, version, state = row
        task = pb.Task.FromString(data)
        self._remember(task_id, (version, owner.tenant, owner.user, state, task.context_id))
        if is_terminal(state):
            self._remember_terminal(key, bytes(data), version)
        return StoredTask(task, version)

    async def update(
        self,
        task: pb.Task,
        owner: Owner,
        expected_version: int,
        *,
        outbox: Sequence[OutboxEntry] = (),
    ) -> int:
        """``UPDATE ... WHERE id AND version = expected_version``, the count
        changes (when the state or contextId moved) and the ``outbox``
        inserts, in one transaction; returns the new version.

        Raises VersionConflictError (nothing written) when no row matched:
        the version moved on, or the task is missing or not ``owner``'s."""
        state, context_id = task.status.state, task.context_id
        data = task.SerializeToString()
        version = expected_version + 1
        where = {
            "b_id": task.id,
            "b_tenant": owner.tenant,
            "b_user": owner.user,
            "b_expected": expected_version,
        }
        meta = self._meta.get(task.id)
        known = (
            meta[3:]
            if meta is not None and meta[:3] == (expected_version, owner.tenant, owner.user)
            else None
        )
        await self._run_write(self._update_tx, task, owner, where, version, data, known, outbox)
        self._remember(task.id, (version, owner.tenant, owner.user, state, context_id))
        key = (task.id, owner.tenant, owner.user)
        if is_terminal(state):
            self._remember_terminal(key, data, version)
        else:
            self._drop_terminal(key)
        return version

    def _update_tx(
        self,
        conn: Connection,
        task: pb.Task,
        owner: Owner,
        where: dict[str, Any],
        version: int,
        data: bytes,
        known: tuple[int, str] | None,
        outbox: Sequence[OutboxEntry],
    ) -> None:
        """The body of ``update``; ``known`` is the stored (state, contextId)
        at the expected version when remembered, else it is read here."""
        state, context_id = task.status.state, task.context_id
        if known is None:
            old = conn.execute(self._st_old, where).first()
            if old is None:
                raise VersionConflictError(task.id)
            known = (old[0], old[1])
        old_state, old_context = known
        result = conn.execute(
            self._st_update,
            {
                **where,
                "b_context": context_id,
                "b_state": state,
                "b_ts": status_ts_ms(task),
                "b_version": version,
                "b_data": data,
            },
        )
        if result.rowcount != 1:
            raise VersionConflictError(task.id)
        deltas: dict[tuple[str, str], int] = {}
        if old_state != state:
            deltas[("state", str(old_state))] = -1
            deltas[("state", str(state))] = 1
        if old_context != context_id:
            deltas[("context", old_context)] = -1
            deltas[("context", context_id)] = 1
        self._add_counts(conn, owner, deltas)
        if outbox:
            now = time.time()
            conn.execute(
                self._st_insert_outbox,
                [
                    {
                        "task_id": e.task_id,
                        "config_id": e.config_id,
                        "event_id": e.event_id,
                        "payload": e.payload,
                        "attempts": 0,
                        "next_attempt_at": now,
                        "state": "pending",
                        "last_error": "",
                    }
                    for e in outbox
                ],
            )

    def _filters(self, owner: Owner, query: ListQuery) -> list[Any]:
        t = self._tasks.c
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
        t = self._tasks.c
        conds = self._filters(owner, query)
        if query.after is not None:
            conds.append(tuple_(t.status_ts_ms, t.id) < tuple_(*query.after))
        return (
            select(t.data)
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
                total = (
                    await conn.execute(
                        select(func.count()).select_from(self._tasks).where(*self._filters(owner, query))
                    )
                ).scalar_one()
            else:
                params = {"b_tenant": owner.tenant, "b_user": owner.user, "b_dim": key[0], "b_val": key[1]}
                total = (await conn.execute(self._st_count_get, params)).scalar_one_or_none() or 0
            rows = (await conn.execute(self.page_statement(owner, query))).scalars().all()
        tasks = [pb.Task.FromString(data) for data in rows[: query.page_size]]
        return ListPage(tasks=tasks, has_more=len(rows) > query.page_size, total_size=int(total))

    # --- push notification configs -------------------------------------------

    def _config_key(self, owner: Owner, task_id: str, config_id: str) -> list[Any]:
        c = self._configs.c
        return [c.tenant == owner.tenant, c.owner_user == owner.user, c.task_id == task_id, c.id == config_id]

    async def put_push_config(self, owner: Owner, config: pb.TaskPushNotificationConfig) -> None:
        """Creates or replaces (keeping its place in creation order) the
        config keyed by ``config.task_id`` and ``config.id``."""
        key = self._config_key(owner, config.task_id, config.id)
        data = config.SerializeToString()
        for attempt in range(2):
            try:
                async with self._write() as conn:
                    result = await conn.execute(update(self._configs).where(*key).values(data=data))
                    if result.rowcount == 0:
                        await conn.execute(
                            insert(self._configs).values(
                                tenant=owner.tenant,
                                owner_user=owner.user,
                                task_id=config.task_id,
                                id=config.id,
                                data=data,
                            )
                        )
                return
            except IntegrityError:
                # A concurrent writer inserted the same key first: update it.
                if attempt:
                    raise

    async def get_push_config(
        self, owner: Owner, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        """The config, or None when missing or not ``owner``'s."""
        async with self.engine.connect() as conn:
            data = (
                await conn.execute(
                    select(self._configs.c.data).where(*self._config_key(owner, task_id, config_id))
                )
            ).scalar_one_or_none()
        return None if data is None else pb.TaskPushNotificationConfig.FromString(data)

    async def get_push_config_any_owner(
        self, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        """The config whoever owns it, or None; for the push dispatcher,
        whose outbox rows carry no owner (not part of TaskStore)."""
        c = self._configs.c
        stmt = select(c.data).where(c.task_id == task_id, c.id == config_id).order_by(c.seq).limit(1)
        async with self.engine.connect() as conn:
            data = (await conn.execute(stmt)).scalar_one_or_none()
        return None if data is None else pb.TaskPushNotificationConfig.FromString(data)

    async def list_push_configs(
        self, owner: Owner, task_id: str, *, limit: int | None = None, after_id: str | None = None
    ) -> list[pb.TaskPushNotificationConfig]:
        """The task's configs in creation order, at most ``limit``, starting
        after ``after_id`` (nothing when ``after_id`` is not a config of the task)."""
        c = self._configs.c
        conds: list[Any] = [c.tenant == owner.tenant, c.owner_user == owner.user, c.task_id == task_id]
        if after_id is not None:
            after_seq = select(c.seq).where(*self._config_key(owner, task_id, after_id)).scalar_subquery()
            conds.append(c.seq > after_seq)
        stmt = select(c.data).where(*conds).order_by(c.seq)
        if limit is not None:
            stmt = stmt.limit(limit)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).scalars().all()
        return [pb.TaskPushNotificationConfig.FromString(data) for data in rows]

    async def delete_push_config(self, owner: Owner, task_id: str, config_id: str) -> bool:
        """Removes the config and, in the same transaction, its pending
        outbox rows; False if absent."""
        o = self._outbox.c
        async with self._write() as conn:
            result = await conn.execute(
                delete(self._configs).where(*self._config_key(owner, task_id, config_id))
            )
            if result.rowcount == 0:
                return False
            await conn.execute(
                delete(self._outbox).where(
                    o.task_id == task_id, o.config_id == config_id, o.state == "pending"
                )
            )
        return True

    async def count_push_configs(self, owner: Owner, task_id: str | None = None) -> int:
        """How many configs ``owner`` has (on ``task_id`` only, when given)."""
        c = self._configs.c
        conds: list[Any] = [c.tenant == owner.tenant, c.owner_user == owner.user]
        if task_id is not None:
            conds.append(c.task_id == task_id)
        async with self.engine.connect() as conn:
            return int(
                (
                    await conn.execute(select(func.count()).select_from(self._configs).where(*conds))
                ).scalar_one()
            )

    # --- push outbox ---------------------------------------------------------

    async def outbox_due(self, now: float, limit: int) -> list[OutboxRecord]:
        """Pending rows with ``next_attempt_at <= now`` (Unix seconds), lowest
        ``seq`` first, at most ``limit``."""
        o = self._outbox.c
        stmt = (
            select(self._outbox)
            .where(o.state == "pending", o.next_attempt_at <= now)
            .order_by(o.seq)
            .limit(limit)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).all()
        return [
            OutboxRecord(
                seq=r.seq,
                entry=OutboxEntry(
                    task_id=r.task_id, config_id=r.config_id, event_id=r.event_id, payload=bytes(r.payload)
                ),
                attempts=r.attempts,
                next_attempt_at=r.next_attempt_at,
                state=r.state,
                last_error=r.last_error,
            )
            for r in rows
        ]

    async def outbox_mark(
        self, seq: int, *, state: str, attempts: int, next_attempt_at: float, last_error: str = ""
    ) -> None:
        """Records a delivery attempt's outcome on row ``seq`` (no-op if gone)."""
        async with self._write() as conn:
            await conn.execute(
                update(self._outbox)
                .where(self._outbox.c.seq == seq)
                .values(
                    state=state, attempts=attempts, next_attempt_at=next_attempt_at, last_error=last_error
                )
            )

    async def outbox_count(self, state: str) -> int:
        """How many outbox rows are in ``state``."""
        async with self.engine.connect() as conn:
            return int(
                (
                    await conn.execute(
                        select(func.count()).select_from(self._outbox).where(self._outbox.c.state == state)
                    )
                ).scalar_one()
            )


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """Per-connection SQLite settings: WAL (readers never block the writer),
    a busy timeout, and ``synchronous=NORMAL``: with WAL a commit is durable
    against a crash of the process (the WAL is written before COMMIT returns);
    only a power loss or OS crash can lose the last transactions before a
    checkpoint — never corrupt the database. FULL would fsync on every commit."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _make_parent_dir(database: str) -> str:
    """Creates the database file's directory; returns the file's absolute path."""
    path = Path(database).expanduser().absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path)
