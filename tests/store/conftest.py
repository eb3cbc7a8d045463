"""Fixtures for the shared TaskStore suite: one ``store`` per backend.

PostgreSQL is the server on 127.0.0.1:5432 (override with
``A2A_GRPC_TEST_POSTGRES_URL``); each test gets its own table prefix and drops
its tables afterwards, so parallel runs never collide. When the server is not
reachable the PostgreSQL cases are skipped with the reason.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from storekit import make_sql_store, unique_prefix

from a2a_grpc.store import InMemoryTaskStore, SqlTaskStore, TaskStore

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
