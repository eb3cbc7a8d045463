"""Prometheus metrics (extra ``[metrics]``: ``prometheus-client``).

:class:`Metrics` owns one ``CollectorRegistry`` (one per server, so each
replica and each server in a process exposes its own) and feeds it from:

* :class:`RpcMetrics`, the call interceptor in the chain's telemetry slot:
  every RPC on every binding, named as the gRPC ecosystem's Prometheus
  middleware names them (``grpc_server_started_total``,
  ``grpc_server_handled_total``, ``grpc_server_handling_seconds``) with the
  labels ``grpc_service``, ``grpc_method``, ``grpc_type``, ``grpc_code`` and
  ``binding`` (``grpc``, ``jsonrpc``, ``rest``): the outcome is the gRPC
  status code name on every binding (the one error table maps it to the HTTP
  status and the JSON-RPC code);
* the :class:`~a2a_grpc.core.hooks.Observer` hooks of the core: tasks created
  and state changes by state, active executions, subscribers closed for
  lagging, push attempts and outcomes;
* :class:`~a2a_grpc.telemetry._store.TimedStore`: store operation latency;
* values read when scraped: stream subscribers, outbox rows by state and the
  age of the oldest due row.

Every metric is listed in docs/operations.md. :meth:`Metrics.handle` is the
aiohttp handler of ``GET /metrics``.
"""

from __future__ import annotations

import asyncio
import logging
import platform
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, contextmanager
from functools import cache
from importlib import metadata
from typing import TYPE_CHECKING, Any

from google.protobuf import descriptor_pool
from google.protobuf.message import Message as ProtoMessage
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    disable_created_metrics,
)
from prometheus_client.exposition import generate_latest

from a2a_grpc.context import CallContext
from a2a_grpc.core._interceptors import CallInterceptor, Outcome
from a2a_grpc.core.hooks import Observer
from a2a_grpc.errors import A2AError
from a2a_grpc.telemetry._store import TimedStore
from a2a_grpc.types import state_label

if TYPE_CHECKING:
    from aiohttp import web

    from a2a_grpc.core.ports import OutboxEntry, PushOutbox

__all__ = ["METRICS_PATH", "Metrics", "RpcMetrics", "metrics_app", "serve_metrics"]

log = logging.getLogger("a2a_grpc.telemetry")

#: Where the metrics are served.
METRICS_PATH = "/metrics"
#: RPC latency buckets, seconds: unary calls take ms, streams minutes.
RPC_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
#: Store latency buckets, seconds.
STORE_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5)
#: How long a scrape waits for the outbox figures before answering without them.
_REFRESH_TIMEOUT_SECONDS = 5.0
_RPC_LABELS = ("binding", "grpc_service", "grpc_method", "grpc_type")


@cache
def _rpc(method: str) -> tuple[str, str, str]:
    """(service, method, grpc_type) of a full method name ``/pkg.Svc/Method``."""
    service, _, name = method.lstrip("/").rpartition("/")
    try:
        found = descriptor_pool.Default().FindServiceByName(service).methods_by_name[name]
    except KeyError:
        return service, name, "unary"
    return service, name, "server_stream" if found.server_streaming else "unary"


def _code(outcome: Outcome) -> str:
    if isinstance(outcome, A2AError):
        return outcome.code.grpc_code.name
    if outcome is None:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            return "CANCELLED"  # the caller went away
    return "OK"


class RpcMetrics(CallInterceptor):
    """The chain's telemetry step for metrics: counts every call when it
    starts and when it ends, times it, and keeps the open streams gauge."""

    def __init__(self, metrics: Metrics) -> None:
        self.m = metrics
        self._started: dict[int, float] = {}

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        service, method, kind = _rpc(call.method)
        labels = (call.binding, service, method, kind)
        self.m.rpc_started.labels(*labels).inc()
        if kind == "server_stream":
            self.m.streams_open.labels(call.binding, method).inc()
        self._started[id(call)] = time.perf_counter()

    async def after(self, call: CallContext, outcome: Outcome) -> None:
        elapsed = time.perf_counter() - self._started.pop(id(call), time.perf_counter())
        service, method, kind = _rpc(call.method)
        code = _code(outcome)
        self.m.rpc_handled.labels(call.binding, service, method, kind, code).inc()
        self.m.rpc_seconds.labels(call.binding, service, method, kind, code).observe(elapsed)
        if kind == "server_stream":
            self.m.streams_open.labels(call.binding, method).dec()


class Metrics(Observer):
    """The server's Prometheus metrics (see the module docstring). Build it
    once per server; it is the server's observer (with the others) and
    times the store (:meth:`timed`). ``outbox``: the store whose push outbox
    figures a scrape reads (as given, so that the scrape's own reads are not
    store latency; None: push delivery is off)."""

    def __init__(
        self, registry: CollectorRegistry | None = None, *, outbox: PushOutbox | None = None
    ) -> None:
        disable_created_metrics()  # no ``*_created`` series: they only clutter dashboards
        self.registry = registry or CollectorRegistry()
        self._outbox = outbox
        self._define_rpc()
        self._define_core()
        self._define_push()
        self.build = Info("a2a_build", "Versions this server runs.", registry=self.registry)
        self.build.info(_versions())
        self.interceptor = RpcMetrics(self)

    def _define_rpc(self) -> None:
        r = self.registry
        self.rpc_started = Counter(
            "grpc_server_started_total", "RPCs started, on every binding.", _RPC_LABELS, registry=r
        )
        self.rpc_handled = Counter(
            "grpc_server_handled_total",
            "RPCs completed, by outcome (gRPC status code name).",
            (*_RPC_LABELS, "grpc_code"),
            registry=r,
        )
        self.rpc_seconds = Histogram(
            "grpc_server_handling_seconds",
            "RPC duration until the outcome, seconds (streams: until the stream ends).",
            (*_RPC_LABELS, "grpc_code"),
            buckets=RPC_BUCKETS,
            registry=r,
        )
        self.streams_open = Gauge(
            "a2a_streams_open", "Server-streaming RPCs in progress.", ("binding", "grpc_method"), registry=r
        )

    def _define_core(self) -> None:
        r = self.registry
        self.tasks_created = Counter(
            "a2a_tasks_created", "Tasks stored, by first state.", ("state",), registry=r
        )
        self.transitions = Counter(
            "a2a_task_transitions", "Task state changes stored, by the new state.", ("state",), registry=r
        )
        self.executions_active = Gauge("a2a_executions_active", "Agent executions running.", registry=r)
        self.subscribers = Gauge(
            "a2a_stream_subscribers", "Subscribers following a task's events.", registry=r
        )
        self.lagged = Counter(
            "a2a_stream_subscribers_lagged", "Subscribers closed for falling behind.", registry=r
        )
        self.store_seconds = Histogram(
            "a2a_store_operation_seconds",
            "Store operation duration, seconds, by operation and outcome.",
            ("operation", "outcome"),
            buckets=STORE_BUCKETS,
            registry=r,
        )

    def _define_push(self) -> None:
        r = self.registry
        self.push_attempts = Counter("a2a_push_attempts", "Webhook POSTs sent.", registry=r)
        self.push_delivered = Counter("a2a_push_delivered", "Push notifications delivered.", registry=r)
        self.push_retries = Counter("a2a_push_retries", "Failed attempts scheduled again.", registry=r)
        self.push_dead = Counter(
            "a2a_push_dead_letters", "Push notifications given up (dead letters).", registry=r
        )
        self.push_dropped = Counter("a2a_push_dropped", "Notifications whose config was deleted.", registry=r)
        self.push_seconds = Histogram(
            "a2a_push_attempt_seconds", "Webhook POST duration, seconds.", buckets=RPC_BUCKETS, registry=r
        )
        self.outbox_rows = Gauge(
            "a2a_push_outbox_rows", "Outbox rows by state (read when scraped).", ("state",), registry=r
        )
        self.outbox_age = Gauge(
            "a2a_push_outbox_oldest_due_seconds",
            "How long the oldest due pending row has waited for delivery (read when scraped).",
            registry=r,
        )

    # --- wiring ---------------------------------------------------------------

    def timed(self, store: Any) -> Any:
        """``store`` with every operation timed into ``a2a_store_operation_seconds``."""
        return TimedStore(store, self._store_operation)

    def _store_operation(self, operation: str, outcome: str, seconds: float) -> None:
        self.store_seconds.labels(operation, outcome).observe(seconds)

    def count_subscribers(self, count: Callable[[], int]) -> None:
        """``a2a_stream_subscribers`` reads ``count()`` (the event bus's
        ``total_subscribers``) when scraped."""
        self.subscribers.set_function(count)

    # --- Observer ---------------------------------------------------------------

    @contextmanager
    def _execution(self) -> Any:
        self.executions_active.inc()
        try:
            yield
        finally:
            self.executions_active.dec()

    def execution(self, task_id: str, context_id: str) -> AbstractContextManager[Any]:
        return self._execution()

    def task_created(self, state: int) -> None:
        self.tasks_created.labels(state_label(state)).inc()

    def task_transition(self, state: int) -> None:
        self.transitions.labels(state_label(state)).inc()

    def subscriber_lagged(self) -> None:
        self.lagged.inc()

    def push_delivery(self, entry: OutboxEntry, headers: dict[str, str]) -> AbstractContextManager[Any]:
        self.push_attempts.inc()
        return self.push_seconds.time()

    def push_outcome(self, outcome: str) -> None:
        counter = {
            "delivered": self.push_delivered,
            "retried": self.push_retries,
            "dead": self.push_dead,
            "dropped": self.push_dropped,
        }.get(outcome)
        if counter is not None:
            counter.inc()

    # --- exposition ---------------------------------------------------------------

    async def refresh(self) -> None:
        """Reads the outbox figures from the store (pending and dead rows,
        the oldest due row's wait)."""
        outbox = self._outbox
        if outbox is None:
            return
        for state in ("pending", "dead"):
            self.outbox_rows.labels(state).set(await outbox.outbox_count(state))
        now = time.time()
        head = await outbox.outbox_due(now, 1)
        self.outbox_age.set(max(0.0, now - head[0].next_attempt_at) if head else 0.0)

    async def exposition(self) -> bytes:
        """The metrics in the Prometheus text format, outbox figures fresh
        (or as last read, when the store does not answer within 5 s)."""
        try:
            async with asyncio.timeout(_REFRESH_TIMEOUT_SECONDS):
                await self.refresh()
        except Exception:
            log.warning("metrics: reading the push outbox failed", exc_info=True)
        return generate_latest(self.registry)

    async def handle(self, request: web.Request) -> web.Response:
        """aiohttp handler of ``GET /metrics``."""
        from aiohttp import web

        body = await self.exposition()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


def metrics_app(metrics: Metrics) -> web.Application:
    """An aiohttp application serving only ``GET /metrics`` (the separate
    metrics port)."""
    from aiohttp import web

    app = web.Application()
    app.router.add_get(METRICS_PATH, metrics.handle)
    return app


async def serve_metrics(metrics: Metrics, host: str, port: int) -> tuple[web.AppRunner, int]:
    """Serves :func:`metrics_app` on ``host:port`` (0: any free port): its
    runner (``cleanup()`` stops it) and the bound port. Raises OSError."""
    from aiohttp import web

    runner = web.AppRunner(metrics_app(metrics), access_log=None, handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError:
        await runner.cleanup()
        raise
    sockets = getattr(site._server, "sockets", None) or []
    return runner, sockets[0].getsockname()[1] if sockets else port


def _versions() -> dict[str, str]:
    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "unknown"

    return {
        "version": version("a2a-grpc"),
        "python": platform.python_version(),
        "grpcio": version("grpcio"),
        "protobuf": version("protobuf"),
    }
