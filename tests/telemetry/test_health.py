"""Health follows the store (issue 15 §4): a TCP proxy in front of the real
PostgreSQL is cut and restored; ``grpc.health.v1`` turns NOT_SERVING and back."""

from __future__ import annotations

import asyncio
import contextlib
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store import SqlTaskStore
from a2a_grpc.types import SERVICE_NAME
from tests.core.agents import ScriptedAgent
from tests.store.storekit import postgres_skip_reason, unique_prefix

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


class Proxy:
    """Forwards 127.0.0.1:port to PostgreSQL on 5432; ``cut`` stops listening and
    drops every connection, ``restore`` listens on the same port again."""

    def __init__(self) -> None:
        self.port = 0
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", 5432)
        except OSError:
            writer.close()
            return
        self.writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def cut(self) -> None:
        assert self.server is not None
        self.server.close()
        for w in self.writers:
            w.close()
        self.writers.clear()
        self.server = None


async def _status(stub: health_pb2_grpc.HealthStub) -> int:
    return (await stub.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=5)).status


async def _until_status(stub: health_pb2_grpc.HealthStub, want: int, timeout: float = 10.0) -> float:
    start = time.monotonic()
    while await _status(stub) != want:
        assert time.monotonic() - start < timeout, f"health never became {want}"
        await asyncio.sleep(0.05)
    return time.monotonic() - start


@pytest.mark.postgres
async def test_health_is_not_serving_while_postgres_is_unreachable() -> None:
    reason = await postgres_skip_reason()
    if reason:
        pytest.skip(reason)
    proxy = Proxy()
    await proxy.start()
    store = SqlTaskStore(f"postgresql://postgres@127.0.0.1:{proxy.port}/test", table_prefix=unique_prefix())
    config = ServerConfig(grpc_port=0, http_port=None, health_check_seconds=0.1, grace_seconds=0.5)
    srv = A2AServer(ScriptedAgent(), store, config)
    await srv.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.grpc_port}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            assert await _status(stub) == SERVING
            await proxy.cut()
            assert await _until_status(stub, NOT_SERVING) < 5
            overall = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
            assert overall.status == NOT_SERVING
            await proxy.start()  # the database is back on the same address
            assert await _until_status(stub, SERVING) < 5
        await store.drop_all()
    finally:
        await srv.stop()
        if proxy.server is not None:
            await proxy.cut()
