"""The SQL store's plumbing: the database URL, the asyncio engine, and the
connections and transactions every concern of the store writes through.

:class:`SqlDatabase` is the base the store's concerns (tasks, push configs,
push outbox) share: it owns the :class:`~a2a_grpc.store._sql.schema.Schema`,
``open()`` / ``close()`` / ``drop_all()``, and the two ways to write:
``_run_write()`` (a synchronous body, group-committed with the other writes
queued meanwhile: every task, push-config and outbox write) and ``_write()``
(awaited statements in a transaction of their own: the cluster store's leases).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from a2a_grpc.store._sql import raw
from a2a_grpc.store._sql.batch import AsyncWriter, GroupCommit, Job, SqliteWriterThread, run_batch
from a2a_grpc.store._sql.schema import Schema, create_schema

__all__ = ["SqlDatabase", "async_url"]

_T = TypeVar("_T")

log = logging.getLogger("a2a_grpc.store.sql")

#: The writer connection's SqliteTransactions (``conn.info`` key): one per connection.
_SQLITE_TX = "a2a_sqlite_tx"

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


class SqlDatabase:
    """One store's database: URL, schema, engine and the group-committed writes.

    ``url`` is ``sqlite:///PATH`` (optionally ``?synchronous=full``) or
    ``postgresql://USER@HOST[:PORT]/DB`` (ValueError when unsupported);
    nothing connects before ``open()``. Reads go through SQLAlchemy's asyncio
    engine; every write is a body queued to the writer
    (:mod:`a2a_grpc.store._sql.batch`): on SQLite a dedicated thread with its
    own ``sqlite3`` connection, on PostgreSQL one asyncpg connection."""

    def __init__(self, url: str, *, table_prefix: str = "a2a_", echo: bool = False) -> None:
        parsed = async_url(url)
        self.synchronous = str(parsed.query.get("synchronous", "normal")).upper()
        if self.synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be normal or full, not {self.synchronous.lower()!r}")
        self.url = parsed.difference_update_query(["synchronous"])
        self.table_prefix = table_prefix
        self.schema = Schema.build(table_prefix)
        self._echo = echo
        self._engine: AsyncEngine | None = None
        self._is_sqlite = self.url.get_backend_name() == "sqlite"
        self._commits: GroupCommit | None = None
        self._sqlite_writer: SqliteWriterThread | None = None
        self._pg_writer: AsyncWriter | None = None
        self._pg_conn: AsyncConnection | None = None
        self._pg_raw: raw.AsyncpgConnection | None = None
        self._reader: raw.SqliteConnection | None = None

    @property
    def engine(self) -> AsyncEngine:
        """The open engine (RuntimeError before ``open()``)."""
        if self._engine is None:
            raise RuntimeError("SqlTaskStore is not open: await store.open() first")
        return self._engine

    @property
    def write_batches(self) -> tuple[int, int]:
        """(transactions, writes they carried) since ``open()``: writes per
        transaction is how much the group commit shares (stats, tests)."""
        return (0, 0) if self._commits is None else (self._commits.batches, self._commits.writes)

    async def open(self) -> None:
        """Connects, creates missing tables and indexes, checks the task
        counts (rebuilt when they disagree with the tasks) and starts the
        writer. Idempotent."""
        if self._engine is not None:
            return
        engine = await self._create_engine()
        try:
            # SERIALIZABLE: a count rebuild must not interleave with another
            # process's writes (PostgreSQL; SQLite writers are serial anyway).
            async with engine.connect() as conn:
                conn = await conn.execution_options(isolation_level="SERIALIZABLE")
                async with conn.begin():
                    await conn.run_sync(self._create_schema)
            await self._start_writer(engine)
        except BaseException:
            await self._stop_writer()
            await engine.dispose()
            raise
        self._engine = engine

    def _create_schema(self, conn: Connection) -> None:
        """Inside ``open``'s transaction: creates and upgrades the tables
        (:func:`~a2a_grpc.store._sql.schema.create_schema`)."""
        create_schema(conn, self.schema)

    async def _start_writer(self, engine: AsyncEngine) -> None:
        loop = asyncio.get_running_loop()
        if self._is_sqlite:
            database, uri = _sqlite_target(engine)
            sync = self.synchronous
            thread = SqliteWriterThread(
                lambda: raw.connect_sqlite(database, synchronous=sync, uri=uri),
                self._run_sqlite_batch,
                loop,
                lambda jobs: commits.deliver(jobs),
            )
            commits = GroupCommit(thread.send)
            self._sqlite_writer = thread
            await thread.start()
        else:
            writer = AsyncWriter(self._run_pg_batch, lambda jobs: commits.deliver(jobs))
            commits = GroupCommit(writer.send)
            self._pg_writer = writer
        self._commits = commits

    def _run_sqlite_batch(self, conn: raw.SqliteConnection, jobs: list[Job]) -> None:
        """One SQLite transaction (on the writer thread)."""
        tx = conn.info.get(_SQLITE_TX)
        if tx is None:
            tx = conn.info[_SQLITE_TX] = raw.SqliteTransactions(conn)
        run_batch(conn, tx, jobs, self._flush_counts)

    async def _run_pg_batch(self, jobs: list[Job]) -> None:
        """One PostgreSQL transaction on the writer connection (its asyncpg
        connection driven directly: :class:`~a2a_grpc.store._sql.raw.AsyncpgConnection`).

        A connection found closed is replaced first. One lost during the
        batch before anything that may commit was sent (COMMIT, or a write
        run alone) is replaced and the batch runs once more; after that the
        outcome is unknown and the callers keep the error."""
        for retry in (True, False):
            if self._pg_raw is not None and self._pg_raw.raw.is_closed():
                await self._drop_pg_conn()
            if self._pg_conn is None:
                self._pg_conn = await self.engine.connect()
                self._pg_raw = None
            try:
                await self._pg_conn.run_sync(self._pg_batch, jobs)
            except BaseException:
                await self._drop_pg_conn()
                raise
            pg_raw = self._pg_raw
            if pg_raw is not None and not pg_raw.raw.is_closed():
                return
            await self._drop_pg_conn()
            if pg_raw is None or pg_raw.commit_sent or not retry:
                return
            log.warning(
                "PostgreSQL writer connection lost before COMMIT: reconnecting, writing the batch again"
            )

    def _pg_batch(self, conn: Connection, jobs: list[Job]) -> None:
        if self._pg_raw is None:
            self._pg_raw = raw.AsyncpgConnection(conn.connection.driver_connection)
        if self._run_together(self._pg_raw, jobs):
            return
        tx = raw.AsyncpgTransactions(self._pg_raw, lazy=len(jobs) == 1)
        run_batch(self._pg_raw, tx, jobs, self._flush_counts)

    def _run_together(self, conn: raw.AsyncpgConnection, jobs: list[Job]) -> bool:
        """PostgreSQL: writes ``jobs`` in one statement when they are all of
        a kind that can be (recording each one's outcome) and returns True;
        False (nothing sent) otherwise. The task half of the store does for
        plain creates; nothing else here can."""
        return False

    async def _drop_pg_conn(self) -> None:
        conn, self._pg_conn, self._pg_raw = self._pg_conn, None, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.invalidate()
                await conn.close()

    def _flush_counts(self, conn: Any, counts: dict[Any, int]) -> None:
        """Writes a batch's summed task-count moves before its COMMIT (the
        task half of the store does; nothing else counts)."""

    async def _create_engine(self) -> AsyncEngine:
        """The engine for ``url``: on SQLite the file's directory created (a
        ``:memory:`` database becomes a named shared-cache one, so the writer
        thread and the readers see the same), and the per-connection pragmas;
        on PostgreSQL a pool that checks connections before use."""
        if not self._is_sqlite:
            return create_async_engine(self.url, echo=self._echo, pool_pre_ping=True)
        kwargs: dict[str, Any] = {"echo": self._echo}
        url = self.url
        database = url.database or ""
        if database in ("", ":memory:"):
            database = f"file:a2a-{uuid.uuid4().hex}?mode=memory&cache=shared"
            url = url.update_query_dict({"uri": "true"})
        elif not database.startswith("file:"):
            database = await asyncio.to_thread(_make_parent_dir, database)
        engine = create_async_engine(url.set(database=database), **kwargs)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine

    def _loop_reader(self) -> raw.SqliteConnection | None:
        """SQLite: a ``sqlite3`` connection of the event loop's own thread for
        indexed point reads (opened on first use; see ``SqlTasks.get``); None
        on PostgreSQL, for an in-memory database, or before ``open()``."""
        if self._reader is None and self._is_sqlite and self._engine is not None:
            database, uri = _sqlite_target(self._engine)
            if "mode=memory" not in database:
                self._reader = raw.connect_sqlite_reader(database, uri=uri)
        return self._reader

    async def _stop_writer(self) -> None:
        commits, self._commits = self._commits, None  # no new writes from here on
        if commits is not None:
            commits.flush()  # the writes already queued go before the writer stops
        thread, self._sqlite_writer = self._sqlite_writer, None
        if thread is not None:
            await thread.stop()
        writer, self._pg_writer = self._pg_writer, None
        if writer is not None:
            await writer.stop()
        conn, self._pg_conn, self._pg_raw = self._pg_conn, None, None
        if conn is not None:
            await conn.close()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    async def close(self) -> None:
        """Writes what is queued, stops the writer and closes every pooled
        connection; ``open()`` may be called again."""
        if self._engine is not None:
            try:
                await self._stop_writer()
            finally:
                engine, self._engine = self._engine, None
                await engine.dispose()

    async def drop_all(self) -> None:
        """Drops this store's tables (tests and maintenance; not part of the store protocols)."""
        async with self.engine.begin() as conn:
            await conn.run_sync(self.schema.metadata.drop_all)

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncConnection]:
        """One write transaction of awaited statements on a pooled connection
        (the cluster store's lease and claim statements on PostgreSQL, which
        must not wait behind a batch): commits on success, rolls back on error."""
        async with self.engine.begin() as conn:
            yield conn

    async def _run_write(self, body: Callable[..., _T], *args: Any) -> _T:
        """Runs ``body(conn, *args)`` (synchronous statements) as one write of
        the group commit (:mod:`a2a_grpc.store._sql.batch`): it commits with
        whatever else is queued, and its result or error is this caller's
        alone. Returns once the transaction committed."""
        if self._commits is None:
            raise RuntimeError("SqlTaskStore is not open: await store.open() first")
        result: _T = await self._commits.submit(body, args)
        return result


def _sqlite_target(engine: AsyncEngine) -> tuple[str, bool]:
    """The database the writer thread opens: the engine's file (or named
    in-memory database) and whether it is a URI."""
    url = engine.url
    database = url.database or ""
    return database, database.startswith("file:")


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
