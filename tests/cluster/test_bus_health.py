"""Health follows the event bus listener (issue 12, item 8): a cluster
replica whose LISTEN connection is cut (``pg_terminate_backend``) and cannot
reconnect (the database refuses new connections) answers NOT_SERVING on
``grpc.health.v1`` while the store itself still answers; once it listens
again it is SERVING. A task followed on the replica meanwhile is caught up."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.cluster.conftest import cluster_args
from tests.cluster.replicas import Replica
from tests.store.storekit import PG_URL

pytestmark = pytest.mark.slow

SERVING, NOT_SERVING = health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.NOT_SERVING


@pytest.fixture
def replica(database: str, tmp_path: Path) -> Iterator[Replica]:
    r = Replica("hb", cluster_args(database, "hb"), tmp_path / "hb.log").start()
    try:
        yield r
    finally:
        r.stop()


async def _until(stub: health_pb2_grpc.HealthStub, want: int, timeout: float) -> float:
    start = time.monotonic()
    while True:
        got = (await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)).status
        if got == want:
            return time.monotonic() - start
        assert time.monotonic() - start < timeout, f"health stayed {got}, not {want}"
        await asyncio.sleep(0.05)


async def test_not_serving_while_the_listener_is_cut(replica: Replica, database: str) -> None:
    name = database.rsplit("/", 1)[1]
    admin = await asyncpg.connect(PG_URL, timeout=5)
    channel = grpc.aio.insecure_channel(replica.urls["GRPC"])
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        assert await _until(stub, SERVING, 1) < 1
        await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        cut = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = $1 AND application_name = 'a2a-relay-hb'",
            name,
        )
        assert cut == 1
        down = await _until(stub, NOT_SERVING, 3)
        client = await replica.client()  # the store's pooled connections still answer
        try:
            assert (await client.send_message("steps=1 delay=0")).task.status.state != 0
        finally:
            await client.close()
        await asyncio.sleep(1.0)
        status = (await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)).status
        assert status == NOT_SERVING  # still down: it cannot listen
        await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        up = await _until(stub, SERVING, 3)
    finally:
        await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        await admin.close()
        await channel.close()
    assert down < 1.5 and up < 1.5, (down, up)
    log = replica.log.read_text()
    assert "cannot listen on PostgreSQL LISTEN/NOTIFY yet" in log
    assert "listening again on PostgreSQL LISTEN/NOTIFY" in log


async def test_either_part_down_is_not_serving() -> None:
    """The store and the bus listener: NOT_SERVING while either is down,
    SERVING only once both are up (each change reported once)."""
    from a2a_grpc.store._health import HealthGate

    reports: list[bool] = []

    async def report(serving: bool) -> None:
        reports.append(serving)

    gate = HealthGate(report)
    store, bus = gate.reporter("store"), gate.reporter("bus")
    await bus(False)
    await store(False)
    await bus(True)
    assert reports == [False] and not gate.serving  # the store is still down
    await store(True)
    await store(True)
    assert reports == [False, True] and gate.serving
