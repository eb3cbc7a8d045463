"""Fixtures for core tests: real A2AServers on ephemeral 127.0.0.1 ports (gRPC
only) and stubs through the generated code.

``server`` and ``make_server`` are parametrised over both task stores
(``memory`` and ``sqlite``); a test that does not depend on storage can pin
one with ``@pytest.mark.parametrize("store_kind", ["memory"])``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from a2a_grpc.core._handler import HandlerConfig
from a2a_grpc.core.ports import TaskStore
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.store._sql import SqlTaskStore
from a2a_grpc.types import pb_grpc
from tests.core.agents import ScriptedAgent
from tests.core.helpers import VERSION_MD, RecordingPush

__all__ = ["VERSION_MD"]

MakeServer = Callable[..., Awaitable[A2AServer]]


@pytest.fixture(params=["memory", "sqlite"])
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def new_store(store_kind: str, tmp_path: Path) -> Callable[[], TaskStore]:
    """Makes a fresh store of the parametrised kind (SQLite: a new file)."""
    count = 0

    def make() -> TaskStore:
        nonlocal count
        count += 1
        if store_kind == "memory":
            return InMemoryTaskStore()
        return SqlTaskStore(f"sqlite:///{tmp_path / f'a2a-{count}.db'}")

    return make


@pytest.fixture
async def make_server(new_store: Callable[[], TaskStore]) -> AsyncIterator[MakeServer]:
    """``await make_server(agent=..., store=..., push=..., extended_card=...,
    handler=HandlerConfig(...), **ServerConfig fields)``: a started server,
    stopped at teardown."""
    started: list[A2AServer] = []

    async def make(
        agent: ScriptedAgent | None = None,
        *,
        store: TaskStore | None = None,
        push: Any = None,
        extended_card: Any = None,
        handler: HandlerConfig | None = None,
        **config: Any,
    ) -> A2AServer:
        cfg = ServerConfig(grpc_port=0, http_port=None, grace_seconds=1.0, **config)
        if handler is not None:
            cfg.handler = handler
        srv = A2AServer(
            agent or ScriptedAgent(),
            store or new_store(),
            cfg,
            push=push,
            extended_card=extended_card,
        )
        await srv.start()
        started.append(srv)
        return srv

    yield make
    for srv in started:
        if not srv._stopped.is_set():
            await srv.stop(0.2)


@pytest.fixture
def agent() -> ScriptedAgent:
    return ScriptedAgent()


@pytest.fixture
async def server(make_server: MakeServer, agent: ScriptedAgent) -> A2AServer:
    return await make_server(agent)


@pytest.fixture
async def stub(server: A2AServer) -> AsyncIterator[pb_grpc.A2AServiceStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        yield pb_grpc.A2AServiceStub(channel)


@pytest.fixture
def push_sink() -> RecordingPush:
    return RecordingPush()
