"""One real A2AServer for the whole conformance suite, and a client per binding.

The server runs :class:`~tests.conformance.agents.ConformanceAgent` on an
in-memory store with push notifications on (webhooks allowed to 127.0.0.1,
where a receiver of this package listens), gRPC and HTTP on ephemeral ports.
A second, "bare" server (strict versions, no streaming, no push, no extended
card, a required extension) serves the capability errors.

Every scenario takes the ``binding`` fixture (grpc, jsonrpc, rest, and
rest-loopback: the gateway forwarding over a real gRPC channel, see
:mod:`tests.conformance.loopback`) and records
a :class:`Transcript`; :func:`Transcript.check_parity` asserts that it is
identical to the transcripts the other bindings recorded for the scenario.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import grpc
import pytest
import pytest_asyncio
from aiohttp import web
from google.protobuf import message as proto_message
from google.protobuf import text_format

from a2a_grpc.bindings._http.app import create_app
from a2a_grpc.core._handler import HandlerConfig
from a2a_grpc.errors import A2AError
from a2a_grpc.push import PushDispatcher
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from tests.conformance.agents import BareAgent, ConformanceAgent
from tests.conformance.clients import Binding, GrpcBinding, JsonRpcBinding, RestBinding
from tests.conformance.loopback import GrpcForwarder

BINDINGS = ("grpc", "jsonrpc", "rest", "rest-loopback")
ID_FIELDS = frozenset({"id", "task_id", "context_id", "message_id", "artifact_id", "reference_task_ids"})


@dataclass
class Receiver:
    url: str
    posts: list[tuple[dict[str, str], bytes]] = field(default_factory=list)


@dataclass
class Servers:
    main: A2AServer
    bare: A2AServer
    receiver: Receiver
    #: HTTP port of a gateway forwarding over a gRPC channel to each server.
    loopback_ports: dict[int, int] = field(default_factory=dict)


async def _loopback(server: A2AServer) -> tuple[web.AppRunner, grpc.aio.Channel, int]:
    channel = grpc.aio.insecure_channel(
        f"127.0.0.1:{server.grpc_port}",
        options=[("grpc.max_receive_message_length", 64 << 20), ("grpc.max_send_message_length", 64 << 20)],
    )
    app = create_app(GrpcForwarder(channel), lambda: server.card, max_body_bytes=32 << 20)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, channel, runner.addresses[0][1]


@pytest_asyncio.fixture(scope="package", loop_scope="package")
async def servers() -> AsyncIterator[Servers]:
    posts: list[tuple[dict[str, str], bytes]] = []

    async def hook(request: web.Request) -> web.Response:
        posts.append((dict(request.headers), await request.read()))
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    receiver = Receiver(f"http://127.0.0.1:{runner.addresses[0][1]}/hook", posts)

    store = InMemoryTaskStore()
    main = A2AServer(
        ConformanceAgent(),
        store,
        ServerConfig(host="127.0.0.1", grpc_port=0, http_port=0, grace_seconds=1, keepalive_seconds=15),
        push=PushDispatcher(store, allow=["127.0.0.1"], max_attempts=1, timeout_seconds=2),
    )
    bare = A2AServer(
        BareAgent(),
        InMemoryTaskStore(),
        ServerConfig(
            host="127.0.0.1",
            grpc_port=0,
            http_port=0,
            grace_seconds=1,
            handler=HandlerConfig(strict_version=True),
        ),
    )
    await main.start()
    await bare.start()
    loopbacks = [await _loopback(main), await _loopback(bare)]
    ports = {id(main): loopbacks[0][2], id(bare): loopbacks[1][2]}
    try:
        yield Servers(main, bare, receiver, ports)
    finally:
        for lb_runner, channel, _ in loopbacks:
            await lb_runner.cleanup()
            await channel.close()
        await asyncio.gather(main.stop(1), bare.stop(1))
        await runner.cleanup()


async def _binding(name: str, server: A2AServer, servers: Servers | None = None) -> AsyncIterator[Binding]:
    if name == "grpc":
        async with grpc.aio.insecure_channel(
            f"127.0.0.1:{server.grpc_port}",
            options=[
                ("grpc.max_receive_message_length", 64 << 20),
                ("grpc.max_send_message_length", 64 << 20),
            ],
        ) as channel:
            yield GrpcBinding(channel)
        return
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
        if name == "rest-loopback":
            assert servers is not None
            rest = RestBinding(session, f"http://127.0.0.1:{servers.loopback_ports[id(server)]}")
            rest.name = name
            yield rest
            return
        base = f"http://127.0.0.1:{server.http_port}"
        yield JsonRpcBinding(session, base + "/") if name == "jsonrpc" else RestBinding(session, base)


@pytest_asyncio.fixture(params=BINDINGS, loop_scope="package")
async def binding(request: pytest.FixtureRequest, servers: Servers) -> AsyncIterator[Binding]:
    async for b in _binding(request.param, servers.main, servers):
        yield b


@pytest_asyncio.fixture(loop_scope="package")
async def bare(binding: Binding, servers: Servers) -> AsyncIterator[Binding]:
    """The same binding, against the bare server."""
    async for b in _binding(binding.name, servers.bare, servers):
        yield b


_RECORDED: dict[str, dict[str, list[tuple[str, str]]]] = {}


class Transcript:
    """What a scenario saw, with ids replaced by placeholders in order of
    first appearance and timestamps removed, so that runs over different
    bindings compare equal exactly when they behaved the same."""

    def __init__(self, scenario: str, binding: str) -> None:
        self.scenario = scenario
        self.binding = binding
        self.items: list[tuple[str, str]] = []
        self._ids: dict[str, str] = {}

    def _placeholder(self, value: str) -> str:
        if not value:
            return value
        return self._ids.setdefault(value, f"<id{len(self._ids) + 1}>")

    def _normalize(self, msg: proto_message.Message) -> None:
        for fd, value in list(msg.ListFields()):
            if fd.type == fd.TYPE_MESSAGE:
                full = fd.message_type.full_name
                if full == "google.protobuf.Timestamp":
                    msg.ClearField(fd.name)
                elif full.startswith("google.protobuf."):
                    continue
                elif fd.is_repeated:
                    if not (fd.message_type.has_options and fd.message_type.GetOptions().map_entry):
                        for item in value:
                            self._normalize(item)
                else:
                    self._normalize(value)
            elif fd.name in ID_FIELDS and fd.type == fd.TYPE_STRING:
                if fd.is_repeated:
                    value[:] = [self._placeholder(v) for v in value]
                else:
                    setattr(msg, fd.name, self._placeholder(value))

    def add(self, label: str, msg: Any) -> Any:
        """Records a response (or a list of stream events); returns it unchanged."""
        items = msg if isinstance(msg, list) else [msg]
        for item in items:
            copy = type(item)()
            copy.CopyFrom(item)
            self._normalize(copy)
            self.items.append((label, text_format.MessageToString(copy, as_utf8=True)))
        if isinstance(msg, list):
            self.items.append((label, f"<{len(msg)} events>"))
        return msg

    def error(self, label: str, err: A2AError | None) -> A2AError:
        """Records an error's reason (and field violations)."""
        assert err is not None, f"{label}: expected an error"
        fields = ",".join(v.field for v in err.field_violations)
        self.items.append((label, f"error {err.code.reason} [{fields}]"))
        return err

    def note(self, label: str, value: object) -> None:
        self.items.append((label, repr(value)))

    def check_parity(self) -> None:
        """Asserts this transcript equals every other binding's for the scenario."""
        seen = _RECORDED.setdefault(self.scenario, {})
        seen[self.binding] = self.items
        for other, items in seen.items():
            assert items == self.items, f"{self.scenario}: {self.binding} differs from {other}"


@pytest.fixture
def transcript(request: pytest.FixtureRequest, binding: Binding) -> Transcript:
    return Transcript(request.node.originalname, binding.name)


@pytest_asyncio.fixture(params=("jsonrpc", "rest"), loop_scope="package")
async def http_binding(request: pytest.FixtureRequest, servers: Servers) -> AsyncIterator[Binding]:
    """The two HTTP bindings only (JSON framing does not exist on gRPC)."""
    async for b in _binding(request.param, servers.main):
        yield b
