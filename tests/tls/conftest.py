"""Shared fixtures of the TLS and card-signature tests: a test PKI and servers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from google.protobuf.message import Message

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.cli import main
from a2a_grpc.context import CallContext
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from tests.tls.certs import Pki, make_pki


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


class Recorder:
    """A user interceptor recording each call's RPC and TLS peer identity."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    async def before(self, call: CallContext, request: Message) -> None:
        self.calls.append((call.rpc_name, call.peer_identity))

    async def after(self, call: CallContext, outcome: object) -> None:
        pass


@contextlib.asynccontextmanager
async def running(**config: Any) -> AsyncIterator[tuple[A2AServer, Recorder]]:
    """An echo agent on ephemeral 127.0.0.1 ports with ``config`` and a Recorder."""
    recorder = Recorder()
    cfg = ServerConfig(grpc_port=0, http_port=0, interceptors=[recorder], **config)
    server = A2AServer(EchoAgent(), InMemoryTaskStore(), cfg)
    await server.start()
    try:
        yield server, recorder
    finally:
        await server.stop(0.2)


async def cli(*args: str | Path) -> Result:
    """``a2a-grpc ARGS`` in a worker thread, so the server keeps serving on the loop."""
    return await asyncio.to_thread(CliRunner().invoke, main, [str(a) for a in args])
