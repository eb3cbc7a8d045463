"""A2AServer: the gRPC server and the HTTP gateway in one process and loop.

``grpc.aio`` serves ``lf.a2a.v1.A2AService`` natively (with server reflection
and ``grpc.health.v1``), and an aiohttp application serves JSON-RPC 2.0,
HTTP+JSON and the Agent Card by calling the *same* servicer object in process
(design.md). Shutdown is graceful: health turns NOT_SERVING, new calls are
refused, in-flight calls get ``grace_seconds`` to finish.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2a_grpc.card import BINDINGS, build_card
from a2a_grpc.connlimits import ConnectionLimits, bind_error, grpc_options
from a2a_grpc.errors import A2AError, FieldViolation
from a2a_grpc.executor import AgentExecutor
from a2a_grpc.handler import HandlerConfig, PushSink, RequestHandler
from a2a_grpc.health import HealthServicer
from a2a_grpc.interceptors import CallInterceptor
from a2a_grpc.reflection import enable_reflection
from a2a_grpc.servicer import A2AServicer, abort
from a2a_grpc.store.base import Store
from a2a_grpc.types import SERVICE_NAME, pb, pb_grpc

__all__ = ["A2AServer", "ServerConfig"]

log = logging.getLogger("a2a_grpc.server")
#: New gRPC calls grpc-core queues before the application accepts them (its
#: defaults: 1,000, and 3,000 past which it cancels at once).
_MAX_PENDING_CALLS = 20_000
_MAX_PENDING_CALLS_HARD = 40_000


@dataclass(slots=True)
class ServerConfig:
    """Where and how the server listens.

    Ports 0 pick free ports (read them back from ``A2AServer.grpc_port`` /
    ``http_port``); ``http_port=None`` serves gRPC only. ``public_url`` is the
    HTTP base URL advertised in the Agent Card (default
    ``http://host:http_port``); ``public_grpc`` the advertised gRPC
    ``host:port``. ``max_message_bytes`` caps requests and responses on both
    transports (bytes). ``grace_seconds``: shutdown grace period.
    ``interceptors``: the server's own :class:`~a2a_grpc.interceptors.
    CallInterceptor` steps, run on every RPC of every binding after the
    built-in ones (version, extensions, validation, capability gate), in list
    order, just before the operation; their ``after`` in reverse order (see
    :mod:`a2a_grpc.interceptors` and docs/interceptors.md).
    ``freeze_gc`` (off for embedders, on in ``a2a-grpc serve``): once started,
    move everything alive (modules, classes,
    descriptor pools: ~80,000 objects) out of reach of Python's cyclic GC
    (``gc.freeze()``), so its full collections scan only what requests create —
    they were the p99 tail under load (REST streaming at concurrency 64: p99
    100 → 35 ms).
    """

    host: str = "127.0.0.1"
    grpc_port: int = 50051
    http_port: int | None = 8080
    public_url: str | None = None
    public_grpc: str | None = None
    max_message_bytes: int = 16 * 1024 * 1024
    grace_seconds: float = 5.0
    interface_order: Sequence[str] = BINDINGS
    keepalive_seconds: float = 15.0
    freeze_gc: bool = False
    card_max_age_seconds: int = 300
    handler: HandlerConfig = field(default_factory=HandlerConfig)
    interceptors: Sequence[CallInterceptor] = ()
    #: Connection caps and timeouts of both ports (issue 10; a2a_grpc.connlimits).
    connections: ConnectionLimits = field(default_factory=ConnectionLimits)


class A2AServer:
    """Serves one agent over gRPC, JSON-RPC and HTTP+JSON.

    ``push`` (a PushSink, e.g. ``a2a_grpc.push.PushDispatcher``) turns push
    notifications on and declares them in the card; it is started and stopped
    with the server when it has ``start``/``stop`` coroutines.
    """

    def __init__(
        self,
        executor: AgentExecutor,
        store: Store,
        config: ServerConfig | None = None,
        *,
        push: PushSink | None = None,
        extended_card: pb.AgentCard | None = None,
    ) -> None:
        self.config = config or ServerConfig()
        self.executor = executor
        self.store = store
        self.push = push
        self.config.handler.max_request_bytes = self.config.max_message_bytes
        self.handler = RequestHandler(
            executor,
            store,
            build_card(executor.card, {}, push=push is not None, extended=extended_card is not None),
            config=self.config.handler,
            extended_card=extended_card,
            push=push,
        )
        self.servicer = A2AServicer(self.handler, self.config.interceptors)
        self.grpc_port = 0
        self.http_port: int | None = None
        self._grpc: grpc.aio.Server | None = None
        self._health: HealthServicer | None = None
        self._site: Any = None
        self._runner: Any = None
        self._stopped = asyncio.Event()

    @property
    def card(self) -> pb.AgentCard:
        """The public Agent Card as served (interfaces filled after start)."""
        return self.handler.card

    def _urls(self) -> dict[str, str]:
        cfg = self.config
        host = cfg.host if cfg.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        urls = {"GRPC": cfg.public_grpc or f"{host}:{self.grpc_port}"}
        if self.http_port is not None:
            base = (cfg.public_url or f"http://{host}:{self.http_port}").rstrip("/")
            urls["JSONRPC"] = base + "/"
            urls["HTTP+JSON"] = base
        return urls

    async def start(self) -> None:
        """Opens the store, binds both servers and starts serving; raises
        OSError when a port cannot be bound."""
        cfg = self.config
        await self.store.open()
        start = getattr(self.push, "start", None)
        if start is not None:
            await start()
        server = self._grpc_server()
        self.grpc_port = _bind_grpc(server, cfg.host, cfg.grpc_port)
        self._grpc = server
        if cfg.http_port is not None:
            await self._start_http(cfg.http_port)
        self.handler.card = build_card(
            self.executor.card,
            self._urls(),
            order=cfg.interface_order,
            push=self.push is not None,
            extended=self.handler.extended_card is not None,
        )
        await server.start()
        assert self._health is not None
        await self._health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
        await self._health.set("", health_pb2.HealthCheckResponse.SERVING)
        if cfg.freeze_gc:
            gc.collect()
            gc.freeze()
        log.info("serving %s: gRPC %s, HTTP %s", self.card.name, self.grpc_port, self.http_port)

    def _grpc_server(self) -> grpc.aio.Server:
        """The grpc.aio server with the A2A service, health and reflection."""
        limit = self.config.max_message_bytes
        server = grpc.aio.server(
            options=[
                # gRPC itself refuses only far larger messages, so that an
                # oversize request reaches validation and gets INVALID_ARGUMENT
                # with a field violation instead of a bare RESOURCE_EXHAUSTED.
                ("grpc.max_receive_message_length", limit * 2 + 1024 * 1024),
                ("grpc.max_send_message_length", limit * 2 + 1024 * 1024),
                ("grpc.so_reuseport", 0),
                # grpc-core ends new calls with CANCELLED beyond 1,000 (hard
                # limit 3,000) not yet accepted by grpc.aio, which accepts them
                # one at a time: a burst (thousands of SubscribeToTask streams,
                # clients reconnecting after a restart) is queued instead.
                ("grpc.server.max_pending_requests", _MAX_PENDING_CALLS),
                ("grpc.server.max_pending_requests_hard_limit", _MAX_PENDING_CALLS_HARD),
                *grpc_options(self.config.connections),
            ]
        )
        _add_servicer(self.servicer, server)
        self._health = HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        enable_reflection((SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name), server)
        return server

    async def _start_http(self, port: int) -> None:
        """Serves the gateway (JSON-RPC, HTTP+JSON, the Agent Card) on ``port``."""
        from aiohttp import web

        from gateway.app import CARD_PATHS, create_app
        from gateway.connections import ClientErrorLogger, GuardedSite, reserve_middleware

        cfg = self.config
        app = create_app(
            self.servicer,
            lambda: self.handler.card,
            keepalive_seconds=cfg.keepalive_seconds,
            card_max_age_seconds=cfg.card_max_age_seconds,
            # JSON carries bytes as base64: allow for its 4/3 growth.
            max_body_bytes=cfg.max_message_bytes * 4 // 3 + 1024 * 1024,
        )
        app.middlewares.insert(0, reserve_middleware(CARD_PATHS))
        limits = cfg.connections
        handler_args: dict[str, Any] = {
            "access_log": None,
            "logger": ClientErrorLogger(),
            "keepalive_timeout": limits.idle_timeout_seconds,
        }
        runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=cfg.grace_seconds, **handler_args)
        await runner.setup()
        site = GuardedSite(runner, cfg.host, port, limits, handler_args)
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner
        self._site = site
        self.http_port = site.port

    async def stop(self, grace_seconds: float | None = None) -> None:
        """Graceful shutdown: NOT_SERVING, drain for ``grace_seconds``, close."""
        grace = self.config.grace_seconds if grace_seconds is None else grace_seconds
        if self._health is not None:
            await self._health.enter_graceful_shutdown()
        stops = []
        if self._grpc is not None:
            stops.append(self._grpc.stop(grace))
        # Executions still running are stopped a little before gRPC cancels
        # the calls at the end of the grace period, so their streams end
        # with the task's final (FAILED) status instead of UNAVAILABLE.
        stops.append(self.handler.close(max(0.0, grace - min(1.0, grace / 4))))
        await asyncio.gather(*stops, return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        stop = getattr(self.push, "stop", None)
        if stop is not None:
            await stop()
        await self.store.close()
        self._stopped.set()

    async def wait_stopped(self) -> None:
        """Returns once :meth:`stop` has completed."""
        await self._stopped.wait()

    async def __aenter__(self) -> A2AServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class _Undecodable:
    """Stands in for a request whose bytes are not the RPC's message."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _tolerant(name: str, handler: Any) -> Any:
    """``handler`` with a deserializer that never raises: gRPC turns an
    exception there into UNKNOWN with the exception's class in the details;
    instead the call ends with INVALID_ARGUMENT (INVALID_PARAMS) and a field
    violation, as any other bad input (spec §5.7, §10.6)."""
    parse = handler.request_deserializer

    def deserialize(data: bytes) -> Any:
        try:
            return parse(data)
        except DecodeError as exc:
            return _Undecodable(f"is not a valid {name} in protobuf binary form: {exc}")

    def refusal(request: _Undecodable) -> A2AError:
        return A2AError.invalid_params(FieldViolation("", request.problem))

    if handler.response_streaming:
        behavior = handler.unary_stream

        async def unary_stream(request: Any, context: Any) -> AsyncIterator[Any]:
            if isinstance(request, _Undecodable):
                await abort(context, refusal(request))
            async for event in behavior(request, context):
                yield event

        return handler._replace(request_deserializer=deserialize, unary_stream=unary_stream)
    unary = handler.unary_unary

    async def unary_unary(request: Any, context: Any) -> Any:
        if isinstance(request, _Undecodable):
            await abort(context, refusal(request))
        return await unary(request, context)

    return handler._replace(request_deserializer=deserialize, unary_unary=unary_unary)


class _Capture:
    """Receives the generated code's method handlers instead of a server."""

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        pass

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        self.handlers = dict(handlers)


def _add_servicer(servicer: A2AServicer, server: grpc.aio.Server) -> None:
    """Registers ``servicer`` like the generated ``add_A2AServiceServicer_to_server``
    does, with undecodable requests answered INVALID_ARGUMENT (see _tolerant)."""
    capture = _Capture()
    pb_grpc.add_A2AServiceServicer_to_server(servicer, capture)
    methods = pb.DESCRIPTOR.services_by_name["A2AService"].methods_by_name
    handlers = {
        name: _tolerant(methods[name].input_type.full_name, handler)
        for name, handler in capture.handlers.items()
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(SERVICE_NAME, handlers)


def _bind_grpc(server: grpc.aio.Server, host: str, port: int) -> int:
    """Binds ``server`` to ``host``:``port`` and returns the bound port.
    Raises OSError with one line naming the port when it is taken (checked
    first, so grpc-core logs nothing) or cannot be bound."""
    if port:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                raise bind_error("gRPC", host, port, exc) from None
    try:
        bound = server.add_insecure_port(f"{_bracket(host)}:{port}")
    except RuntimeError:
        bound = 0
    if bound == 0:
        raise OSError(f"gRPC port {port} on {host} cannot be bound")
    return bound


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
