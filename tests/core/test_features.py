"""The Feature seam and the one composition root (a2a_grpc/core/features.py,
a2a_grpc/server.py): what a feature gives is what the running server uses —
its observer inside the kernel's constructors, its interceptors in their
slot, its card decorators on the served cards, its HTTP routes, its
start/stop in order — and an unconfigured server has none of it on the
request path."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import aiohttp
import grpc
import pytest
from aiohttp import web
from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.agents import EchoAgent
from a2a_grpc.bindings._servicer import builtin_interceptors
from a2a_grpc.context import CallContext
from a2a_grpc.core._card import CardDecorator
from a2a_grpc.core._interceptors import CallInterceptor, Outcome
from a2a_grpc.core.features import Feature, Kernel
from a2a_grpc.core.hooks import NO_OBSERVER, Observer
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store import InMemoryTaskStore
from a2a_grpc.types import pb, pb_grpc
from tests.core.helpers import VERSION_MD, msg


class _Hooks(Observer):
    def __init__(self) -> None:
        self.executions: list[str] = []
        self.created: list[int] = []

    @contextmanager
    def _run(self, task_id: str) -> Any:
        self.executions.append(task_id)
        yield

    def execution(self, task_id: str, context_id: str) -> AbstractContextManager[Any]:
        return self._run(task_id)

    def task_created(self, state: int) -> None:
        self.created.append(state)


class _Step(CallInterceptor):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        self.log.append(f"{self.name}:{call.rpc_name}")

    async def after(self, call: CallContext, outcome: Outcome) -> None:
        self.log.append(f"/{self.name}")


def _tagged(card: pb.AgentCard) -> pb.AgentCard:
    out = pb.AgentCard()
    out.CopyFrom(card)
    out.documentation_url = "https://example.test/feature"
    return out


class _Probe(Feature):
    """A feature using every member, recording what the root does with it."""

    execution_time_limit = 30.0

    def __init__(self, events: list[str], log: list[str]) -> None:
        self.events, self.log = events, log
        self.observer = _Hooks()
        self.kernel: Kernel | None = None

    def card_decorators(self) -> Sequence[CardDecorator]:
        return (_tagged,)

    def interceptors(self, kernel: Kernel) -> Mapping[str, Sequence[CallInterceptor]]:
        return {"telemetry": [_Step("telemetry", self.log)], "authorization": [_Step("authz", self.log)]}

    def http_mounts(self) -> Sequence[Callable[[Any], None]]:
        async def hello(request: web.Request) -> web.Response:
            return web.json_response({"hello": "feature"})

        return (lambda gateway: gateway.add_route("GET", "/hello", hello),)

    async def start(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.events.append("probe started")

    async def stop(self) -> None:
        self.events.append("probe stopped")


class _Refuses(Feature):
    async def start(self, kernel: Kernel) -> None:
        raise RuntimeError("cannot start")


class _Recording(Feature):
    def __init__(self, name: str, events: list[str]) -> None:
        self.name, self.events = name, events

    async def start(self, kernel: Kernel) -> None:
        self.events.append(f"{self.name} started")

    async def stop(self) -> None:
        self.events.append(f"{self.name} stopped")


def _config(*features: Feature, **fields: Any) -> ServerConfig:
    return ServerConfig(grpc_port=0, http_port=0, grace_seconds=0.5, features=features, **fields)


async def test_what_a_feature_gives_is_what_the_server_runs() -> None:
    events: list[str] = []
    log: list[str] = []
    probe = _Probe(events, log)
    own = _Step("own", log)
    extended = pb.AgentCard(name="Echo (extended)")
    server = A2AServer(
        EchoAgent(), InMemoryTaskStore(), _config(probe, interceptors=[own]), extended_card=extended
    )
    handler = server.handler
    # The observer is in the constructors of what runs it: the only one, not wrapped.
    assert handler.bus.observer is probe.observer
    assert handler.writer.observer is probe.observer
    assert handler.executions.observer is probe.observer
    assert handler.executions.time_limit == 30.0
    # The card decorators: on the handler's card and on the extended card (which is a copy).
    assert handler.card.documentation_url == handler.extended_card.documentation_url != ""
    assert extended.documentation_url == ""
    # The slots: telemetry first, authorization after the built-in steps, the server's own last.
    steps = server.servicer.chain.interceptors
    assert steps[0] is not own and isinstance(steps[0], _Step) and steps[0].name == "telemetry"
    assert [type(s).__name__ for s in steps[1:5]] == [
        "VersionNegotiation",
        "ExtensionNegotiation",
        "RequestValidation",
        "CapabilityGate",
    ]
    assert [s.name for s in steps[5:]] == ["authz", "own"]  # type: ignore[attr-defined]
    unserved = server.card
    await server.start()
    try:
        assert probe.kernel is not None and probe.kernel.handler is handler
        assert events == ["probe started"]
        assert not unserved.supported_interfaces  # the card served before start is never changed
        served = server.card
        assert served is not unserved and served.documentation_url == "https://example.test/feature"
        assert [i.protocol_binding for i in served.supported_interfaces] == ["GRPC", "JSONRPC", "HTTP+JSON"]
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
            task = (await pb_grpc.A2AServiceStub(channel).SendMessage(msg("hi"), metadata=VERSION_MD)).task
        assert task.status.state == pb.TASK_STATE_COMPLETED
        assert log == [
            "telemetry:SendMessage",
            "authz:SendMessage",
            "own:SendMessage",
            "/own",
            "/authz",
            "/telemetry",
        ]
        assert probe.observer.executions == [task.id] and probe.observer.created
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{server.http_port}/hello") as resp:
                assert await resp.json() == {"hello": "feature"}
            async with http.get(f"http://127.0.0.1:{server.http_port}/.well-known/agent-card.json") as resp:
                assert (await resp.json())["documentationUrl"] == "https://example.test/feature"
    finally:
        await server.stop()
    assert events == ["probe started", "probe stopped"]


async def test_an_unconfigured_server_has_nothing_on_the_request_path() -> None:
    """No observer (the kernel skips its hooks), no wrapped store, no step
    but the built-in ones."""
    store = InMemoryTaskStore()
    server = A2AServer(EchoAgent(), store, ServerConfig(grpc_port=0, http_port=0))
    handler = server.handler
    assert handler.store is store
    assert handler.bus.observer is handler.writer.observer is handler.executions.observer is NO_OBSERVER
    assert handler.executions.time_limit is None
    steps = server.servicer.chain.interceptors
    assert [type(s) for s in steps] == [type(s) for s in builtin_interceptors(handler)]
    assert server.metrics is server.tracing is server.cluster is None


async def test_features_stop_in_reverse_and_a_failed_start_unwinds() -> None:
    events: list[str] = []
    good = A2AServer(
        EchoAgent(), InMemoryTaskStore(), _config(_Recording("a", events), _Recording("b", events))
    )
    await good.start()
    await good.stop()
    assert events == ["a started", "b started", "b stopped", "a stopped"]

    events.clear()
    store = InMemoryTaskStore()
    closed = asyncio.Event()
    close = store.close

    async def closing() -> None:
        closed.set()
        await close()

    store.close = closing  # type: ignore[method-assign]
    bad = A2AServer(EchoAgent(), store, _config(_Recording("a", events), _Refuses()))
    with pytest.raises(RuntimeError, match="cannot start"):
        await bad.start()
    assert events == ["a started", "a stopped"] and closed.is_set()  # the store too: it opened first
    assert bad.grpc_port == 0  # no port was bound


def test_an_unknown_slot_is_refused() -> None:
    class Misplaced(Feature):
        def interceptors(self, kernel: Kernel) -> Mapping[str, Sequence[CallInterceptor]]:
            return {"somewhere": [_Step("lost", [])]}

    with pytest.raises(ValueError, match="unknown interceptor slot 'somewhere'"):
        A2AServer(EchoAgent(), InMemoryTaskStore(), _config(Misplaced()))
