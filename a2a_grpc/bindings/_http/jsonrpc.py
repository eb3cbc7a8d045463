"""JSON-RPC 2.0 binding (spec §9): envelope → ``methods_by_name`` → servicer.

A request is ``{"jsonrpc": "2.0", "id": <string|number>, "method": <RPC name>,
"params": <ProtoJSON of the RPC's input message>}``; the method names are the
RPC names of the service descriptor (no dispatch table is written by hand);
the call is :func:`a2a_grpc.bindings._http.invoke.invoke`, as on HTTP+JSON.
Unary RPCs answer ``{"jsonrpc": "2.0", "id": <same>, "result": <ProtoJSON of
the output>}`` with ``Content-Type: application/json``; streaming RPCs answer
SSE whose every event is such a response envelope carrying one
``StreamResponse`` (spec §9.4.2).

Errors are answered with HTTP 200 (413 for PAYLOAD_TOO_LARGE, design.md
"size limits") and ``{"jsonrpc": "2.0", "id": <same, or
null when unusable>, "error": {"code", "message", "data": [...]}}``
(design.md A11, A21): -32700 body not JSON, -32600 not a request object
(batches included), -32601 unknown method, -32602 params that do not fit the
input message (with a ``google.rpc.BadRequest``), -32603 internal, and the A2A
codes of the error table; ``data`` always carries ``google.rpc.ErrorInfo``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from google.protobuf import descriptor
from google.protobuf import message as _message
from google.rpc import status_pb2

from a2a_grpc.bindings._http.body import read_json
from a2a_grpc.bindings._http.errors import jsonrpc_error, jsonrpc_http_status
from a2a_grpc.bindings._http.invoke import invoke
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.protocol import protojson

__all__ = ["JSONRPC_CONTENT_TYPE", "JsonRpcBinding"]

JSONRPC_CONTENT_TYPE = "application/json"
Id = str | int | float | None


def _valid_id(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)  # 1e400 reads as infinity, which JSON cannot echo
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def error_envelope(request_id: Id, status: status_pb2.Status) -> dict[str, Any]:
    """A JSON-RPC error response object."""
    return {"jsonrpc": "2.0", "id": request_id, "error": jsonrpc_error(status)}


def _respond(
    payload: dict[str, Any], headers: Mapping[str, str] | None = None, *, status: int = 200
) -> web.Response:
    return web.Response(
        status=status,
        text=protojson.dumps(payload),
        content_type=JSONRPC_CONTENT_TYPE,
        charset="utf-8",
        headers=headers or None,
    )


def _error_response(
    request_id: Id, status: status_pb2.Status, headers: Mapping[str, str] | None = None
) -> web.Response:
    return _respond(error_envelope(request_id, status), headers, status=jsonrpc_http_status(status))


class _Envelope:
    """The JSON-RPC response objects of one request (:class:`a2a_grpc.bindings._http.invoke.Envelope`)."""

    __slots__ = ("request_id",)

    def __init__(self, request_id: Id) -> None:
        self.request_id = request_id

    def _result(self, message: _message.Message) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.request_id, "result": protojson.to_dict(message)}

    def result(self, message: _message.Message, headers: Mapping[str, str]) -> web.Response:
        return _respond(self._result(message), headers)

    def error(self, status: status_pb2.Status, headers: Mapping[str, str] | None = None) -> web.Response:
        return _error_response(self.request_id, status, headers)

    def event(self, message: _message.Message) -> str:
        return protojson.dumps(self._result(message))

    def stream_error(self, status: status_pb2.Status) -> str:
        return protojson.dumps(error_envelope(self.request_id, status))


class _Reject(Exception):
    def __init__(self, request_id: Id, error: A2AError) -> None:
        self.request_id = request_id
        self.error = error


class _Dialect(Exception):
    """The method is one of the legacy dialect's (``JsonRpcBinding.dialect``)."""

    def __init__(self, request_id: Id, method: Any, params: Any) -> None:
        self.request_id = request_id
        self.method = method
        self.params = params


class JsonRpcBinding:
    """Serves every RPC of ``service`` onto ``servicer`` at one POST URL.
    ``dialect`` (e.g. :class:`a2a_grpc.dialects._jsonrpc.JsonRpcDialect`) is
    asked about a method name the service does not have before -32601."""

    def __init__(
        self,
        servicer: Any,
        service: descriptor.ServiceDescriptor,
        *,
        keepalive: float = 15.0,
        stopping: asyncio.Event | None = None,
        dialect: Any = None,
    ) -> None:
        self.servicer = servicer
        self.dialect = dialect
        self.service = service
        # RPC name → (method, request class), read once (a descriptor lookup per call costs).
        self._methods = {m.name: (m, protojson.message_class(m.input_type)) for m in service.methods}
        self.keepalive = keepalive
        self.stopping = stopping

    @staticmethod
    def error_response(request_id: Id, status: status_pb2.Status) -> web.Response:
        """The JSON-RPC error response of ``status`` for ``request_id``:
        HTTP 200, or 413 for PAYLOAD_TOO_LARGE."""
        return _error_response(request_id, status)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """aiohttp handler for POST at the JSON-RPC URL."""
        try:
            request_id, method, message = await self._parse(request)
        except _Reject as rej:
            return _Envelope(rej.request_id).error(rej.error.to_status())
        except _Dialect as legacy:
            return await self.dialect.serve(request, legacy.request_id, legacy.method, legacy.params)
        return await invoke(
            self.servicer,
            method,
            message,
            request,
            _Envelope(request_id),
            keepalive=self.keepalive,
            stopping=self.stopping,
            binding="jsonrpc",
        )

    async def _parse(self, request: web.Request) -> tuple[Id, descriptor.MethodDescriptor, Any]:
        try:
            data = await read_json(request)
        except A2AError as err:
            raise _Reject(None, err) from None
        if data is None:
            raise _Reject(None, A2AError(ErrorCode.PARSE_ERROR, "empty request body"))
        if isinstance(data, list):
            raise _Reject(None, A2AError(ErrorCode.INVALID_REQUEST, "batch requests are not supported"))
        if not isinstance(data, dict):
            raise _Reject(None, A2AError(ErrorCode.INVALID_REQUEST, "the request must be a JSON object"))
        raw_id = data.get("id")
        request_id: Id = raw_id if _valid_id(raw_id) else None
        if data.get("jsonrpc") != "2.0":
            raise _Reject(request_id, A2AError(ErrorCode.INVALID_REQUEST, '"jsonrpc" must be "2.0"'))
        if request_id is None:
            raise _Reject(
                None,
                A2AError(
                    ErrorCode.INVALID_REQUEST,
                    '"id" must be a string or a number (notifications are not supported)',
                ),
            )
        name = data.get("method")
        if not isinstance(name, str):
            raise _Reject(request_id, A2AError(ErrorCode.INVALID_REQUEST, '"method" must be a string'))
        found = self._methods.get(name)
        if found is None:
            legacy = self.dialect.lookup(name) if self.dialect is not None else None
            if legacy is not None:
                raise _Dialect(request_id, legacy, data.get("params"))
            raise _Reject(request_id, A2AError(ErrorCode.METHOD_NOT_FOUND, f"unknown method {name!r}"))
        method, request_class = found
        params = data.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise _Reject(
                request_id,
                A2AError.invalid_params(
                    FieldViolation("params", "must be a JSON object (by-name parameters)")
                ),
            )
        try:
            message = protojson.parse(params, request_class())
        except A2AError as err:
            raise _Reject(request_id, err) from None
        return request_id, method, message
