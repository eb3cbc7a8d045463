"""Minimal, independent clients of the three bindings for the conformance suite.

Each adapter takes and returns generated proto messages and raises
:class:`~a2a_grpc.errors.A2AError` rebuilt from the binding's error form
(``google.rpc.ErrorInfo.reason`` first). They are written from the spec, not
from the gateway: the REST paths below are spelled out as in spec §11.3 (digest
§5.2), and the JSON is read with plain ``json_format`` in strict mode (an
unknown member in a response fails the test).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import quote

import aiohttp
import grpc
from google.protobuf import json_format, message_factory
from google.rpc import status_pb2

from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.types import pb, pb_grpc

SERVICE = pb.DESCRIPTOR.services_by_name["A2AService"]
DEFAULT_HEADERS = {"A2A-Version": "1.0"}
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"


def output_class(rpc: str) -> Any:
    return message_factory.GetMessageClass(SERVICE.methods_by_name[rpc].output_type)


def _headers(headers: Mapping[str, str | None] | None) -> dict[str, str]:
    merged: dict[str, str | None] = {**DEFAULT_HEADERS, **(headers or {})}
    return {k: v for k, v in merged.items() if v is not None}


def error_from_details(message: str, details: list[dict[str, Any]], fallback: ErrorCode) -> A2AError:
    """An A2AError from ``@type``-tagged ProtoJSON details (REST, JSON-RPC)."""
    code: ErrorCode | None = None
    metadata: dict[str, str] = {}
    violations: list[FieldViolation] = []
    for detail in details:
        assert "@type" in detail, detail
        if detail["@type"] == ERROR_INFO:
            assert detail["domain"] == "a2a-protocol.org"
            code = ErrorCode.from_reason(detail["reason"])
            metadata = detail.get("metadata", {})
        elif detail["@type"] == BAD_REQUEST:
            violations += [
                FieldViolation(v.get("field", ""), v["description"]) for v in detail["fieldViolations"]
            ]
    return A2AError(code or fallback, message, metadata=metadata, field_violations=violations)


class GrpcBinding:
    name = "grpc"

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.stub = pb_grpc.A2AServiceStub(channel)
        self.last_extensions: str | None = None

    @staticmethod
    def _metadata(headers: Mapping[str, str | None] | None) -> tuple[tuple[str, str], ...]:
        return tuple((k.lower(), v) for k, v in _headers(headers).items())

    @staticmethod
    def _error(exc: grpc.aio.AioRpcError) -> A2AError:
        for key, value in exc.trailing_metadata() or ():
            if key == "grpc-status-details-bin":
                status = status_pb2.Status.FromString(value)
                assert status.code == exc.code().value[0]
                return A2AError.from_status(status)
        return A2AError(ErrorCode.from_grpc_code(exc.code()), exc.details())

    async def call(self, rpc: str, request: Any, *, headers: Mapping[str, str | None] | None = None) -> Any:
        call = getattr(self.stub, rpc)(request, metadata=self._metadata(headers))
        try:
            response = await call
        except grpc.aio.AioRpcError as exc:
            raise self._error(exc) from None
        self.last_extensions = dict(await call.initial_metadata() or ()).get("a2a-extensions")
        return response

    async def open_stream(
        self, rpc: str, request: Any, *, headers: Mapping[str, str | None] | None = None
    ) -> AsyncIterator[pb.StreamResponse]:
        call = getattr(self.stub, rpc)(request, metadata=self._metadata(headers))
        try:
            self.last_extensions = None
            first = True
            async for event in call:
                if first:
                    self.last_extensions = dict(await call.initial_metadata() or ()).get("a2a-extensions")
                    first = False
                yield event
        except grpc.aio.AioRpcError as exc:
            raise self._error(exc) from None
        finally:
            call.cancel()

    async def unknown_method(self) -> None:
        """Calls an RPC the service does not have."""
        method = self.channel.unary_unary(
            "/lf.a2a.v1.A2AService/NoSuchMethod",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=pb.Task.FromString,
        )
        try:
            await method(pb.GetTaskRequest(id="x"), metadata=self._metadata(None))
        except grpc.aio.AioRpcError as exc:
            raise self._error(exc) from None


async def _sse_lines(resp: aiohttp.ClientResponse) -> AsyncIterator[str]:
    """Lines of an SSE body, without a line-length limit (5 MiB events)."""
    buffer = b""
    async for chunk in resp.content.iter_any():
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            yield line.rstrip(b"\r").decode("utf-8")
    if buffer:
        yield buffer.rstrip(b"\r").decode("utf-8")


async def _sse_objects(resp: aiohttp.ClientResponse) -> AsyncIterator[dict[str, Any]]:
    """JSON objects of the ``data:`` lines of an SSE response."""
    data: list[str] = []
    async for line in _sse_lines(resp):
        if line.startswith(":"):
            continue
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif line == "" and data:
            yield json.loads("\n".join(data))
            data = []
    if data:
        yield json.loads("\n".join(data))


def _jsonrpc_http_status(body: dict[str, Any]) -> int:
    """The HTTP status a JSON-RPC answer must come with: 200, but 413 for
    PAYLOAD_TOO_LARGE (design.md "JSON-RPC errors")."""
    if "error" not in body:
        return 200
    reasons = {d.get("reason") for d in body["error"].get("data", [])}
    return 413 if "PAYLOAD_TOO_LARGE" in reasons else 200


class JsonRpcBinding:
    name = "jsonrpc"

    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session = session
        self.url = url
        self.ids = itertools.count(1)
        self.last_extensions: str | None = None

    @staticmethod
    def _error(body: dict[str, Any]) -> A2AError:
        err = body["error"]
        assert isinstance(err["code"], int) and isinstance(err["message"], str)
        fallback = ErrorCode.from_jsonrpc_code(err["code"])
        out = error_from_details(err["message"], err.get("data", []), fallback)
        assert out.code.jsonrpc_code == err["code"], (out.code, err["code"])
        return out

    def _envelope(self, rpc: str, request: Any) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": next(self.ids),
            "method": rpc,
            "params": json_format.MessageToDict(request),
        }

    async def call(self, rpc: str, request: Any, *, headers: Mapping[str, str | None] | None = None) -> Any:
        envelope = self._envelope(rpc, request)
        async with self.session.post(self.url, json=envelope, headers=_headers(headers)) as resp:
            assert resp.headers["Content-Type"].startswith("application/json")
            self.last_extensions = resp.headers.get("A2A-Extensions")
            body = await resp.json()
            assert resp.status == _jsonrpc_http_status(body)
        assert body["jsonrpc"] == "2.0" and body["id"] == envelope["id"]
        if "error" in body:
            raise self._error(body)
        return json_format.ParseDict(body["result"], output_class(rpc)())

    async def open_stream(
        self, rpc: str, request: Any, *, headers: Mapping[str, str | None] | None = None
    ) -> AsyncIterator[pb.StreamResponse]:
        envelope = self._envelope(rpc, request)
        async with self.session.post(self.url, json=envelope, headers=_headers(headers)) as resp:
            self.last_extensions = resp.headers.get("A2A-Extensions")
            if not resp.headers["Content-Type"].startswith("text/event-stream"):
                body = await resp.json()
                assert resp.status == _jsonrpc_http_status(body)
                assert body["id"] == envelope["id"] and "error" in body
                raise self._error(body)
            async for obj in _sse_objects(resp):
                assert obj["jsonrpc"] == "2.0" and obj["id"] == envelope["id"]
                if "error" in obj:
                    raise self._error(obj)
                yield json_format.ParseDict(obj["result"], pb.StreamResponse())


def _query(fields: dict[str, Any]) -> list[tuple[str, str]]:
    def text(v: Any) -> str:
        return ("true" if v else "false") if isinstance(v, bool) else str(v)

    return [
        (key, text(v))
        for key, value in fields.items()
        for v in (value if isinstance(value, list) else [value])
    ]


def rest_request(rpc: str, req: Any) -> tuple[str, str, dict[str, Any] | None, list[tuple[str, str]]]:
    """(verb, path, body, query) of an RPC over HTTP+JSON, spelled out as in
    spec §11.3 / digest §5.2."""
    fields = json_format.MessageToDict(req)
    tenant = fields.pop("tenant", "")
    t = f"/{quote(tenant, safe='')}" if tenant else ""

    def q(value: str) -> str:
        return quote(value, safe="")

    if rpc == "SendMessage":
        return "POST", f"{t}/message:send", fields, []
    if rpc == "SendStreamingMessage":
        return "POST", f"{t}/message:stream", fields, []
    if rpc == "GetTask":
        return "GET", f"{t}/tasks/{q(fields.pop('id', ''))}", None, _query(fields)
    if rpc == "ListTasks":
        return "GET", f"{t}/tasks", None, _query(fields)
    if rpc == "CancelTask":
        return "POST", f"{t}/tasks/{q(fields.pop('id', ''))}:cancel", fields, []
    if rpc == "SubscribeToTask":
        return "POST", f"{t}/tasks/{q(fields.pop('id', ''))}:subscribe", fields, []
    if rpc == "CreateTaskPushNotificationConfig":
        return "POST", f"{t}/tasks/{q(fields.pop('taskId', ''))}/pushNotificationConfigs", fields, []
    if rpc == "GetTaskPushNotificationConfig":
        path = f"{t}/tasks/{q(fields.pop('taskId', ''))}/pushNotificationConfigs/{q(fields.pop('id', ''))}"
        return "GET", path, None, _query(fields)
    if rpc == "ListTaskPushNotificationConfigs":
        return "GET", f"{t}/tasks/{q(fields.pop('taskId', ''))}/pushNotificationConfigs", None, _query(fields)
    if rpc == "DeleteTaskPushNotificationConfig":
        path = f"{t}/tasks/{q(fields.pop('taskId', ''))}/pushNotificationConfigs/{q(fields.pop('id', ''))}"
        return "DELETE", path, None, _query(fields)
    if rpc == "GetExtendedAgentCard":
        return "GET", f"{t}/extendedAgentCard", None, _query(fields)
    raise AssertionError(f"no REST form for {rpc}")


class RestBinding:
    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.name = "rest"
        self.session = session
        self.base = base.rstrip("/")
        self.last_extensions: str | None = None
        self.subscribe_verb = "POST"

    @staticmethod
    async def _error(resp: aiohttp.ClientResponse) -> A2AError:
        assert resp.headers["Content-Type"].startswith("application/a2a+json"), resp.headers["Content-Type"]
        body = await resp.json(content_type=None)
        return RestBinding._error_obj(body, resp.status)

    @staticmethod
    def _error_obj(body: dict[str, Any], http_status: int | None) -> A2AError:
        err = body["error"]
        if http_status is not None:
            assert err["code"] == http_status
        out = error_from_details(
            err["message"], err.get("details", []), ErrorCode.from_http_status(err["code"])
        )
        assert out.code.http_status == err["code"] or err["code"] == 405
        assert err["status"] == out.code.grpc_code.name or err["code"] == 405
        return out

    def _open(self, rpc: str, request: Any, headers: Mapping[str, str | None] | None) -> Any:
        verb, path, body, query = rest_request(rpc, request)
        if rpc == "SubscribeToTask" and self.subscribe_verb == "GET":
            verb, body = "GET", None
        hdrs = _headers(headers)
        data = None
        if body is not None:
            hdrs["Content-Type"] = "application/a2a+json"
            data = json.dumps(body).encode()
        return self.session.request(verb, self.base + path, params=query or None, data=data, headers=hdrs)

    async def call(self, rpc: str, request: Any, *, headers: Mapping[str, str | None] | None = None) -> Any:
        async with self._open(rpc, request, headers) as resp:
            self.last_extensions = resp.headers.get("A2A-Extensions")
            if resp.status != 200:
                raise await self._error(resp)
            assert resp.headers["Content-Type"].startswith("application/a2a+json")
            body = await resp.json(content_type=None)
        return json_format.ParseDict(body, output_class(rpc)())

    async def open_stream(
        self, rpc: str, request: Any, *, headers: Mapping[str, str | None] | None = None
    ) -> AsyncIterator[pb.StreamResponse]:
        async with self._open(rpc, request, headers) as resp:
            self.last_extensions = resp.headers.get("A2A-Extensions")
            if resp.status != 200:
                raise await self._error(resp)
            assert resp.headers["Content-Type"].startswith("text/event-stream")
            async for obj in _sse_objects(resp):
                if "error" in obj:
                    raise self._error_obj(obj, None)
                yield json_format.ParseDict(obj, pb.StreamResponse())


Binding = GrpcBinding | JsonRpcBinding | RestBinding


async def collect(
    binding: Binding, rpc: str, request: Any, *, headers: Mapping[str, str | None] | None = None
) -> list[pb.StreamResponse]:
    """Every event of a stream, until the server ends it."""
    return [event async for event in binding.open_stream(rpc, request, headers=headers)]


async def collect_with_error(
    binding: Binding, rpc: str, request: Any, *, headers: Mapping[str, str | None] | None = None
) -> tuple[list[pb.StreamResponse], A2AError | None]:
    """The events of a stream and the error that ended it (or None)."""
    events: list[pb.StreamResponse] = []
    try:
        async for event in binding.open_stream(rpc, request, headers=headers):
            events.append(event)  # noqa: PERF401 - keep what arrived before an error
    except A2AError as err:
        return events, err
    return events, None
