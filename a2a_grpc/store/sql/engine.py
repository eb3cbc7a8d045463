"""The SQL store's plumbing: the database URL, the asyncio engine, and the
connections and transactions every concern of the store writes through.

:class:`SqlDatabase` is the base the store's concerns (tasks, push configs,
push outbox) share: it owns the :class:`~a2a_grpc.store.sql.schema.Schema`,
``open()`` / ``close()`` / ``drop_all()``, and the two ways to write:
``_write()`` (awaited statements) and ``_run_write()`` (synchronous
statements in one greenlet).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from a2a_grpc.store.sql.schema import Schema, create_schema

__all__ = ["SqlDatabase", "async_url"]

_T = TypeVar("_T")

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
    """One store's database: URL, schema, engine and write transactions.

    ``url`` is ``sqlite:///PATH`` or ``postgresql://USER@HOST[:PORT]/DB``
    (ValueError when unsupported); nothing connects before ``open()``."""

    def __init__(self, url: str, *, table_prefix: str = "a2a_", echo: bool = False) -> None:
        self.url = async_url(url)
        self.table_prefix = table_prefix
        self.schema = Schema.build(table_prefix)
        self._echo = echo
        self._engine: AsyncEngine | None = None
        self._is_sqlite = self.url.get_backend_name() == "sqlite"
        # SQLite has one writer at a time: queue this process's writers here
        # instead of spinning on "database is locked".
        self._write_lock = asyncio.Lock() if self._is_sqlite else None
        # ... through one connection kept open for them (no pool round per write).
        self._writer: AsyncConnection | None = None

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
        engine = await self._create_engine()
        try:
            # SERIALIZABLE: a count rebuild must not interleave with another
            # process's writes (PostgreSQL; SQLite writers are serial anyway).
            async with engine.connect() as conn:
                conn = await conn.execution_options(isolation_level="SERIALIZABLE")
                async with conn.begin():
                    await conn.run_sync(create_schema, self.schema)
            if self._is_sqlite:
                self._writer = await engine.connect()
        except BaseException:
            await engine.dispose()
            raise
        self._engine = engine

    async def _create_engine(self) -> AsyncEngine:
        """The engine for ``url``: on SQLite one shared connection for
        ``:memory:``, the file's directory created, and the per-connection
        pragmas; on PostgreSQL a pool that checks connections before use."""
        if not self._is_sqlite:
            return create_async_engine(self.url, echo=self._echo, pool_pre_ping=True)
        kwargs: dict[str, Any] = {"echo": self._echo}
        database = self.url.database or ""
        if database in ("", ":memory:"):
            database = ":memory:"
            kwargs["poolclass"] = StaticPool
        elif not database.startswith("file:"):
            database = await asyncio.to_thread(_make_parent_dir, database)
        engine = create_async_engine(self.url.set(database=database), **kwargs)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine

    async def close(self) -> None:
        """Closes every pooled connection; ``open()`` may be called again."""
        if self._engine is not None:
            engine, self._engine = self._engine, None
            writer, self._writer = self._writer, None
            try:
                if writer is not None:
                    await writer.close()
            finally:
                await engine.dispose()

    async def drop_all(self) -> None:
        """Drops this store's tables (tests and maintenance; not part of the store protocols)."""
        async with self.engine.begin() as conn:
            await conn.run_sync(self.schema.metadata.drop_all)

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncConnection]:
        """One write transaction: commits on success, rolls back on error."""
        if self._write_lock is None:
            async with self.engine.begin() as conn:
                yield conn
        else:
            async with self._write_lock:
                writer = self._sqlite_writer()
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
            return await self._sqlite_writer().run_sync(_in_transaction, body, *args)

    def _sqlite_writer(self) -> AsyncConnection:
        """The one connection SQLite writes go through (RuntimeError before ``open()``)."""
        if self._writer is None:
            raise RuntimeError("SqlTaskStore is not open: await store.open() first")
        return self._writer


def _in_transaction(conn: Connection, body: Callable[..., _T], *args: Any) -> _T:
    with conn.begin():
        return body(conn, *args)


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
