"""Trace context for outgoing calls: what :class:`~a2a_grpc.client.A2AClient`
sends on every binding.

:func:`inject` adds the current trace context (W3C ``traceparent``, or what
the configured OpenTelemetry propagator writes) to a header dict. It imports
OpenTelemetry only when the program already uses it: without it there is no
current span to propagate, and nothing is added.
"""

from __future__ import annotations

import sys

__all__ = ["inject"]


def inject(headers: dict[str, str]) -> None:
    """Adds the current trace context to ``headers`` (no-op when
    OpenTelemetry is not in use)."""
    if "opentelemetry.trace" not in sys.modules:
        return
    from opentelemetry import propagate

    propagate.inject(headers)
