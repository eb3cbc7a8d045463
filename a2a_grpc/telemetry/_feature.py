"""Telemetry as a Feature of the server (:class:`Telemetry`).

Built by the composition root from ``ServerConfig``'s ``metrics``,
``metrics_port``, ``tracing``, ``tracer_provider``, ``request_ids`` and
``access_log``; what it adds:

* its observer: the tracing and metrics hooks, as one;
* the store, timed (``a2a_store_operation_seconds``);
* the chain's telemetry slot: the span first, then the request id and
  access log (after the span: access lines carry its trace id), then the
  RPC metrics;
* ``GET /metrics`` on the HTTP port (an HTTP mount), or, with a
  ``metrics_port``, its own listener, bound when the feature starts;
* start: the subscriber gauge reads the server's event bus; stop: the
  metrics listener closes, an OpenTelemetry provider the server made is
  flushed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from a2a_grpc.core._interceptors import CallInterceptor
from a2a_grpc.core.features import Feature, Kernel
from a2a_grpc.core.hooks import Observer, Observers

__all__ = ["Telemetry"]


class Telemetry(Feature):
    """The server's metrics, traces and request logs (see the module).

    ``metrics`` / ``tracing`` are a :class:`~a2a_grpc.telemetry._metrics.Metrics`
    and a :class:`~a2a_grpc.telemetry._tracing.Tracing` (or None);
    ``request_log`` a :class:`~a2a_grpc.telemetry._logs.RequestLog` (or
    None); ``metrics_port`` serves ``/metrics`` alone on that port of
    ``host`` (None: on the HTTP port, as a route)."""

    def __init__(
        self,
        *,
        metrics: Any = None,
        tracing: Any = None,
        request_log: CallInterceptor | None = None,
        metrics_port: int | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.metrics = metrics
        self.tracing = tracing
        self.request_log = request_log
        self.host = host
        self._metrics_port = metrics_port
        #: The bound metrics port once started (with ``metrics_port``), else None.
        self.metrics_port: int | None = None
        self._runner: Any = None
        hooks: list[Observer] = [o for o in (tracing, metrics) if o is not None]
        self.observer = hooks[0] if len(hooks) == 1 else Observers(*hooks) if hooks else None

    def wrap_store(self, store: Any) -> Any:
        return self.metrics.timed(store) if self.metrics is not None else store

    def interceptors(self, kernel: Kernel) -> Mapping[str, Sequence[CallInterceptor]]:
        steps = [
            self.tracing.interceptor if self.tracing is not None else None,
            self.request_log,
            self.metrics.interceptor if self.metrics is not None else None,
        ]
        return {"telemetry": [s for s in steps if s is not None]}

    def http_mounts(self) -> Sequence[Callable[[Any], None]]:
        if self.metrics is None or self._metrics_port is not None:
            return ()
        from a2a_grpc.telemetry._metrics import METRICS_PATH

        handle = self.metrics.handle
        return (lambda gateway: gateway.add_route("GET", METRICS_PATH, handle),)

    async def start(self, kernel: Kernel) -> None:
        if self.metrics is None:
            return
        self.metrics.count_subscribers(kernel.bus.total_subscribers)
        if self._metrics_port is not None:
            from a2a_grpc.telemetry._metrics import serve_metrics

            self._runner, self.metrics_port = await serve_metrics(self.metrics, self.host, self._metrics_port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.tracing is not None:
            self.tracing.shutdown()
