"""The one call path of both HTTP bindings: request message → servicer → answer.

JSON-RPC (:mod:`a2a_grpc.bindings._http.jsonrpc`) and HTTP+JSON (:mod:`a2a_grpc.bindings._http.rest`) differ
only in their envelopes: how the request message is read (``params`` of the
JSON-RPC object; path, body and query of a route) and how an answer or an
error is written (an :class:`Envelope`). :func:`invoke` does the rest, once:
it builds the :class:`~a2a_grpc.bindings._http.context.GatewayContext`, calls
``getattr(servicer, method.name)(request, context)``, and answers

* a unary RPC with the envelope's ``result`` of the response message;
* a server-streaming RPC with SSE (:func:`a2a_grpc.bindings._http.sse.stream`), each event
  written by the envelope's ``event`` (spec §9.4.2, §11.7);
* a failure with the envelope's ``error`` of its ``google.rpc.Status``: an
  A2AError or a ``context.abort`` carries its own status; any other exception
  is logged and answered INTERNAL without its text; an RPC the servicer does
  not implement is METHOD_NOT_FOUND.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Protocol

from aiohttp import web
from google.protobuf import descriptor
from google.protobuf import message as _message
from google.rpc import status_pb2

from a2a_grpc.bindings._http.context import GatewayContext
from a2a_grpc.bindings._http.errors import GatewayAbort, status_of
from a2a_grpc.bindings._http.sse import stream
from a2a_grpc.errors import A2AError, ErrorCode

__all__ = ["Envelope", "invoke"]

log = logging.getLogger(__name__)


class Envelope(Protocol):
    """How one binding writes answers (one object per request or binding)."""

    def result(self, message: _message.Message, headers: Mapping[str, str]) -> web.Response:
        """The response to a unary call's result."""
        ...

    def error(self, status: status_pb2.Status, headers: Mapping[str, str] | None = None) -> web.Response:
        """The (non-SSE) response to a failed call."""
        ...

    def event(self, message: _message.Message) -> str:
        """The JSON text of one SSE event carrying a ``StreamResponse``."""
        ...

    def stream_error(self, status: status_pb2.Status) -> str:
        """The JSON text of the final SSE event of a stream that failed."""
        ...


async def invoke(
    servicer: Any,
    method: descriptor.MethodDescriptor,
    message: _message.Message,
    request: web.Request,
    envelope: Envelope,
    *,
    keepalive: float = 15.0,
    stopping: asyncio.Event | None = None,
    binding: str = "rest",
) -> web.StreamResponse:
    """Calls ``method`` on ``servicer`` with ``message`` (the request proto
    built from ``request``) and answers through ``envelope``. ``keepalive``
    and ``stopping`` (set at server shutdown) go to the SSE stream;
    ``binding`` (``jsonrpc`` or ``rest``) names the binding in the call's
    context (telemetry)."""
    handler = getattr(servicer, method.name, None)
    if handler is None:
        missing = A2AError(ErrorCode.METHOD_NOT_FOUND, f"{method.name} is not implemented")
        return envelope.error(missing.to_status())
    ctx = GatewayContext(request, binding)
    if method.server_streaming:
        return await stream(
            request,
            handler(message, ctx),
            encode_event=envelope.event,
            encode_error=envelope.stream_error,
            error_response=lambda st: envelope.error(st, ctx.response_headers()),
            headers=ctx.response_headers,
            keepalive=keepalive,
            on_disconnect=ctx.mark_cancelled,
            stopping=stopping,
        )
    try:
        result = await handler(message, ctx)
    except (GatewayAbort, A2AError) as exc:
        return envelope.error(status_of(exc), ctx.response_headers())
    except Exception:
        log.exception("%s failed", method.full_name)
        return envelope.error(status_of(RuntimeError()), ctx.response_headers())
    return envelope.result(result, ctx.response_headers())
