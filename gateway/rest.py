"""HTTP+JSON binding (spec §11): route → request message → servicer → JSON or SSE.

One catch-all aiohttp handler serves every route of the compiled table
(:mod:`gateway.routes`). The request message is built from the body (for
``body: "*"`` routes; ProtoJSON, unknown fields ignored), then the path
variables, then — on routes without a whole-message body — the query
parameters (:mod:`gateway.query`). Unary answers are the ProtoJSON of the
response with ``Content-Type: application/a2a+json``; streaming RPCs answer
SSE whose events are bare ``StreamResponse`` JSON. Errors use the
``{"error": {...}}`` form of :mod:`gateway.errors` with the HTTP status of the
error table; unknown paths are 404 and known paths with the wrong HTTP method
405 with ``Allow``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web
from google.rpc import status_pb2

from a2a_grpc import protojson
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from gateway.body import read_json
from gateway.context import GatewayContext
from gateway.errors import GatewayAbort, rest_error, status_of
from gateway.query import apply_query, set_field
from gateway.routes import MethodNotAllowed, RouteMatch, RouteNotFound, RouteTable
from gateway.sse import stream

__all__ = ["REST_CONTENT_TYPE", "RestBinding"]

log = logging.getLogger(__name__)

REST_CONTENT_TYPE = "application/a2a+json"


def error_response(
    status: status_pb2.Status,
    *,
    http_status: int | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    """The HTTP+JSON error response of a ``google.rpc.Status``."""
    code, body = rest_error(status, http_status=http_status)
    return web.Response(
        status=code,
        text=protojson.dumps(body),
        content_type=REST_CONTENT_TYPE,
        charset="utf-8",
        headers=headers,
    )


class RestBinding:
    """Serves the compiled route table onto ``servicer``."""

    def __init__(
        self,
        servicer: Any,
        table: RouteTable,
        *,
        prefix: str = "",
        keepalive: float = 15.0,
        stopping: asyncio.Event | None = None,
        jsonrpc_path: str | None = None,
    ) -> None:
        self.servicer = servicer
        self.jsonrpc_path = jsonrpc_path
        self.table = table
        self.prefix = prefix.rstrip("/")
        self.keepalive = keepalive
        self.stopping = stopping

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """aiohttp handler for every path under the prefix."""
        raw_path = request.rel_url.raw_path
        if self.prefix:
            raw_path = raw_path[len(self.prefix) :] or "/"
        try:
            found = self.table.match(request.method, raw_path)
        except RouteNotFound:
            if self.jsonrpc_path is not None and request.rel_url.path == self.jsonrpc_path:
                err = A2AError(
                    ErrorCode.METHOD_NOT_FOUND,
                    f"{request.method} is not allowed on {self.jsonrpc_path}; JSON-RPC requests use POST",
                )
                return error_response(err.to_status(), http_status=405, headers={"Allow": "POST"})
            err = A2AError(
                ErrorCode.METHOD_NOT_FOUND, f"no route for {request.method} {request.rel_url.path}"
            )
            return error_response(err.to_status())
        except MethodNotAllowed as exc:
            err = A2AError(
                ErrorCode.METHOD_NOT_FOUND,
                f"{request.method} is not allowed on {request.rel_url.path}; use {', '.join(exc.allowed)}",
            )
            return error_response(err.to_status(), http_status=405, headers={"Allow": ", ".join(exc.allowed)})
        except UnicodeDecodeError:
            err = A2AError.invalid_params(FieldViolation("path", "percent-encoding is not valid UTF-8"))
            return error_response(err.to_status())
        ctx = GatewayContext(request)
        try:
            message = await self._build(request, found)
        except A2AError as bad:
            return error_response(bad.to_status())
        method = found.route.method
        handler = getattr(self.servicer, method.name, None)
        if handler is None:
            missing = A2AError(ErrorCode.METHOD_NOT_FOUND, f"{method.name} is not implemented")
            return error_response(missing.to_status())
        if method.server_streaming:
            return await stream(
                request,
                handler(message, ctx),
                encode_event=protojson.to_json,
                encode_error=lambda st: protojson.dumps(rest_error(st)[1]),
                error_response=lambda st: error_response(st, headers=ctx.response_headers()),
                headers=ctx.response_headers,
                keepalive=self.keepalive,
                on_disconnect=ctx.mark_cancelled,
                stopping=self.stopping,
            )
        try:
            result = await handler(message, ctx)
        except (GatewayAbort, A2AError) as exc:
            return error_response(status_of(exc), headers=ctx.response_headers())
        except Exception:
            log.exception("%s failed", method.full_name)
            return error_response(status_of(RuntimeError()), headers=ctx.response_headers())
        return web.Response(
            text=protojson.to_json(result),
            content_type=REST_CONTENT_TYPE,
            charset="utf-8",
            headers=ctx.response_headers(),
        )

    async def _build(self, request: web.Request, found: RouteMatch) -> Any:
        route = found.route
        message = protojson.message_class(route.method.input_type)()
        body = route.body
        if body:
            data = await read_json(request)
            if data is None:
                data = {}
            if body == "*":
                protojson.parse(data, message)
            else:
                # body: "field.path" — the body is that one field's JSON value.
                target = message
                *parents, leaf = body.split(".")
                for name in parents:
                    target = getattr(target, name)
                protojson.parse({leaf: data}, target, prefix=".".join(parents))
        else:
            # No body is mapped: one must not be sent (still refuse a non-JSON one).
            if request.can_read_body:
                await read_json(request)
        for field_path, value in found.path_params.items():
            set_field(message, field_path, value)
        if body != "*":
            apply_query(message, request.query, bound=found.path_params.keys())
        return message
