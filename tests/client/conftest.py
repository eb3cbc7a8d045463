"""Fixtures for client tests: a real A2AServer (script agent, memory store)
on ephemeral 127.0.0.1 ports, serving gRPC, JSON-RPC and HTTP+JSON."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest

from a2a_grpc.client import A2AClient
from a2a_grpc.push import PushDispatcher
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.client.agents import ScriptAgent

BINDING_NAMES = ("grpc", "jsonrpc", "rest")


def base_url(server: A2AServer) -> str:
    return f"http://127.0.0.1:{server.http_port}"


@contextlib.asynccontextmanager
async def serving(config: ServerConfig) -> AsyncIterator[A2AServer]:
    """A started server of the script agent (memory store), stopped on exit."""
    srv = A2AServer(ScriptAgent(), InMemoryTaskStore(), config)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(0.2)


@pytest.fixture
async def server() -> AsyncIterator[A2AServer]:
    async with serving(ServerConfig(grpc_port=0, http_port=0)) as srv:
        yield srv


@pytest.fixture
async def push_server() -> AsyncIterator[A2AServer]:
    """Push notifications on; webhooks on 127.0.0.1 are allowed."""
    store = InMemoryTaskStore()
    extended = pb.AgentCard()
    extended.CopyFrom(ScriptAgent.card)
    extended.name = "Script Agent (extended)"
    srv = A2AServer(
        ScriptAgent(),
        store,
        ServerConfig(grpc_port=0, http_port=0),
        push=PushDispatcher(store, allow=["127.0.0.1"], max_attempts=1),
        extended_card=extended,
    )
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(0.2)


@pytest.fixture(params=BINDING_NAMES)
async def client(request: pytest.FixtureRequest, server: A2AServer) -> AsyncIterator[A2AClient]:
    async with await A2AClient.connect(base_url(server), bindings=[request.param], timeout=10) as c:
        assert c.binding == request.param
        yield c
