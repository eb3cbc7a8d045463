"""The server the dialect tests talk to: the interop agent (tests/interop/agents.py)
on a memory store, both ports ephemeral on 127.0.0.1, push deliveries allowed
to 127.0.0.1 and tried once."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from a2a_grpc.push import PushDispatcher
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from tests.interop.agents import InteropAgent


@pytest.fixture
async def server() -> AsyncIterator[A2AServer]:
    store = InMemoryTaskStore()
    srv = A2AServer(
        InteropAgent(),
        store,
        ServerConfig(grpc_port=0, http_port=0),
        push=PushDispatcher(store, allow=["127.0.0.1"], max_attempts=1),
    )
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(0.2)
