"""Fixtures of the cluster tests: per test module, a fresh PostgreSQL
database and three ``a2a-grpc serve --cluster`` replicas sharing it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.cluster.replicas import Replica, drop_database, fresh_database
from tests.store.storekit import PG_URL, postgres_skip_reason

TTL = 2.0  # lease TTL of the replicas, seconds (heartbeat and reaper every third of it)
CANCEL_GRACE = 1.0  # seconds CancelTask waits for another replica's execution before forcing


def cluster_args(database: str, name: str) -> list[str]:
    """``a2a-grpc serve`` options of replica ``name`` on ``database``."""
    return [
        *("--store", database, "--cluster", "--lease-ttl", str(TTL), "--replica-id", name),
        *("--cancel-grace", str(CANCEL_GRACE)),
    ]


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    reason = asyncio.run(postgres_skip_reason())
    if reason:
        pytest.skip(reason)
    url = asyncio.run(fresh_database(PG_URL))
    yield url
    asyncio.run(drop_database(PG_URL, url))


@pytest.fixture(scope="module")
def replicas(
    database: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[list[Replica]]:
    """Three replicas; a module's ``REPLICA_ARGS`` are added to their options."""
    logs = tmp_path_factory.mktemp("replicas")
    extra = list(getattr(request.module, "REPLICA_ARGS", []))
    started: list[Replica] = []
    try:
        for name in ("r1", "r2", "r3"):
            replica = Replica(name, [*cluster_args(database, name), *extra], logs / f"{name}.log")
            started.append(replica.start())
        yield started
    finally:
        for r in started:
            r.stop()
