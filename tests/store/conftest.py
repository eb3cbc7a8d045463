"""Fixtures for the shared TaskStore suite: one ``store`` per backend.

PostgreSQL is the server on 127.0.0.1:5432 (override with
``A2A_GRPC_TEST_POSTGRES_URL``); each test gets its own table prefix and drops
its tables afterwards, so parallel runs never collide. When the server is not
reachable the PostgreSQL cases are skipped with the reason.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from a2a_grpc.store import InMemoryTaskStore, SqlTaskStore, TaskStore

PG_URL = os.environ.get("A2A_GRPC_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")

_pg_unreachable: list[str] = []  # memo: [] unknown, [""] reachable, [reason] not


async def postgres_skip_reason() -> str:
    """ "" when PostgreSQL answers, else why it does not."""
    if not _pg_unreachable:
        import asyncpg

        try:
            conn = await asyncpg.connect(PG_URL, timeout=3)
            await conn.close()
            _pg_unreachable.append("")
        except Exception as exc:
            _pg_unreachable.append(f"PostgreSQL not reachable at {PG_URL}: {exc!r}")
    return _pg_unreachable[0]


def unique_prefix() -> str:
    return f"t{uuid.uuid4().hex[:12]}_"


async def make_sql_store(backend: str, tmp_path: Path, prefix: str) -> SqlTaskStore:
    """A not yet opened SqlTaskStore for ``backend`` ("sqlite" or "postgresql")."""
    if backend == "sqlite":
        return SqlTaskStore(f"sqlite:///{tmp_path}/data/store.db", table_prefix=prefix)
    reason = await postgres_skip_reason()
    if reason:
        pytest.skip(reason)
    return SqlTaskStore(PG_URL, table_prefix=prefix)


BACKENDS = ["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    """An opened, empty store of each backend."""
    backend: str = request.param
    s: TaskStore
    if backend == "memory":
        s = InMemoryTaskStore()
    else:
        s = await make_sql_store(backend, tmp_path, unique_prefix())
    await s.open()
    try:
        yield s
    finally:
        if isinstance(s, SqlTaskStore) and backend == "postgresql":
            await s.drop_all()
        await s.close()
