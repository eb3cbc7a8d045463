"""Fixtures for the agent registry: real A2A agents and a real registry on
127.0.0.1 ephemeral ports, and one caller per binding (gRPC stub, JSON-RPC
POST, HTTP+JSON routes expanded from registry.proto's rules)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import grpc
import pytest
from google.protobuf import message as _message

from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.protocol import protojson
from a2a_grpc.protocol._httprule import compile_service
from a2a_grpc.registry._server import RegistryConfig, RegistryServer
from a2a_grpc.registry._types import SERVICE, rpb_grpc
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import Event, pb

BINDINGS = ("grpc", "jsonrpc", "rest")


def skill(sid: str, *tags: str, inputs: tuple[str, ...] = ()) -> pb.AgentSkill:
    return pb.AgentSkill(
        id=sid, name=sid.title(), description=f"Does {sid}.", tags=list(tags), input_modes=list(inputs)
    )


class Done(AgentExecutor):
    """An agent that completes every task; its card is given."""

    def __init__(self, card: pb.AgentCard) -> None:
        self.card = card

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        yield ctx.status(pb.TASK_STATE_COMPLETED)


def card(name: str, *skills: pb.AgentSkill) -> pb.AgentCard:
    return pb.AgentCard(
        name=name,
        description=f"{name} for registry tests.",
        version="1.0.0",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=list(skills),
    )


@pytest.fixture
async def start_agent() -> AsyncIterator[Callable[..., Any]]:
    started: list[A2AServer] = []

    async def start(c: pb.AgentCard, order: tuple[str, ...] = ("GRPC", "JSONRPC", "HTTP+JSON")) -> A2AServer:
        srv = A2AServer(
            Done(c), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0, interface_order=order)
        )
        await srv.start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        await srv.stop(0.1)


def url_of(srv: A2AServer) -> str:
    return f"http://127.0.0.1:{srv.http_port}"


@pytest.fixture
async def registry(tmp_path: Any) -> AsyncIterator[RegistryServer]:
    cfg = RegistryConfig(
        grpc_port=0,
        http_port=0,
        store_url=f"sqlite:///{tmp_path / 'reg.db'}",
        allow_private=True,
        check_interval_seconds=3600,
    )
    async with RegistryServer(cfg) as srv:
        yield srv


class Caller:
    """Calls one RPC of the registry on one binding; answers the ProtoJSON
    dict of the response, or ``{"error": REASON}``."""

    def __init__(self, binding: str, srv: RegistryServer, session: aiohttp.ClientSession) -> None:
        self.binding = binding
        self.srv = srv
        self.session = session
        self.channel = grpc.aio.insecure_channel(srv.grpc_target)
        self.routes = {r.method.name: r for r in compile_service(SERVICE).routes}

    async def __call__(self, name: str, request: _message.Message) -> dict[str, Any]:
        return await getattr(self, "_" + self.binding)(name, request)

    async def _grpc(self, name: str, request: _message.Message) -> dict[str, Any]:
        try:
            return protojson.to_dict(
                await getattr(rpb_grpc.AgentRegistryServiceStub(self.channel), name)(request)
            )
        except grpc.aio.AioRpcError as exc:
            from a2a_grpc.registry._client import _grpc_error

            return {"error": _grpc_error(exc).code.reason}

    async def _jsonrpc(self, name: str, request: _message.Message) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": name, "params": protojson.to_dict(request)}
        async with self.session.post(self.srv.http_url + "/", json=body) as resp:
            assert resp.status == 200
            data = json.loads(await resp.read())
        if "error" in data:
            return {"error": data["error"]["data"][0]["reason"]}
        return dict(data["result"])

    async def _rest(self, name: str, request: _message.Message) -> dict[str, Any]:
        call = self.routes[name].expand(request, protojson.to_dict)
        assert call is not None
        async with self.session.request(
            call.route.http_method,
            self.srv.http_url + call.path,
            params=list(call.query),
            json=call.body if call.body is not None else None,
        ) as resp:
            data = json.loads(await resp.read())
        if resp.status != 200:
            return {"error": data["error"]["details"][0]["reason"]}
        return dict(data)

    async def close(self) -> None:
        await self.channel.close()


@pytest.fixture
async def callers(registry: RegistryServer) -> AsyncIterator[dict[str, Caller]]:
    async with aiohttp.ClientSession() as session:
        out = {b: Caller(b, registry, session) for b in BINDINGS}
        yield out
        for c in out.values():
            await c.close()
