"""Where the registry keeps its agents: one SQL table (SQLAlchemy Core).

``RegistryStore(url)`` takes the same URLs as the task store
(``sqlite:///PATH`` or ``postgresql://USER@HOST[:PORT]/DB``, or ``memory``
for an SQLite database in memory) and keeps each
:class:`~a2a_grpc.registry._types.rpb.RegisteredAgent` as its serialized proto
in ``<prefix>agents`` (``agent_id`` primary key, ``base_url`` unique), so the
registry survives restarts. The registry reads every row at start and keeps
them in memory (a registry holds tens to thousands of agents); the table is
written through on every change.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import Column, LargeBinary, MetaData, String, Table, delete, event, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from a2a_grpc.registry._types import rpb
from a2a_grpc.store._sql.engine import async_url

__all__ = ["RegistryStore"]


class RegistryStore:
    """The registry's table. ``table_prefix`` lets several registries (or a
    registry and a task store) share one database."""

    def __init__(self, url: str, *, table_prefix: str = "a2a_registry_") -> None:
        value = url.strip()
        self.url = async_url("sqlite://" if value == "memory" else value)
        self._metadata = MetaData()
        self.table = Table(
            f"{table_prefix}agents",
            self._metadata,
            Column("agent_id", String(), primary_key=True),
            Column("base_url", String(), nullable=False, unique=True),
            Column("data", LargeBinary(), nullable=False),
        )
        self._engine: AsyncEngine | None = None
        self._lock = asyncio.Lock()

    @property
    def engine(self) -> AsyncEngine:
        """The open engine (RuntimeError before ``open()``)."""
        if self._engine is None:
            raise RuntimeError("RegistryStore is not open: await store.open() first")
        return self._engine

    async def open(self) -> None:
        """Connects and creates the table when missing. Idempotent."""
        if self._engine is not None:
            return
        kwargs: dict[str, Any] = {}
        sqlite = self.url.get_backend_name() == "sqlite"
        if sqlite and (self.url.database or ":memory:") == ":memory:":
            kwargs["poolclass"] = StaticPool
        engine = create_async_engine(self.url, **kwargs)
        if sqlite:
            event.listen(engine.sync_engine, "connect", _busy_timeout)
        async with engine.begin() as conn:
            await conn.run_sync(self._metadata.create_all)
        self._engine = engine

    async def close(self) -> None:
        """Closes the pooled connections; ``open()`` may be called again."""
        if self._engine is not None:
            engine, self._engine = self._engine, None
            await engine.dispose()

    async def drop(self) -> None:
        """Drops the table (tests)."""
        async with self.engine.begin() as conn:
            await conn.run_sync(self._metadata.drop_all)

    async def load(self) -> list[rpb.RegisteredAgent]:
        """Every stored agent."""
        async with self.engine.connect() as conn:
            rows = (await conn.execute(select(self.table.c.data))).all()
        return [rpb.RegisteredAgent.FromString(row[0]) for row in rows]

    async def put(self, agent: rpb.RegisteredAgent) -> None:
        """Inserts or replaces ``agent`` (by ``agent_id``)."""
        t = self.table
        values = {"base_url": agent.base_url, "data": agent.SerializeToString()}
        async with self._lock, self.engine.begin() as conn:
            result = await conn.execute(update(t).where(t.c.agent_id == agent.agent_id).values(**values))
            if result.rowcount == 0:
                await conn.execute(insert(t).values(agent_id=agent.agent_id, **values))

    async def delete(self, agent_id: str) -> None:
        """Removes the agent ``agent_id`` (nothing when absent)."""
        async with self._lock, self.engine.begin() as conn:
            await conn.execute(delete(self.table).where(self.table.c.agent_id == agent_id))


def _busy_timeout(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()
