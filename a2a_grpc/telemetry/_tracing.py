"""OpenTelemetry traces (extra ``[otel]``).

:class:`Tracing` makes, for a server:

* **one server span per call**, on every binding, by :class:`TraceCalls` in
  the chain's telemetry slot. The span is named ``{rpc.service}/{rpc.method}``
  (``lf.a2a.v1.A2AService/SendMessage``) and carries the same attributes
  whatever binding carried the call (see :data:`ATTRIBUTES`); the parent is
  read with the configured propagator (W3C ``traceparent``/``tracestate`` by
  default) from the gRPC metadata or the HTTP headers, which the servicer
  sees as the same ``CallContext.metadata``. No message content is recorded.
* **a child span per agent execution** (``a2a.execute``), current while the
  agent runs, so an agent's own spans and the calls its ``A2AClient`` makes
  (which propagate the context on every binding) nest under it; each state
  change the execution stores is an event on it.
* **a span per webhook POST** (``a2a.push.deliver``), whose parent is the trace
  context stored with the outbox row when the update was written, and whose
  own ``traceparent`` is sent to the webhook.

:func:`provider_from_env` builds the SDK tracer provider from the standard
``OTEL_*`` variables (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_TRACES_EXPORTER``, ``OTEL_EXPORTER_OTLP_ENDPOINT`` …,
``OTEL_TRACES_SAMPLER`` and its argument, ``OTEL_BSP_*``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from google.protobuf.message import Message as ProtoMessage
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.propagators.textmap import Getter
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from a2a_grpc.context import CallContext
from a2a_grpc.core._interceptors import CallInterceptor, Outcome
from a2a_grpc.core.hooks import Observer
from a2a_grpc.core.ports import OutboxEntry
from a2a_grpc.errors import A2AError
from a2a_grpc.types import pb, state_label

__all__ = ["ATTRIBUTES", "TraceCalls", "Tracing", "provider_from_env"]

TRACER_NAME = "a2a_grpc"
#: The attributes of a server span (the same keys on every binding).
ATTRIBUTES = (
    "rpc.system",  # "grpc": the A2A service's methods, whatever binding carried them
    "rpc.service",  # lf.a2a.v1.A2AService
    "rpc.method",  # SendMessage
    "rpc.grpc.status_code",  # the outcome as a gRPC status code number, on every binding
    "a2a.binding",  # grpc, jsonrpc or rest
    "a2a.task_id",  # when the request or the response names a task
    "a2a.context_id",  # likewise
    "a2a.tenant",  # when not ""
    "a2a.error.reason",  # the ErrorInfo reason of a failed call
)
# gRPC codes that mark a server span as failed (OpenTelemetry RPC conventions):
# the others are the caller's errors.
_SERVER_ERRORS = frozenset({2, 4, 12, 13, 14, 15})
_TRACEPARENT = "traceparent"


class _MetadataGetter(Getter[Mapping[str, list[str]]]):
    """Reads propagation fields from ``CallContext.metadata`` (lower-case keys)."""

    def get(self, carrier: Mapping[str, list[str]], key: str) -> list[str] | None:
        return carrier.get(key.lower())

    def keys(self, carrier: Mapping[str, list[str]]) -> list[str]:
        return list(carrier)


_GETTER = _MetadataGetter()
_W3C = TraceContextTextMapPropagator()


def _ids(message: object) -> tuple[str, str]:
    """(task id, context id) a request or response names ("" when none)."""
    if isinstance(message, pb.SendMessageRequest):
        return message.message.task_id, message.message.context_id
    if isinstance(message, pb.SendMessageResponse):
        message = message.task if message.HasField("task") else message.message
    if isinstance(message, pb.Task):
        return message.id, message.context_id
    if isinstance(message, pb.Message):
        return message.task_id, message.context_id
    if isinstance(message, pb.GetTaskRequest | pb.CancelTaskRequest | pb.SubscribeToTaskRequest):
        return message.id, ""
    return getattr(message, "task_id", ""), getattr(message, "context_id", "")


def _set_ids(span: trace.Span, message: object) -> None:
    task_id, context_id = _ids(message)
    if task_id:
        span.set_attribute("a2a.task_id", task_id)
    if context_id:
        span.set_attribute("a2a.context_id", context_id)


class TraceCalls(CallInterceptor):
    """The chain's telemetry step for traces: one server span per call,
    current while the call runs (see the module docstring)."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self.tracer = tracer
        self._open: dict[int, tuple[trace.Span, otel_context.Context, object]] = {}

    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        parent = propagate.extract(call.metadata, getter=_GETTER)
        service, _, method = call.method.lstrip("/").rpartition("/")
        attributes: dict[str, str] = {
            "rpc.system": "grpc",
            "rpc.service": service,
            "rpc.method": method,
            "a2a.binding": call.binding,
        }
        if call.tenant:
            attributes["a2a.tenant"] = call.tenant
        span = self.tracer.start_span(
            f"{service}/{method}", context=parent, kind=SpanKind.SERVER, attributes=attributes
        )
        _set_ids(span, request)
        current = trace.set_span_in_context(span, parent)
        self._open[id(call)] = (span, current, otel_context.attach(current))

    async def after(self, call: CallContext, outcome: Outcome) -> None:
        opened = self._open.pop(id(call), None)
        if opened is None:
            return
        span, current, token = opened
        code = 0
        if isinstance(outcome, A2AError):
            code = outcome.code.grpc_code.value[0]
            span.set_attribute("a2a.error.reason", outcome.code.reason)
            if code in _SERVER_ERRORS:
                span.set_status(Status(StatusCode.ERROR, outcome.code.reason))
        elif outcome is None:
            task = asyncio.current_task()
            code = 1 if task is not None and task.cancelling() else 0  # CANCELLED: the caller went away
        else:
            _set_ids(span, outcome)
        span.set_attribute("rpc.grpc.status_code", code)
        span.end()
        if otel_context.get_current() is current:
            _detach(token)


def _detach(token: Any) -> None:
    """Undoes ``otel_context.attach``. A stream may end in another asyncio
    context than it began in (its events pulled by different tasks): the
    variable set in that context dies with it, and the token is refused
    (ValueError, which OpenTelemetry's ``detach`` would log as an error)."""
    var = getattr(token, "var", None)
    if var is None:  # not the contextvars runtime context
        otel_context.detach(token)
        return
    with contextlib.suppress(ValueError):
        var.reset(token)


class Tracing(Observer):
    """Traces of one server, made with ``provider`` (an OpenTelemetry
    ``TracerProvider``); ``agent`` names the agent on execution spans.
    :attr:`interceptor` goes in the chain's telemetry slot; the Observer
    hooks give the execution and push spans."""

    def __init__(self, provider: Any, *, agent: str = "", owned: bool = False) -> None:
        self.provider = provider
        self.tracer = provider.get_tracer(TRACER_NAME)
        self.agent = agent
        self.owned = owned
        self.interceptor = TraceCalls(self.tracer)

    @contextmanager
    def _execution(self, task_id: str, context_id: str) -> Iterator[None]:
        server = trace.get_current_span()  # the call that started the execution
        if server.is_recording():
            server.set_attribute("a2a.task_id", task_id)
            server.set_attribute("a2a.context_id", context_id)
        attributes = {"a2a.task_id": task_id, "a2a.context_id": context_id}
        if self.agent:
            attributes["a2a.agent"] = self.agent
        with self.tracer.start_as_current_span("a2a.execute", kind=SpanKind.INTERNAL, attributes=attributes):
            yield

    def execution(self, task_id: str, context_id: str) -> AbstractContextManager[Any]:
        return self._execution(task_id, context_id)

    def task_transition(self, state: int) -> None:
        trace.get_current_span().add_event("a2a.task.state", {"a2a.task.state": state_label(state)})

    def task_created(self, state: int) -> None:
        self.task_transition(state)

    def trace_context(self) -> str:
        carrier: dict[str, str] = {}
        _W3C.inject(carrier)
        return carrier.get(_TRACEPARENT, "")

    @contextmanager
    def _push(self, entry: OutboxEntry, headers: dict[str, str]) -> Iterator[None]:
        parent = _W3C.extract({_TRACEPARENT: entry.trace_context}) if entry.trace_context else None
        attributes = {
            "a2a.task_id": entry.task_id,
            "a2a.push.config_id": entry.config_id,
            "a2a.push.event_id": entry.event_id,
        }
        with self.tracer.start_as_current_span(
            "a2a.push.deliver", context=parent, kind=SpanKind.CLIENT, attributes=attributes
        ):
            propagate.inject(headers)
            yield

    def push_delivery(self, entry: OutboxEntry, headers: dict[str, str]) -> AbstractContextManager[Any]:
        return self._push(entry, headers)

    def push_response(self, status: int) -> None:
        span = trace.get_current_span()
        span.set_attribute("http.response.status_code", status)
        if status >= 400:
            span.set_status(Status(StatusCode.ERROR, f"HTTP {status}"))

    def shutdown(self) -> None:
        """Flushes and stops the provider when this server made it."""
        if self.owned:
            self.provider.shutdown()


def provider_from_env(service_name: str = "a2a-grpc") -> Any:
    """An SDK ``TracerProvider`` configured by the ``OTEL_*`` variables:
    the resource (``service_name`` unless ``OTEL_SERVICE_NAME`` or
    ``OTEL_RESOURCE_ATTRIBUTES`` names the service), the sampler, and one
    batch processor per exporter of ``OTEL_TRACES_EXPORTER`` (``otlp`` — the
    default, over gRPC or ``http/protobuf`` per ``OTEL_EXPORTER_OTLP_PROTOCOL``
    — ``console`` or ``none``). Raises ValueError for an unknown exporter."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": service_name}))
    provider = TracerProvider(resource=resource)
    for exporter in _exporters(os.environ.get("OTEL_TRACES_EXPORTER", "otlp")):
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def _exporters(names: str) -> list[Any]:
    out: list[Any] = []
    for name in (n.strip().lower() for n in names.split(",") if n.strip()):
        if name == "none":
            continue
        if name == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            out.append(ConsoleSpanExporter())
        elif name == "otlp":
            out.append(_otlp_exporter())
        else:
            raise ValueError(f"OTEL_TRACES_EXPORTER: unknown exporter {name!r}; use otlp, console or none")
    return out


def _otlp_exporter() -> Any:
    protocol = os.environ.get(
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    )
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    if protocol == "http/protobuf":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
                OTLPSpanExporter as HttpExporter,
            )
        except ImportError:
            raise ValueError(
                "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf needs opentelemetry-exporter-otlp-proto-http"
            ) from None
        return HttpExporter()
    raise ValueError(f"OTEL_EXPORTER_OTLP_PROTOCOL: {protocol!r} is not supported; use grpc or http/protobuf")
