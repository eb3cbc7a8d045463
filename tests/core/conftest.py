"""Fixtures for core tests: a real A2AServer on ephemeral 127.0.0.1 ports and
a gRPC stub through the generated code."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest

from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store.memory import InMemoryTaskStore
from a2a_grpc.types import pb_grpc
from tests.core.agents import ScriptedAgent

VERSION_MD = (("a2a-version", "1.0"),)


@pytest.fixture
async def server() -> AsyncIterator[A2AServer]:
    srv = A2AServer(ScriptedAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=None))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(0.5)


@pytest.fixture
async def stub(server: A2AServer) -> AsyncIterator[pb_grpc.A2AServiceStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        yield pb_grpc.A2AServiceStub(channel)
