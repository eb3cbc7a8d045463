"""A2AServer: the gRPC server and the HTTP gateway in one process and loop.

This module is the one composition root. :func:`assemble` builds, from a
:class:`ServerConfig` and the :class:`~a2a_grpc.core.features.Feature` objects
it turns the config into, the whole object graph that runs — store, event
bus, task writer, executions, handler, interceptor chain, servicer, gRPC
services and HTTP mounts — top to bottom, each part given what it needs in
its constructor: nothing is wired afterwards by reaching into a built object.
:class:`A2AServer` starts the features in order (an ``AsyncExitStack``, so
they stop in reverse), then binds the ports: ``grpc.aio`` serves
``lf.a2a.v1.A2AService`` natively (with server reflection and
``grpc.health.v1``), and an aiohttp application serves JSON-RPC 2.0,
HTTP+JSON and the Agent Card by calling the *same* servicer object in
process. Shutdown is graceful: health turns NOT_SERVING, new calls are
refused, in-flight calls get ``grace_seconds`` to finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import inspect
import logging
import signal
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2a_grpc.bindings._connlimits import ConnectionLimits, bind_error, grpc_options
from a2a_grpc.bindings._health import HealthServicer
from a2a_grpc.bindings._reflection import enable_reflection
from a2a_grpc.bindings._servicer import SERVICE, A2AServicer, abort, builtin_interceptors
from a2a_grpc.core._card import BINDINGS, PROTOCOL_VERSION, ServedCard, capabilities, decorate, interfaces
from a2a_grpc.core._drive import Driver, TaskWriter
from a2a_grpc.core._events import EventBus
from a2a_grpc.core._execution import Executions
from a2a_grpc.core._executor import AgentExecutor
from a2a_grpc.core._handler import HandlerConfig, PushSink, RequestHandler, push_wake
from a2a_grpc.core._interceptors import CallInterceptor, InterceptorChain
from a2a_grpc.core.features import SLOTS, Feature, GrpcService, Kernel
from a2a_grpc.core.hooks import NO_OBSERVER, Observer, Observers
from a2a_grpc.core.ports import Store
from a2a_grpc.errors import A2AError, FieldViolation
from a2a_grpc.store._health import HealthGate
from a2a_grpc.types import pb, pb_grpc

if TYPE_CHECKING:
    from a2a_grpc.auth._audit import AuditLog
    from a2a_grpc.auth._policy import AuthPolicy
    from a2a_grpc.bindings.tls import ServerTLS
    from a2a_grpc.cluster._leases import ClusterConfig
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
    built-in ones (version, extensions, validation, capability gate) and the
    authorization slot, in list order, just before the operation; their
    ``after`` in reverse order (see :mod:`a2a_grpc.core._interceptors` and
    docs/interceptors.md). ``features``: the embedder's own
    :class:`~a2a_grpc.core.features.Feature` objects, read after the
    built-in ones (their interceptors after the built-in features' in each
    slot; started after them, stopped before them).
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
    features: Sequence[Feature] = ()


@dataclass(frozen=True, slots=True)
class Assembly:
    """What :func:`assemble` built: the ``features`` in start order, the
    ``kernel`` (handler, bus, writer, executions, observer, ...), the public
    card as served (``cards``), the ``servicer`` with its chain, the gRPC
    ``services`` (``lf.a2a.v1.A2AService`` first) and the gateway's ``mounts``."""

    features: tuple[Feature, ...]
    kernel: Kernel
    cards: ServedCard
    servicer: A2AServicer
    services: tuple[GrpcService, ...]
    mounts: tuple[Callable[[Any], None], ...]


def assemble(
    executor: AgentExecutor,
    store: Store,
    config: ServerConfig,
    *,
    push: PushSink | None = None,
    extended_card: pb.AgentCard | None = None,
    health: HealthGate | None = None,
) -> Assembly:
    """The object graph a server of ``executor`` on ``store`` runs, from
    ``config`` and its features (:func:`features`), built top to bottom.
    ``health`` hears of the parts health depends on (the store, the
    cluster's bus). Raises ValueError for a configuration that cannot be
    served (the features' own, e.g. a cluster without the cluster store,
    an unknown interceptor slot), AuthConfigError for auth settings the
    agent cannot meet."""
    parts = features(executor, store, config, push=push, health=health)
    observer = _one_observer(f.observer for f in parts)
    handler_config = dataclasses.replace(config.handler, max_request_bytes=config.max_message_bytes)
    decorators = [d for f in parts for d in f.card_decorators()]
    signed = [config.card_signer.sign] if config.card_signer is not None else []
    declared = capabilities(push=push is not None, extended=extended_card is not None)
    cards = ServedCard(executor.card, [declared, *decorators], last=signed)
    extended = decorate(extended_card, [*decorators, *signed]) if extended_card is not None else None
    served_store = store
    for f in parts:
        served_store = f.wrap_store(served_store)
    buffers = {
        "buffer": handler_config.subscriber_buffer,
        "buffer_bytes": handler_config.subscriber_buffer_bytes,
    }
    bus = _first(f.new_event_bus(**buffers, observer=observer) for f in parts)
    if bus is None:
        bus = EventBus(**buffers, observer=observer)
    wake = push_wake(cards.base, push)
    writer = TaskWriter(
        served_store, served_store, bus, wake, max_task_bytes=handler_config.max_task_bytes, observer=observer
    )
    drive = Driver(executor, writer).drive
    limits = [f.execution_time_limit for f in parts if f.execution_time_limit is not None]
    limit = min(limits) if limits else None
    executions = _first(f.new_executions(drive, writer, observer=observer, time_limit=limit) for f in parts)
    if executions is None:
        executions = Executions(drive, bus, observer=observer, time_limit=limit)
    handler = RequestHandler(
        executor,
        served_store,
        cards.base,
        config=handler_config,
        extended_card=extended,
        push=push,
        bus=bus,
        writer=writer,
        executions=executions,
    )
    bodies = {dialect: body for f in parts for dialect, body in f.push_bodies().items()}
    kernel = Kernel(executor, store, handler, bus, writer, executions, observer, cards, bodies)
    chain = InterceptorChain(_chain(parts, kernel, config.interceptors))
    mtls = config.tls is not None and config.tls.client_ca is not None
    servicer = A2AServicer(handler, chain=chain, peer_identities=mtls)
    services = [
        GrpcService(servicer, pb_grpc.add_A2AServiceServicer_to_server, SERVICE, abort),
        *(s for f in parts for s in f.grpc_services(servicer, cards)),
    ]
    mounts = tuple(m for f in parts for m in f.http_mounts())
    return Assembly(tuple(parts), kernel, cards, servicer, tuple(services), mounts)


def features(
    executor: AgentExecutor,
    store: Store,
    config: ServerConfig,
    *,
    push: PushSink | None = None,
    health: HealthGate | None = None,
) -> list[Feature]:
    """The features ``config`` turns on, in start order: the store (opened
    first, closed last), telemetry, auth and the audit log, push delivery,
    cluster mode (or the single-process start-up recovery), retention, the
    store's health, the legacy dialects, then ``config.features``."""
    parts: list[Feature] = [_Part(store, start=store.open, stop=store.close)]
    telemetry = _telemetry(config, executor.card.name, store, push=push is not None)
    if telemetry is not None:
        parts.append(telemetry)
    if config.auth is not None or config.audit is not None:
        from a2a_grpc.auth._feature import Auth

        parts.append(Auth(config.auth, config.audit))
    if push is not None:
        from a2a_grpc.push._feature import Push

        parts.append(Push(push))
    parts.extend(_replicas(executor, store, config, health))
    if config.retain_terminal_seconds is not None:
        from a2a_grpc.store._retention import RetentionWorker

        worker = RetentionWorker(store, config.retain_terminal_seconds)
        parts.append(_Part(worker, start=worker.start, stop=worker.stop))
    if config.health_check_seconds:
        from a2a_grpc.store._health import StoreHealth

        report = health.reporter("store") if health is not None else _ignore
        watch = StoreHealth(store, report, interval_seconds=config.health_check_seconds)
        parts.append(_Part(watch, start=watch.start, stop=watch.stop))
    from a2a_grpc.dialects._feature import Dialects

    parts.append(Dialects())
    parts.extend(config.features)
    return parts


def _replicas(
    executor: AgentExecutor, store: Store, config: ServerConfig, health: HealthGate | None
) -> list[Feature]:
    """Cluster mode (the store must be the cluster store: ValueError
    otherwise), else the single-process recovery of lost tasks, or nothing."""
    if config.cluster is not None:
        from a2a_grpc.cluster._leases import Cluster
        from a2a_grpc.cluster._store import ClusterStore

        if not isinstance(store, ClusterStore):
            raise ValueError("cluster mode needs the cluster store on PostgreSQL (a2a_grpc.cluster._store)")
        resumable = bool(getattr(executor, "resumable", False))
        bus_health = health.reporter("bus") if health is not None else None
        return [Cluster(store, config.cluster, resumable=resumable, on_bus_health=bus_health)]
    if config.recover_lost_tasks:
        from a2a_grpc.cluster._recovery import Recovery

        return [Recovery()]
    return []


def _telemetry(config: ServerConfig, agent: str, store: Store, *, push: bool) -> Feature | None:
    """The telemetry feature of ``config`` (metrics need the ``[metrics]``
    extra, tracing ``[otel]``: ImportError otherwise), None when it asks for
    none. The metrics read the push outbox of ``store`` while ``push`` is on."""
    if not (config.metrics or config.tracing or config.request_ids or config.access_log):
        return None
    from a2a_grpc.telemetry._feature import Telemetry

    metrics = request_log = None
    if config.metrics:
        from a2a_grpc.telemetry._metrics import Metrics

        metrics = Metrics(outbox=store if push else None)
    if config.request_ids or config.access_log:
        from a2a_grpc.telemetry._logs import RequestLog

        request_log = RequestLog(access=config.access_log)
    return Telemetry(
        metrics=metrics,
        tracing=_tracing(config, agent),
        request_log=request_log,
        metrics_port=config.metrics_port,
        host=config.host,
    )


def _chain(parts: Sequence[Feature], kernel: Kernel, own: Sequence[CallInterceptor]) -> list[CallInterceptor]:
    """The chain's steps: the features' slots (:data:`~a2a_grpc.core.features.SLOTS`)
    around the built-in steps, then the server's own. Raises ValueError for
    an unknown slot."""
    slots: dict[str, list[CallInterceptor]] = {slot: [] for slot in SLOTS}
    for f in parts:
        for slot, steps in f.interceptors(kernel).items():
            if slot not in slots:
                raise ValueError(f"unknown interceptor slot {slot!r}; the slots are {', '.join(SLOTS)}")
            slots[slot].extend(steps)
    telemetry, audit, authentication, limits, authorization = (slots[slot] for slot in SLOTS)
    builtin = builtin_interceptors(kernel.handler)
    return [*telemetry, *audit, *authentication, *limits, *builtin, *authorization, *own]


def _one_observer(observers: Iterable[Observer | None]) -> Observer:
    """The observers as one (NO_OBSERVER for none: the kernel skips its hooks then)."""
    flat: list[Observer] = []
    for observer in observers:
        if isinstance(observer, Observers):
            flat.extend(observer.observers)
        elif observer is not None:
            flat.append(observer)
    if not flat:
        return NO_OBSERVER
    return flat[0] if len(flat) == 1 else Observers(*flat)


def _first(made: Iterable[Any]) -> Any:
    """The first of ``made`` that is not None (made lazily: the later ones are not)."""
    return next((m for m in made if m is not None), None)


async def _ignore(_: bool) -> None:
    pass


class _Part(Feature):
    """A part of the server that only starts and stops with it (the store,
    retention, the store's health): ``start``/``stop`` called (awaited when
    they return an awaitable)."""

    def __init__(self, part: Any, *, start: Callable[[], Any], stop: Callable[[], Any]) -> None:
        self.part = part
        self._start = start
        self._stop = stop

    async def start(self, kernel: Kernel) -> None:
        started = self._start()
        if inspect.isawaitable(started):
            await started

    async def stop(self) -> None:
        stopped = self._stop()
        if inspect.isawaitable(stopped):
            await stopped


def _part(parts: Iterable[Feature], kind: type) -> Any:
    """The first feature (or started part) of type ``kind`` among ``parts``, or None."""
    for f in parts:
        for candidate in (f, f.part if isinstance(f, _Part) else None):
            if isinstance(candidate, kind):
                return candidate
    return None


def _parts(parts: Sequence[Feature], config: ServerConfig) -> tuple[Any, Any, Any, Any]:
    """The telemetry feature, the cluster, the retention worker and the
    store's health watch among ``parts`` (each None when ``config`` has it
    off; their modules are imported only when on)."""
    from a2a_grpc.telemetry._feature import Telemetry

    found: list[Any] = [_part(parts, Telemetry), None, None, None]
    if config.cluster is not None:
        from a2a_grpc.cluster._leases import Cluster

        found[1] = _part(parts, Cluster)
    if config.retain_terminal_seconds is not None:
        from a2a_grpc.store._retention import RetentionWorker

        found[2] = _part(parts, RetentionWorker)
    if config.health_check_seconds:
        from a2a_grpc.store._health import StoreHealth

        found[3] = _part(parts, StoreHealth)
    return found[0], found[1], found[2], found[3]


class A2AServer:
    """Serves one agent over gRPC, JSON-RPC and HTTP+JSON.

    ``push`` (a PushSink, e.g. ``a2a_grpc.push.PushDispatcher``) turns push
    notifications on and declares them in the card; it is started and stopped
    with the server (a dispatcher with the server's observer and the
    dialects' push bodies; another sink when it has ``start``/``stop``
    coroutines). The object graph is :func:`assemble`'s; ``handler``,
    ``servicer``, ``metrics``, ``tracing``, ``cluster``, ``retention`` and
    ``store_health`` are parts of it (None when not configured). Raises
    ValueError for a configuration that cannot be served.
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
        self.config = cfg = config or ServerConfig()
        self.executor = executor
        self.store = store
        self.push = push
        _check_mtls_schemes(cfg.auth, cfg.tls)
        #: Health: NOT_SERVING while the store or (cluster mode) the bus listener is down.
        self.health_gate = HealthGate(self._serving)
        built = assemble(
            executor, store, cfg, push=push, extended_card=extended_card, health=self.health_gate
        )
        self._features, self.kernel, self.cards = built.features, built.kernel, built.cards
        self.handler, self.servicer = built.kernel.handler, built.servicer
        self._services, self._mounts = built.services, built.mounts
        self._telemetry, self.cluster, self.retention, self.store_health = _parts(built.features, cfg)
        self.metrics: Any = self._telemetry.metrics if self._telemetry is not None else None
        self.tracing: Any = self._telemetry.tracing if self._telemetry is not None else None
        self.grpc_port = 0
        #: The bound mTLS-only gRPC port (``ServerTLS.mtls_grpc_port``), else None.
        self.mtls_grpc_port: int | None = None
        self.http_port: int | None = None
        self._grpc: grpc.aio.Server | None = None
        self._health: HealthServicer | None = None
        self._site: Any = None
        self._runner: Any = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._stopped = asyncio.Event()

    @property
    def card(self) -> pb.AgentCard:
        """The public Agent Card as served (interfaces filled after start)."""
        return self.cards()

    @property
    def metrics_port(self) -> int | None:
        """The bound separate metrics port (``metrics_port``) once started, else None."""
        return self._telemetry.metrics_port if self._telemetry is not None else None

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
        """Starts the features in order (the store opens first), then binds
        both servers and starts serving; what started is stopped again when
        a later step fails. Raises OSError when a port cannot be bound,
        ValueError when the TLS configuration is unusable (see
        ``ServerTLS.check``)."""
        cfg = self.config
        if cfg.tls is not None:
            cfg.tls.check()
        async with contextlib.AsyncExitStack() as stack:
            for feature in self._features:
                await feature.start(self.kernel)
                stack.push_async_callback(feature.stop)
            await self._open_ports(stack)
            self._stack = stack.pop_all()
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

    async def _open_ports(self, stack: contextlib.AsyncExitStack) -> None:
        """Binds gRPC and HTTP, publishes the card with their URLs, starts
        gRPC and sets health from what the features reported so far."""
        cfg = self.config
        server = self._grpc_server()
        self._grpc = server
        stack.push_async_callback(self._drop_grpc)
        self.grpc_port = self._add_grpc_ports(server)
        if cfg.http_port is not None:
            await self._start_http(cfg.http_port)
            stack.push_async_callback(self._stop_http)
        self.cards.publish(interfaces(self._urls(), cfg.interface_order, self._mtls_interfaces()))
        await server.start()
        await self._serving(self.health_gate.serving)

    def _mtls_interfaces(self) -> list[pb.AgentInterface]:
        """The mTLS-only gRPC port as a second GRPC interface (after the others), if any."""
        if not self.mtls_grpc_port:
            return []
        host = self._urls()["GRPC"].rsplit(":", 1)[0]
        url = f"{host}:{self.mtls_grpc_port}"
        return [pb.AgentInterface(url=url, protocol_binding="GRPC", protocol_version=PROTOCOL_VERSION)]

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

    def _health_services(self) -> list[str]:
        """The services health reports: every A2A service, then the server ("")."""
        return [s.name for s in self._services] + [""]

    async def _serving(self, serving: bool) -> None:
        """Sets the health of the A2A services (v1.0, v0.3) and of the server
        (""); before the gRPC server exists, start sets it."""
        if self._health is None:
            return
        status = (
            health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for service in self._health_services():
            await self._health.set(service, status)

    def _grpc_server(self) -> grpc.aio.Server:
        """The grpc.aio server with the A2A services, health and reflection."""
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
        for service in self._services:
            _add_servicer(service, server)
        self._health = HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        health = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
        enable_reflection((*(s.name for s in self._services), health), server)
        return server

    async def _drop_grpc(self) -> None:
        """Stops the gRPC server at once, unless :meth:`stop` already did."""
        server, self._grpc = self._grpc, None
        if server is not None:
            await server.stop(None)

    async def _start_http(self, port: int) -> None:
        """Serves the gateway (JSON-RPC, HTTP+JSON, the Agent Card, the
        features' mounts) on ``port``."""
        from aiohttp import web

        from a2a_grpc.bindings._http.app import create_app
        from a2a_grpc.bindings._http.connections import ClientErrorLogger, GuardedSite

        cfg = self.config
        app = create_app(
            self.servicer,
            self.cards,
            keepalive_seconds=cfg.keepalive_seconds,
            card_max_age_seconds=cfg.card_max_age_seconds,
            # JSON carries bytes as base64: allow for its 4/3 growth.
            max_body_bytes=cfg.max_message_bytes * 4 // 3 + 1024 * 1024,
            max_message_bytes=cfg.max_message_bytes,
            mounts=self._mounts,
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

    async def _stop_http(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def stop(self, grace_seconds: float | None = None) -> None:
        """Graceful shutdown: NOT_SERVING, drain for ``grace_seconds``, then
        the ports close and the features stop in reverse order (the store
        closes last)."""
        grace = self.config.grace_seconds if grace_seconds is None else grace_seconds
        if self._health is not None:
            await self._health.enter_graceful_shutdown()
        server, self._grpc = self._grpc, None
        stops = [server.stop(grace)] if server is not None else []
        # Executions still running are stopped a little before gRPC cancels
        # the calls at the end of the grace period, so their streams end
        # with the task's final (FAILED) status instead of UNAVAILABLE.
        stops.append(self.handler.close(max(0.0, grace - min(1.0, grace / 4))))
        await asyncio.gather(*stops, return_exceptions=True)
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()
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


def _add_servicer(service: GrpcService, server: grpc.aio.Server) -> None:
    """Registers ``service`` like its generated ``add`` function does, with
    undecodable requests answered INVALID_ARGUMENT in the service's own form
    (see _tolerant)."""
    capture = _Capture()
    service.add(service.servicer, capture)
    methods = service.descriptor.methods_by_name
    handlers = {
        name: _tolerant(methods[name].input_type.full_name, handler, service.refuse)
        for name, handler in capture.handlers.items()
    }
    full_name = service.name
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(full_name, handlers),))
    server.add_registered_method_handlers(full_name, handlers)


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
