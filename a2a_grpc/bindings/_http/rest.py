"""HTTP+JSON binding (spec §11): route → request message → servicer → JSON or SSE.

One catch-all aiohttp handler serves every route of the compiled table
(:mod:`a2a_grpc.protocol._httprule`). The request message is built from the body (for
``body: "*"`` routes; ProtoJSON, unknown fields ignored), then the path
variables, then — on routes without a whole-message body — the query
parameters (:mod:`a2a_grpc.bindings._http.query`); the call is :func:`a2a_grpc.bindings._http.invoke.invoke`,
as on JSON-RPC, and only the envelope differs. Unary answers are the ProtoJSON of the
response with ``Content-Type: application/a2a+json``; streaming RPCs answer
SSE whose events are bare ``StreamResponse`` JSON. Errors use the
``{"error": {...}}`` form of :mod:`a2a_grpc.bindings._http.errors` with the HTTP status of the
error table; unknown paths are 404 and known paths with the wrong HTTP method
405 with ``Allow``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from aiohttp import web
from google.protobuf import message as _message
from google.rpc import status_pb2

from a2a_grpc.bindings._http.body import read_json
from a2a_grpc.bindings._http.errors import rest_error
from a2a_grpc.bindings._http.invoke import invoke
from a2a_grpc.bindings._http.query import apply_query, set_field
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.protocol import protojson
from a2a_grpc.protocol._httprule import MethodNotAllowed, RouteMatch, RouteNotFound, RouteTable

__all__ = ["REST_CONTENT_TYPE", "RestBinding", "build_request"]

REST_CONTENT_TYPE = "application/a2a+json"


def error_response(
    status: status_pb2.Status,
    *,
    http_status: int | None = None,
    headers: Mapping[str, str] | None = None,
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


class _Envelope:
    """The HTTP+JSON answers (:class:`a2a_grpc.bindings._http.invoke.Envelope`): bare ProtoJSON
    of the response, ``{"error": {...}}`` with the table's HTTP status."""

    def result(self, message: _message.Message, headers: Mapping[str, str]) -> web.Response:
        return web.Response(
            text=protojson.to_json(message),
            content_type=REST_CONTENT_TYPE,
            charset="utf-8",
            headers=headers or None,
        )

    def error(self, status: status_pb2.Status, headers: Mapping[str, str] | None = None) -> web.Response:
        return error_response(status, headers=headers)

    def event(self, message: _message.Message) -> str:
        return protojson.to_json(message)

    def stream_error(self, status: status_pb2.Status) -> str:
        return protojson.dumps(rest_error(status)[1])


_ENVELOPE = _Envelope()


def _not_routed(message: str, allowed: str | None = None) -> web.Response:
    """METHOD_NOT_FOUND: 404, or 405 with ``Allow`` when methods are given."""
    status = A2AError(ErrorCode.METHOD_NOT_FOUND, message).to_status()
    if allowed is None:
        return error_response(status)
    return error_response(status, http_status=405, headers={"Allow": allowed})


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
        found = self._match(request)
        if isinstance(found, web.Response):
            return found
        try:
            message = await _read(request, found)
        except A2AError as bad:
            return error_response(bad.to_status())
        return await invoke(
            self.servicer,
            found.route.method,
            message,
            request,
            _ENVELOPE,
            keepalive=self.keepalive,
            stopping=self.stopping,
            binding="rest",
        )

    def _match(self, request: web.Request) -> RouteMatch | web.Response:
        """The route of the request, or the 404/405/400 answer when none fits."""
        raw_path = request.rel_url.raw_path
        if self.prefix:
            raw_path = raw_path[len(self.prefix) :] or "/"
        path = request.rel_url.path
        try:
            return self.table.match(request.method, raw_path)
        except RouteNotFound:
            if self.jsonrpc_path is not None and path == self.jsonrpc_path:
                text = f"{request.method} is not allowed on {self.jsonrpc_path}; JSON-RPC requests use POST"
                return _not_routed(text, "POST")
            return _not_routed(f"no route for {request.method} {path}")
        except MethodNotAllowed as exc:
            allowed = ", ".join(exc.allowed)
            return _not_routed(f"{request.method} is not allowed on {path}; use {allowed}", allowed)
        except UnicodeDecodeError:
            err = A2AError.invalid_params(FieldViolation("path", "percent-encoding is not valid UTF-8"))
            return error_response(err.to_status())


async def _read(request: web.Request, found: RouteMatch) -> _message.Message:
    """Reads the body (refusing a non-JSON one even where no body is mapped)
    and builds the request message. Raises A2AError."""
    data = None
    if found.route.body:
        data = await read_json(request)
    elif request.can_read_body:
        await read_json(request)
    return build_request(found, data, request.query)


def build_request(
    found: RouteMatch, data: Any, query: Mapping[str, str] | Iterable[tuple[str, str]]
) -> _message.Message:
    """The request message of a matched route: the JSON body ``data`` (for a
    route with a body; None is ``{}``), then the path variables, then — on
    routes without a whole-message body — the decoded ``query`` parameters.
    Raises A2AError(INVALID_PARAMS) for values that do not fit (spec §11.5)."""
    route = found.route
    message = protojson.message_class(route.method.input_type)()
    if route.body == "*":
        protojson.parse({} if data is None else data, message)
    elif route.body:
        # body: "field.path" — the body is that one field's JSON value.
        target = message
        *parents, leaf = route.body.split(".")
        for name in parents:
            target = getattr(target, name)
        protojson.parse({leaf: {} if data is None else data}, target, prefix=".".join(parents))
    for field_path, value in found.path_params.items():
        set_field(message, field_path, value)
    if route.body != "*":
        apply_query(message, query, bound=found.path_params.keys())
    return message
