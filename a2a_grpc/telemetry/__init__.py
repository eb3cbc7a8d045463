"""Telemetry: what the running server tells its operators.

The core knows only :class:`Observer`, a set of small hooks with do-nothing
defaults that the execution (:mod:`a2a_grpc.core._execution`), the drive loop's
writer (:mod:`a2a_grpc.core._drive`), the event bus (:mod:`a2a_grpc.core._events`) and
the push dispatcher (:mod:`a2a_grpc.push._dispatcher`) call at the moments an
operator cares about. Nothing here imports a telemetry library; the
implementations live beside it and are imported only when switched on:

* :mod:`a2a_grpc.telemetry._metrics` — Prometheus metrics (extra ``[metrics]``):
  a call interceptor in the chain's telemetry slot plus an Observer;
* :mod:`a2a_grpc.telemetry._store` — store operation latency, a wrapper
  around any :class:`~a2a_grpc.core.ports.Store`.

See docs/operations.md for every metric.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2a_grpc.core.hooks import NO_OBSERVER, Observer, Observers

if TYPE_CHECKING:
    from a2a_grpc.core._handler import RequestHandler

__all__ = ["NO_OBSERVER", "Observer", "Observers", "attach"]


def attach(observer: Observer, handler: RequestHandler, push: object | None) -> None:
    """Connects ``observer`` to the hooks of ``handler`` (its executions, task
    writer and event bus) and of ``push`` (a PushDispatcher: anything with an
    ``observer`` attribute)."""
    handler.executions.observer = observer
    handler.writer.observer = observer
    handler.bus.observer = observer
    if push is not None and hasattr(push, "observer"):
        push.observer = observer
