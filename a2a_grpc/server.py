"""A2AServer: the gRPC server and the HTTP gateway in one process and loop.

``grpc.aio`` serves ``lf.a2a.v1.A2AService`` natively (with server reflection
and ``grpc.health.v1``), and an aiohttp application serves JSON-RPC 2.0,
HTTP+JSON and the Agent Card by calling the *same* servicer object in process
(design.md). Shutdown is graceful: health turns NOT_SERVING, new calls are
refused, in-flight calls get ``grace_seconds`` to finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import logging
import signal
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2a_grpc.bindings._connlimits import ConnectionLimits, bind_error, grpc_options
from a2a_grpc.bindings._health import HealthServicer
from a2a_grpc.bindings._reflection import enable_reflection
from a2a_grpc.bindings._servicer import A2AServicer, abort
from a2a_grpc.core._card import BINDINGS, PROTOCOL_VERSION, build_card
from a2a_grpc.core._executor import AgentExecutor
from a2a_grpc.core._handler import HandlerConfig, PushSink, RequestHandler
from a2a_grpc.core._interceptors import CallInterceptor
from a2a_grpc.core.ports import Store
from a2a_grpc.dialects._v03grpc import SERVICE as V03_SERVICE
from a2a_grpc.dialects._v03grpc import V03Servicer, abort_v03
from a2a_grpc.errors import A2AError, FieldViolation
from a2a_grpc.types import SERVICE_NAME, pb, pb_grpc

if TYPE_CHECKING:
    from a2a_grpc.auth._audit import AuditLog
    from a2a_grpc.auth._policy import AuthPolicy
    from a2a_grpc.bindings.tls import ServerTLS
    from a2a_grpc.cluster._leases import Cluster, ClusterConfig
    from a2a_grpc.protocol.cardsign import CardSigner

__all__ = ["A2AServer", "ServerConfig", "run_loop", "serve"]

#: What ``serve_forever`` calls once the server is up.
OnStarted = Callable[["A2AServer"], Awaitable[None] | None]

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
    ``interceptors``: the server's own :class:`~a2a_grpc.core._interceptors.
    CallInterceptor` steps, run on every RPC of every binding after the
    built-in ones (version, extensions, validation, capability gate), in list
    order, just before the operation; their ``after`` in reverse order (see
    :mod:`a2a_grpc.core._interceptors` and docs/interceptors.md).
    ``metrics``: Prometheus metrics (extra ``[metrics]``) at ``GET /metrics``
    on the HTTP port, or only on ``metrics_port`` when that is set (0: any
    free port, read back from ``A2AServer.metrics_port``); see
    docs/operations.md. ``tracing``: OpenTelemetry spans (extra ``[otel]``)
    made with ``tracer_provider``, by default the global SDK provider or, when
    none is installed, one built from the ``OTEL_*`` variables (installed
    globally, flushed at :meth:`A2AServer.stop`). ``request_ids``: each call
    gets a request id (the caller's ``x-request-id`` or a new one) that log
    records written while serving it carry; ``access_log`` (implies it): one
    ``a2a_grpc.access`` line per call (:mod:`a2a_grpc.telemetry._logs`).
    ``retain_terminal_seconds``: terminal tasks older than this are deleted
    in the background, with their push configs and outbox rows
    (:mod:`a2a_grpc.store._retention`; None keeps every task).
    ``health_check_seconds``: how often the store is pinged; health is
    NOT_SERVING while it does not answer (:mod:`a2a_grpc.store._health`; None:
    never checked).
    ``recover_lost_tasks`` (single process): on start, tasks an earlier
    process left SUBMITTED/WORKING become FAILED ("execution lost: …",
    :mod:`a2a_grpc.cluster._recovery`). ``cluster``: cluster mode (the store
    must be a :class:`~a2a_grpc.cluster._store.ClusterStore`): execution
    leases replace that start-up recovery (:mod:`a2a_grpc.cluster._leases`).
    ``freeze_gc`` (off for embedders, on in ``a2a-grpc serve``): once started,
    move everything alive (modules, classes,
    descriptor pools: ~80,000 objects) out of reach of Python's cyclic GC
    (``gc.freeze()``), so its full collections scan only what requests create —
    they were the p99 tail under load (REST streaming at concurrency 64: p99
    100 → 35 ms).
    ``tls`` (:class:`~a2a_grpc.bindings.tls.ServerTLS`): TLS, and optionally mTLS,
    on both ports; the card then advertises ``https://`` URLs (and the
    mTLS-only gRPC port as a second GRPC interface); a verified client
    certificate becomes ``CallContext.peer_identity`` (docs/tls.md).
    ``card_signer`` (:class:`~a2a_grpc.protocol.cardsign.CardSigner`): signs the
    public and the extended card once their URLs are known (spec §8.4); the
    signed card's URLs come from this configuration only, never from a
    request's ``Host`` header.
    ``auth`` (an :class:`~a2a_grpc.auth.AuthPolicy`, e.g. from
    :func:`~a2a_grpc.auth.load_policy`): every call of every binding must meet
    it, tasks belong to the authenticated caller, and the card declares its
    schemes (docs/auth.md). None: every caller is anonymous, as before.
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
    tls: ServerTLS | None = None
    card_signer: CardSigner | None = None
    metrics: bool = False
    metrics_port: int | None = None
    tracing: bool = False
    tracer_provider: Any = None
    request_ids: bool = False
    access_log: bool = False
    retain_terminal_seconds: float | None = None
    health_check_seconds: float | None = 5.0
    auth: AuthPolicy | None = None
    recover_lost_tasks: bool = True
    cluster: ClusterConfig | None = None
    #: Connection caps and timeouts of both ports (issue 10; a2a_grpc.bindings._connlimits).
    connections: ConnectionLimits = field(default_factory=ConnectionLimits)
    #: The audit log (issue 11; a2a_grpc.auth._audit.open_audit_log, ``--audit-log``); None: none.
    audit: AuditLog | None = None
    #: Bind both ports with SO_REUSEPORT, so several processes share them
    #: (``a2a-grpc serve --workers N``; a2a_grpc.cluster._workers).
    reuse_port: bool = False


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
        self.metrics = _metrics(self.config)
        self.tracing = _tracing(self.config, executor.card.name)
        auth = self.config.auth
        _check_mtls_schemes(auth, self.config.tls)
        if auth is not None and extended_card is not None:
            extended_card = _with_schemes(extended_card, auth)
        self.handler = RequestHandler(
            executor,
            self.metrics.timed(store) if self.metrics is not None else store,
            build_card(executor.card, {}, push=push is not None, extended=extended_card is not None),
            config=self.config.handler,
            extended_card=extended_card,
            push=push,
        )
        self.cluster: Cluster | None = None
        if self.config.cluster is not None:
            from a2a_grpc.cluster._leases import Cluster
            from a2a_grpc.cluster._store import ClusterStore

            if not isinstance(store, ClusterStore):
                raise ValueError(
                    "cluster mode needs the cluster store on PostgreSQL (a2a_grpc.cluster._store)"
                )
            self.cluster = Cluster.attach(self.handler, store, self.config.cluster)
        if auth is not None:
            auth.describe_card(self.handler.card)
        self.servicer = A2AServicer(self.handler, self.config.interceptors, self._telemetry(), auth)
        self.servicer.peer_identities = self.config.tls is not None and self.config.tls.client_ca is not None
        self.grpc_port = 0
        #: The bound mTLS-only gRPC port (``ServerTLS.mtls_grpc_port``), else None.
        self.mtls_grpc_port: int | None = None
        self.http_port: int | None = None
        self.metrics_port: int | None = None
        self._metrics_runner: Any = None
        self.retention: Any = None
        self.store_health: Any = None
        self.health_gate: Any = None  # HealthGate once started (store and bus listener)
        self._grpc: grpc.aio.Server | None = None
        self._health: HealthServicer | None = None
        self._site: Any = None
        self._runner: Any = None
        self._stopped = asyncio.Event()

    def _telemetry(self) -> list[CallInterceptor]:
        """Connects tracing and metrics to the handler and push hooks; their
        interceptors for the chain's telemetry slot (the span first)."""
        from a2a_grpc.telemetry import Observers, attach

        cfg = self.config
        steps: list[CallInterceptor] = [self.tracing.interceptor] if self.tracing is not None else []
        if cfg.request_ids or cfg.access_log:  # after the span: access lines carry its trace id
            from a2a_grpc.telemetry._logs import RequestLog

            steps.append(RequestLog(access=cfg.access_log))
        if cfg.audit is not None:  # ahead of authentication: it records the calls that fail it
            steps.append(cfg.audit)
        observers = [o for o in (self.tracing, self.metrics, cfg.audit) if o is not None]
        if observers:
            attach(observers[0] if len(observers) == 1 else Observers(*observers), self.handler, self.push)
        if self.metrics is not None:
            self.metrics.watch(self.handler, self.push)
            steps.append(self.metrics.interceptor)
        return steps

    @property
    def card(self) -> pb.AgentCard:
        """The public Agent Card as served (interfaces filled after start)."""
        return self.handler.card

    def _urls(self) -> dict[str, str]:
        cfg = self.config
        host = cfg.host if cfg.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        urls = {"GRPC": cfg.public_grpc or f"{host}:{self.grpc_port}"}
        if self.http_port is not None:
            scheme = "https" if cfg.tls is not None else "http"
            base = (cfg.public_url or f"{scheme}://{host}:{self.http_port}").rstrip("/")
            urls["JSONRPC"] = base + "/"
            urls["HTTP+JSON"] = base
        return urls

    async def start(self) -> None:
        """Opens the store, binds both servers and starts serving; raises
        OSError when a port cannot be bound, ValueError when the TLS
        configuration is unusable (see ``ServerTLS.check``)."""
        cfg = self.config
        if cfg.tls is not None:
            cfg.tls.check()
        await self.store.open()
        start = getattr(self.push, "start", None)
        if start is not None:
            await start()
        await self._recover()
        if cfg.retain_terminal_seconds is not None:
            from a2a_grpc.store._retention import RetentionWorker

            self.retention = RetentionWorker(self.store, cfg.retain_terminal_seconds)
            await self.retention.start()
        server = self._grpc_server()
        self.grpc_port = self._add_grpc_ports(server)
        self._grpc = server
        if cfg.http_port is not None:
            await self._start_http(cfg.http_port)
        if self.metrics is not None and cfg.metrics_port is not None:
            await self._start_metrics(cfg.metrics_port)
        if cfg.auth is not None:
            await cfg.auth.start()
        self.handler.card = self._served_card()
        await server.start()
        assert self._health is not None
        for service in (SERVICE_NAME, V03_SERVICE.full_name, ""):
            await self._health.set(service, health_pb2.HealthCheckResponse.SERVING)
        await self._watch_health()
        if cfg.freeze_gc:
            gc.collect()
            gc.freeze()
        log.info("serving %s: gRPC %s, HTTP %s", self.card.name, self.grpc_port, self.http_port)
        log.info("%s", auth_line(cfg.auth))
        if cfg.tls is not None or cfg.card_signer is not None:
            from a2a_grpc.bindings.tls import describe

            ports = [self.grpc_port] + ([self.mtls_grpc_port] if self.mtls_grpc_port else [])
            signed = (
                f"; card signed ({cfg.card_signer.alg}, kid {cfg.card_signer.kid})" if cfg.card_signer else ""
            )
            log.info("%s%s", describe(cfg.tls, ports), signed)

    def _add_grpc_ports(self, server: grpc.aio.Server) -> int:
        """Binds the gRPC port — TLS when configured — and the optional
        mTLS-only second port; returns the first port. Raises OSError (one
        line naming the port) when either cannot be bound."""
        cfg = self.config
        if cfg.tls is None:
            return _bind_grpc(server, cfg.host, cfg.grpc_port, reuse_port=cfg.reuse_port)
        port = _bind_grpc(
            server, cfg.host, cfg.grpc_port, cfg.tls.grpc_credentials(), reuse_port=cfg.reuse_port
        )
        if cfg.tls.mtls_grpc_port is not None:
            second = f"{_bracket(cfg.host)}:{cfg.tls.mtls_grpc_port}"
            self.mtls_grpc_port = server.add_secure_port(
                second, cfg.tls.grpc_credentials(require_client_cert=True)
            )
            if not self.mtls_grpc_port:
                raise OSError(f"cannot listen for gRPC (mTLS) on {second}")
        return port

    def _served_card(self) -> pb.AgentCard:
        """The public card with this server's interfaces (the mTLS-only gRPC
        port after the others), signed when a card signer is configured; the
        extended card is signed too."""
        cfg = self.config
        card = build_card(
            self.executor.card,
            self._urls(),
            order=cfg.interface_order,
            push=self.push is not None,
            extended=self.handler.extended_card is not None,
        )
        if self.mtls_grpc_port:
            host = self._urls()["GRPC"].rsplit(":", 1)[0]
            card.supported_interfaces.append(
                pb.AgentInterface(
                    url=f"{host}:{self.mtls_grpc_port}",
                    protocol_binding="GRPC",
                    protocol_version=PROTOCOL_VERSION,
                )
            )
        if cfg.auth is not None:
            cfg.auth.describe_card(card)  # before signing: the schemes are part of the signed card
        if cfg.card_signer is not None:
            card = cfg.card_signer.sign(card)
            if self.handler.extended_card is not None:
                self.handler.extended_card = cfg.card_signer.sign(self.handler.extended_card)
        return card

    async def _watch_health(self) -> None:
        """Health follows the store (pinged every ``health_check_seconds``)
        and, in cluster mode, the event bus listener: NOT_SERVING while
        either is down (:class:`~a2a_grpc.store._health.HealthGate`)."""
        from a2a_grpc.store._health import HealthGate

        self.health_gate = gate = HealthGate(self._serving)
        if self.config.health_check_seconds:
            from a2a_grpc.store._health import StoreHealth

            self.store_health = StoreHealth(
                self.store, gate.reporter("store"), interval_seconds=self.config.health_check_seconds
            )
            self.store_health.start()
        relay = self.cluster.relay if self.cluster is not None else None
        if relay is not None:
            relay.on_health = gate.reporter("bus")
            if not relay.connected.is_set():  # lost since the cluster started
                await relay.on_health(False)

    async def _serving(self, serving: bool) -> None:
        """Sets the health of the A2A services (v1.0, v0.3) and of the server ("")."""
        assert self._health is not None
        status = (
            health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for service in (SERVICE_NAME, V03_SERVICE.full_name, ""):
            await self._health.set(service, status)

    async def _recover(self) -> None:
        """Crash recovery before serving: the cluster reaps expired leases and
        starts its heartbeat; a single process fails the tasks an earlier
        process left active (stores that can list them: the SQL store)."""
        if self.cluster is not None:
            await self.cluster.start()
        elif self.config.recover_lost_tasks:
            from a2a_grpc.cluster._recovery import ActiveTaskScan, recover_on_start

            if isinstance(self.store, ActiveTaskScan):
                await recover_on_start(self.store, self.handler.writer)

    def _grpc_server(self) -> grpc.aio.Server:
        """The grpc.aio server with the A2A service, health and reflection."""
        limit = self.config.max_message_bytes
        server = grpc.aio.server(
            options=[
                # gRPC itself refuses only far larger messages, so that an
                # oversize request reaches validation and gets PAYLOAD_TOO_LARGE
                # (RESOURCE_EXHAUSTED with ErrorInfo and the limit) instead of
                # grpc-core's bare RESOURCE_EXHAUSTED.
                ("grpc.max_receive_message_length", limit * 2 + 1024 * 1024),
                ("grpc.max_send_message_length", limit * 2 + 1024 * 1024),
                ("grpc.so_reuseport", 1 if self.config.reuse_port else 0),
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
        _add_v03_servicer(self.servicer, server)
        self._health = HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        services = (
            SERVICE_NAME,
            V03_SERVICE.full_name,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        )
        enable_reflection(services, server)
        return server

    async def _start_http(self, port: int) -> None:
        """Serves the gateway (JSON-RPC, HTTP+JSON, the Agent Card) on ``port``."""
        from aiohttp import web

        from a2a_grpc.bindings._http.app import create_app
        from a2a_grpc.bindings._http.connections import ClientErrorLogger, GuardedSite

        cfg = self.config
        app = create_app(
            self.servicer,
            lambda: self.handler.card,
            keepalive_seconds=cfg.keepalive_seconds,
            card_max_age_seconds=cfg.card_max_age_seconds,
            # JSON carries bytes as base64: allow for its 4/3 growth.
            max_body_bytes=cfg.max_message_bytes * 4 // 3 + 1024 * 1024,
            max_message_bytes=cfg.max_message_bytes,
            metrics=self.metrics.handle if self.metrics is not None and cfg.metrics_port is None else None,
        )
        limits = cfg.connections
        handler_args: dict[str, Any] = {
            "access_log": None,
            "logger": ClientErrorLogger(),
            "keepalive_timeout": limits.idle_timeout_seconds,
        }
        runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=cfg.grace_seconds, **handler_args)
        await runner.setup()
        ssl_context = cfg.tls.ssl_context() if cfg.tls is not None else None
        site = GuardedSite(
            runner, cfg.host, port, limits, handler_args, ssl_context=ssl_context, reuse_port=cfg.reuse_port
        )
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner
        self._site = site
        self.http_port = site.port

    async def _start_metrics(self, port: int) -> None:
        """Serves ``GET /metrics`` alone on ``port``."""
        from a2a_grpc.telemetry._metrics import metrics_app

        assert self.metrics is not None
        app = metrics_app(self.metrics)
        self._metrics_runner, self.metrics_port = await _listen(app, self.config.host, port, 1.0)

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
        if self.store_health is not None:  # health ignores it since the graceful shutdown began
            await self.store_health.stop()
        if self.cluster is not None:
            await self.cluster.stop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._metrics_runner is not None:
            await self._metrics_runner.cleanup()
            self._metrics_runner = None
        stop = getattr(self.push, "stop", None)
        if stop is not None:
            await stop()
        if self.retention is not None:
            await self.retention.stop()
        if self.config.auth is not None:
            await self.config.auth.close()
        if self.config.audit is not None:
            self.config.audit.close()
        await self.store.close()
        if self.tracing is not None:
            self.tracing.shutdown()
        self._stopped.set()

    async def wait_stopped(self) -> None:
        """Returns once :meth:`stop` has completed."""
        await self._stopped.wait()

    async def serve_forever(self, *, on_started: OnStarted | None = None) -> None:
        """Starts the server, calls ``on_started(server)`` (ports and card are
        known by then; it may be a coroutine function), serves until SIGINT
        or SIGTERM (or until the calling task is cancelled), then stops
        gracefully (:meth:`stop`)."""
        loop = asyncio.get_running_loop()
        signalled = asyncio.Event()
        handled = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread
                loop.add_signal_handler(sig, signalled.set)
                handled.append(sig)
        await self.start()
        try:
            if on_started is not None:
                started = on_started(self)
                if inspect.isawaitable(started):
                    await started
            await signalled.wait()
        finally:
            for sig in handled:
                loop.remove_signal_handler(sig)
            await self.stop()

    async def __aenter__(self) -> A2AServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


def _metrics(config: ServerConfig) -> Any:
    """The server's Metrics when ``config.metrics`` (needs the ``[metrics]``
    extra: ImportError otherwise), else None."""
    if not config.metrics:
        return None
    from a2a_grpc.telemetry._metrics import Metrics

    return Metrics()


def _tracing(config: ServerConfig, agent: str) -> Any:
    """The server's Tracing when ``config.tracing`` (needs the ``[otel]``
    extra), else None; see ServerConfig for the provider chosen."""
    if not config.tracing:
        return None
    from opentelemetry import trace

    from a2a_grpc.telemetry._tracing import Tracing, provider_from_env

    provider, owned = config.tracer_provider, False
    if provider is None:
        provider = trace.get_tracer_provider()
        if not hasattr(provider, "add_span_processor"):  # no SDK provider installed yet
            provider, owned = provider_from_env(), True
            trace.set_tracer_provider(provider)
    return Tracing(provider, agent=agent, owned=owned)


async def _listen(app: Any, host: str, port: int, shutdown_timeout: float) -> tuple[Any, int]:
    """Serves the aiohttp ``app`` on ``host:port`` (the separate metrics
    port): its runner and the bound port."""
    from aiohttp import web

    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=shutdown_timeout)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    sockets = getattr(site._server, "sockets", None) or []
    return runner, sockets[0].getsockname()[1] if sockets else port


class _Undecodable:
    """Stands in for a request whose bytes are not the RPC's message."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _tolerant(name: str, handler: Any, refuse: Callable[[Any, A2AError], Awaitable[Any]] = abort) -> Any:
    """``handler`` with a deserializer that never raises: gRPC turns an
    exception there into UNKNOWN with the exception's class in the details;
    instead the call ends with INVALID_ARGUMENT (INVALID_PARAMS) and a field
    violation, as any other bad input (spec §5.7, §10.6), in the form of
    ``refuse`` (the v1.0 rich status; the v0.3 service's plain one)."""
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
                await refuse(context, refusal(request))
            async for event in behavior(request, context):
                yield event

        return handler._replace(request_deserializer=deserialize, unary_stream=unary_stream)
    unary = handler.unary_unary

    async def unary_unary(request: Any, context: Any) -> Any:
        if isinstance(request, _Undecodable):
            await refuse(context, refusal(request))
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


def _add_servicer(
    servicer: Any,
    server: grpc.aio.Server,
    add: Callable[[Any, Any], None] = pb_grpc.add_A2AServiceServicer_to_server,
    service: Any = pb.DESCRIPTOR.services_by_name["A2AService"],
    refuse: Callable[[Any, A2AError], Awaitable[Any]] = abort,
) -> None:
    """Registers ``servicer`` like the generated ``add`` function does, with
    undecodable requests answered INVALID_ARGUMENT (see _tolerant), for the
    v1.0 service by default, for another ``service`` (the v0.3 one) when given."""
    capture = _Capture()
    add(servicer, capture)
    handlers = {
        name: _tolerant(service.methods_by_name[name].input_type.full_name, handler, refuse)
        for name, handler in capture.handlers.items()
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
    server.add_registered_method_handlers(service.full_name, handlers)


def _add_v03_servicer(servicer: A2AServicer, server: grpc.aio.Server) -> None:
    """A2A v0.3 over gRPC (``a2a.v1.A2AService``, issue 13): the adapter in
    front of the same ``servicer`` (:mod:`a2a_grpc.dialects._v03grpc`)."""
    from a2a_grpc.gen.a2a.v1 import a2a_pb2_grpc as v03_grpc

    _add_servicer(
        V03Servicer(servicer), server, v03_grpc.add_A2AServiceServicer_to_server, V03_SERVICE, abort_v03
    )


def _bind_grpc(
    server: grpc.aio.Server,
    host: str,
    port: int,
    credentials: grpc.ServerCredentials | None = None,
    *,
    reuse_port: bool = False,
) -> int:
    """Binds ``server`` to ``host``:``port`` (TLS with ``credentials``) and
    returns the bound port. Raises OSError with one line naming the port
    when it is taken (checked first, so grpc-core logs nothing) or cannot be
    bound."""
    if port:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if reuse_port:  # the port is shared (--workers): only a socket without SO_REUSEPORT conflicts
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                raise bind_error("gRPC", host, port, exc) from None
    address = f"{_bracket(host)}:{port}"
    try:
        if credentials is None:
            bound = server.add_insecure_port(address)
        else:
            bound = server.add_secure_port(address, credentials)
    except RuntimeError:
        bound = 0
    if bound == 0:
        raise OSError(f"gRPC port {port} on {host} cannot be bound")
    return bound


def _check_mtls_schemes(auth: AuthPolicy | None, tls: ServerTLS | None) -> None:
    """An mTLS security scheme can only be met when TLS verifies client
    certificates (``tls.client_ca``); raises ValueError otherwise, so that the
    card never declares a scheme no call could satisfy."""
    if auth is None:
        return
    from a2a_grpc.auth._mtls import MtlsAuthenticator

    mtls = [a.name for a in auth.authenticators.values() if isinstance(a, MtlsAuthenticator)]
    if mtls and (tls is None or tls.client_ca is None):
        raise ValueError(
            f"the mTLS scheme {', '.join(mtls)} needs TLS with client certificates "
            "(--tls-cert, --tls-key and --tls-client-ca)"
        )


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def serve(
    agent: AgentExecutor,
    store: Store | None = None,
    config: ServerConfig | None = None,
    *,
    push: PushSink | None = None,
    extended_card: pb.AgentCard | None = None,
    on_started: OnStarted | None = None,
) -> None:
    """Serves ``agent`` over gRPC, JSON-RPC and HTTP+JSON until SIGINT or
    SIGTERM: the one-call way to run an agent from Python.

    ``store`` defaults to an in-memory store (tasks are lost on exit; pass
    ``a2a_grpc.store.open_store("sqlite:///PATH")`` or a PostgreSQL URL to keep
    them); ``config`` to :class:`ServerConfig`'s defaults (127.0.0.1, gRPC
    :50051, HTTP :8080). Runs its own event loop (uvloop when installed), so
    call it from synchronous code; inside a running loop use
    ``await A2AServer(...).serve_forever()``. Raises OSError when a port is
    taken.
    """
    from a2a_grpc.store._memory import InMemoryTaskStore

    server = A2AServer(agent, store or InMemoryTaskStore(), config, push=push, extended_card=extended_card)
    run_loop(server.serve_forever(on_started=on_started))


def run_loop(main: Coroutine[Any, Any, None]) -> None:
    """Runs ``main`` in a new event loop: uvloop's when it is installed (the
    ``fast`` extra), asyncio's otherwise — never inside an ``except
    ImportError`` block, which would chain every later traceback to it."""
    run: Callable[[Coroutine[Any, Any, None]], None]
    try:
        import uvloop
    except ImportError:
        run = asyncio.run
    else:
        run = uvloop.run
    run(main)


def auth_line(auth: AuthPolicy | None) -> str:
    """The one start-up line about authentication."""
    if auth is None:
        return "authentication: none — every caller is anonymous and sees every task (see --auth)"
    return auth.summary()


def _with_schemes(card: pb.AgentCard, auth: AuthPolicy) -> pb.AgentCard:
    out = pb.AgentCard()
    out.CopyFrom(card)
    auth.describe_card(out)
    return out
