"""Telemetry: what the running server tells its operators.

The core knows only :class:`~a2a_grpc.core.hooks.Observer`, a set of small
hooks with do-nothing defaults that the execution
(:mod:`a2a_grpc.core._execution`), the drive loop's writer
(:mod:`a2a_grpc.core._drive`), the event bus (:mod:`a2a_grpc.core._events`)
and the push dispatcher (:mod:`a2a_grpc.push._dispatcher`) call at the
moments an operator cares about. Nothing here imports a telemetry library;
the implementations live beside it and are imported only when switched on:

* :mod:`a2a_grpc.telemetry._metrics` — Prometheus metrics (extra ``[metrics]``):
  a call interceptor in the chain's telemetry slot plus an Observer;
* :mod:`a2a_grpc.telemetry._tracing` — OpenTelemetry spans (extra ``[otel]``);
* :mod:`a2a_grpc.telemetry._logs` — request ids and the access log;
* :mod:`a2a_grpc.telemetry._store` — store operation latency, a wrapper
  around any :class:`~a2a_grpc.core.ports.Store`.

The server runs them as one :class:`~a2a_grpc.core.features.Feature`
(:class:`a2a_grpc.telemetry._feature.Telemetry`), built from its
``ServerConfig``. See docs/operations.md for every metric.
"""

__all__: list[str] = []
