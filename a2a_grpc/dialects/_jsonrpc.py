"""The v0.3 JSON-RPC methods at the v1.0 JSON-RPC URL (legacy digest §2).

:class:`JsonRpcDialect` is what :class:`a2a_grpc.bindings._http.jsonrpc.JsonRpcBinding` asks
about a method name the v1.0 service does not have: :meth:`~JsonRpcDialect.
lookup` finds it in :data:`a2a_grpc.dialects._v03.METHODS`, and
:meth:`~JsonRpcDialect.serve` answers it. Serving is an adapter, never a
second handler: ``params`` go up through the v0.3 table into the v1.0 request
message, the SAME servicer method runs (the whole interceptor chain with it,
as a v1.0 call: the request is sent on as ``A2A-Version: 1.0``, with
``X-A2A-Extensions`` read as ``A2A-Extensions``), and the answer goes down
the table into v0.3 JSON:

* unary: ``{"jsonrpc": "2.0", "id", "result": <v0.3 object>}`` (``tasks/
  pushNotificationConfig/list``: a bare array; ``…/delete``: ``null``);
* ``message/stream``, ``tasks/resubscribe``: SSE, each ``data:`` one such
  response whose ``result`` is a bare Task / Message / status-update /
  artifact-update with ``kind``; the last status-update has ``final: true``
  (computed, C2; synthesised from the task's status when the v1.0 stream
  ended on another event); resubscribe on a finished task sends the Task
  and a final status-update (C8);
* errors: ``{"code", "message", "data": {"reason", …}}`` with the v0.3 codes
  (C14), HTTP 200 (401 for UNAUTHENTICATED, as on v1.0).

Version rule (spec §3.6.2): no ``A2A-Version`` or ``0.3`` serves the v0.3
method; ``1.0`` answers -32601 naming the v1.0 method to call instead; any
other version VersionNotSupportedError.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from aiohttp import web

from a2a_grpc.bindings._http.context import GatewayContext
from a2a_grpc.bindings._http.errors import GatewayAbort, jsonrpc_error, status_of
from a2a_grpc.bindings._http.sse import stream
from a2a_grpc.context import EXTENSIONS_KEY, VERSION_KEY
from a2a_grpc.dialects import _v01 as v01
from a2a_grpc.dialects import _v03 as v03
from a2a_grpc.dialects._v03 import DIALECT, METHODS, Method
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb

__all__ = ["LEGACY_EXTENSIONS_HEADER", "Envelope", "JsonRpcDialect", "V03Context", "respond", "version_error"]

#: The v0.3 extensions header (legacy digest §6.1); echoed back as well.
LEGACY_EXTENSIONS_HEADER = "x-a2a-extensions"
Json = dict[str, Any]


class V03Context(GatewayContext):
    """The servicer's context of a v0.3 call: the request's headers, with the
    version the converted request is in (``a2a-version: 1.0``) and the v0.3
    extensions header as ``a2a-extensions``. Its ``dialect`` is ``0.3``: a
    push config set through it gets v0.3 bodies (C21)."""

    dialect = "0.3"

    def __init__(self, request: web.Request) -> None:
        super().__init__(request)
        md = [(k, v) for k, v in self._metadata if k != VERSION_KEY]
        md.append((VERSION_KEY, "1.0"))
        if EXTENSIONS_KEY not in {k for k, _ in md}:
            md.extend((EXTENSIONS_KEY, v) for k, v in self._metadata if k == LEGACY_EXTENSIONS_HEADER)
        self._metadata = tuple(md)

    def response_headers(self) -> dict[str, str]:
        """The v1.0 response headers, plus ``X-A2A-Extensions`` beside ``A2A-Extensions``."""
        headers = super().response_headers()
        if "A2A-Extensions" in headers:
            headers["X-A2A-Extensions"] = headers["A2A-Extensions"]
        return headers


def respond(payload: Json, headers: dict[str, str] | None = None, status: int = 200) -> web.Response:
    """``payload`` as a JSON response (UTF-8) with ``headers`` and HTTP ``status``."""
    return web.Response(
        text=protojson.dumps(payload),
        status=status,
        content_type="application/json",
        charset="utf-8",
        headers=headers,
    )


def version_error(method: Method, version: str) -> A2AError | None:
    """None when a legacy ``method`` may be served to a caller that sent
    ``A2A-Version: version`` (none, or 0.3: spec §3.6.2); else METHOD_NOT_FOUND
    naming the v1.0 method for 1.0, VERSION_NOT_SUPPORTED for any other."""
    major_minor = ".".join(version.strip().split(".")[:2])
    if major_minor in ("", "0.3"):
        return None
    if major_minor == "1.0":
        era = "0.1" if v01.METHODS.get(method.name) is method else "0.3"
        return A2AError(
            ErrorCode.METHOD_NOT_FOUND,
            f"{method.name!r} is an A2A {era} method; with A2A-Version 1.0 call {method.rpc!r}",
            metadata={"v1Method": method.rpc},
        )
    return A2AError(
        ErrorCode.VERSION_NOT_SUPPORTED,
        f"A2A-Version {version!r} is not supported by {method.name!r}; send 0.3 or call {method.rpc!r} with 1.0",
        metadata={"requestedVersion": version, "supportedVersions": "0.3,1.0"},
    )


class JsonRpcDialect:
    """The v0.3 JSON-RPC methods, served onto ``servicer`` (the v1.0 A2AServicer)."""

    def __init__(
        self, servicer: Any, *, keepalive: float = 15.0, stopping: asyncio.Event | None = None
    ) -> None:
        self.servicer = servicer
        self.keepalive = keepalive
        self.stopping = stopping

    @staticmethod
    def lookup(name: str) -> Method | None:
        """The v0.3 method called ``name``, or None."""
        return METHODS.get(name)

    async def serve(
        self, request: web.Request, request_id: Any, method: Method, params: Any
    ) -> web.StreamResponse:
        """Answers one v0.3 call (``params`` as sent; None when absent) in the
        v0.3 form; see the module docstring for the shapes and errors."""
        envelope = Envelope(request_id)
        version = request.headers.get("A2A-Version") or request.query.get("A2A-Version", "")
        refused = version_error(method, version)
        if refused is not None:  # answered to a v1.0 (or unknown-version) caller: the v1.0 error form
            return respond({"jsonrpc": "2.0", "id": request_id, "error": jsonrpc_error(refused.to_status())})
        try:
            message = self._request(method, params)
        except A2AError as err:
            return envelope.error(err)
        ctx = V03Context(request)
        handler = getattr(self.servicer, method.rpc)
        if method.result == "StreamResponse":
            events = _legacy_events(self.servicer, handler(message, ctx), ctx, message, method)
            return await envelope.sse(request, events, ctx, keepalive=self.keepalive, stopping=self.stopping)
        try:
            if method.rpc == "GetTaskPushNotificationConfig" and not message.id:
                result = await _only_config(self.servicer, message, ctx)
            else:
                result = await handler(message, ctx)
        except (GatewayAbort, A2AError) as exc:
            return envelope.error(A2AError.from_status(status_of(exc)), ctx.response_headers())
        return envelope.result(_result(method, result, str(request.url)), ctx.response_headers())

    @staticmethod
    def _request(method: Method, params: Any) -> Any:
        if params is None:
            if method.needs_params:
                raise A2AError(ErrorCode.INVALID_PARAMS, f"{method.name!r} needs params")
            params = {}
        v1 = DIALECT.up(method.request, params)
        return protojson.parse(v1, protojson.message_class(_descriptor(method.request))())


def _descriptor(name: str) -> Any:
    return pb.DESCRIPTOR.message_types_by_name[name]


def _result(method: Method, result: Any, url: str) -> Any:
    if not method.result:
        return None
    value = protojson.to_dict(result)
    if method.rpc == "GetExtendedAgentCard":
        return v03.legacy_card(value, url)
    if method.rpc == "ListTaskPushNotificationConfigs":
        return [DIALECT.down(method.result, c) for c in value.get("configs", [])]
    if method.result == "Task" and v01.is_v01_task(value):  # tasks/get|cancel of a v0.1 task (§6.2)
        return v01.task(value)
    return DIALECT.down(method.result, value)


class Envelope:
    """The legacy JSON-RPC answers of the call ``request_id``: results,
    v0.3-form errors (HTTP 401 for UNAUTHENTICATED), stream events."""

    def __init__(self, request_id: Any) -> None:
        self.request_id = request_id

    def result(self, result: Any, headers: dict[str, str]) -> web.Response:
        return respond({"jsonrpc": "2.0", "id": self.request_id, "result": result}, headers)

    def error_json(self, err: A2AError) -> Json:
        return {"jsonrpc": "2.0", "id": self.request_id, "error": v03.error_object(err)}

    def error(self, err: A2AError, headers: dict[str, str] | None = None) -> web.Response:
        headers = dict(headers or {})
        status = 200
        if err.code is ErrorCode.UNAUTHENTICATED:
            status = 401
            headers.setdefault("WWW-Authenticate", "Bearer")
        return respond(self.error_json(err), headers, status)

    def event(self, event: Json) -> str:
        return protojson.dumps({"jsonrpc": "2.0", "id": self.request_id, "result": event})

    async def sse(
        self,
        request: web.Request,
        events: AsyncIterator[Json],
        ctx: GatewayContext,
        *,
        keepalive: float,
        stopping: asyncio.Event | None,
    ) -> web.StreamResponse:
        """The SSE answer of a legacy stream: each event one JSON-RPC response
        of this envelope, an error before the first event an error response,
        one after it a final error event."""
        return await stream(
            request,
            events,
            encode_event=self.event,
            encode_error=lambda st: protojson.dumps(self.error_json(A2AError.from_status(st))),
            error_response=lambda st: self.error(A2AError.from_status(st), ctx.response_headers()),
            headers=ctx.response_headers,
            keepalive=keepalive,
            on_disconnect=ctx.mark_cancelled,
            stopping=stopping,
        )


async def _legacy_events(
    servicer: Any, events: AsyncIterator[Any], ctx: V03Context, message: Any, method: Method
) -> AsyncIterator[Json]:
    """The v0.3 events of a v1.0 stream, ``final`` computed (C2, C8)."""
    closes_on_interrupt = method.rpc == "SendStreamingMessage"
    last: Json | None = None
    status: tuple[str, str, Json] | None = None  # task id, context id, v0.3 status
    try:
        async for item in events:
            event = DIALECT.down("StreamResponse", protojson.to_dict(item))
            status = _status_of(event) or status
            if event.get("kind") == "status-update":
                event["final"] = v03.final_of(event, closes_on_interrupt=closes_on_interrupt)
            last = event
            yield event
    except GatewayAbort as exc:
        if last is not None or method.rpc != "SubscribeToTask":
            raise
        if A2AError.from_status(exc.status).code is not ErrorCode.UNSUPPORTED_OPERATION:
            raise
        task = await _finished_task(servicer, message, ctx)
        if task is None:
            raise
        last = DIALECT.down("Task", protojson.to_dict(task))
        status = _status_of(last)
        yield last
    if last is None or status is None or last.get("kind") == "message" or last.get("final"):
        return
    task_id, context_id, state = status
    yield {
        "kind": "status-update",
        "taskId": task_id,
        "contextId": context_id,
        "status": state,
        "final": True,
    }


async def _only_config(servicer: Any, request: Any, ctx: V03Context) -> Any:
    """``tasks/pushNotificationConfig/get`` with bare TaskIdParams (C11): the
    task's first config; TaskNotFoundError when it has none."""
    listing = pb.ListTaskPushNotificationConfigsRequest(task_id=request.task_id, tenant=request.tenant)
    configs = (await servicer.ListTaskPushNotificationConfigs(listing, ctx)).configs
    if not configs:
        raise A2AError(ErrorCode.TASK_NOT_FOUND, f"task {request.task_id!r} has no push notification config")
    return configs[0]


def _status_of(event: Json) -> tuple[str, str, Json] | None:
    kind = event.get("kind")
    if kind == "task":
        return event.get("id", ""), event.get("contextId", ""), event.get("status", {})
    if kind == "status-update":
        return event.get("taskId", ""), event.get("contextId", ""), event.get("status", {})
    return None


async def _finished_task(servicer: Any, request: Any, ctx: V03Context) -> Any:
    """The task of a refused resubscription when it is terminal (C8), else None."""
    try:
        task = await servicer.GetTask(pb.GetTaskRequest(id=request.id, tenant=request.tenant), ctx)
    except (GatewayAbort, A2AError):
        return None
    terminal = (pb.TASK_STATE_COMPLETED, pb.TASK_STATE_CANCELED, pb.TASK_STATE_FAILED, pb.TASK_STATE_REJECTED)
    return task if task.status.state in terminal else None


def methods() -> Sequence[str]:
    """The v0.3 JSON-RPC method names served."""
    return tuple(METHODS)
