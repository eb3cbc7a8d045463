"""The v0.1 calls onto the v1.0 servicer, and the v0.1 JSON-RPC methods (legacy digest §5).

:class:`V01Calls` is what both old-shape surfaces share: the v0.1 JSON-RPC
methods (:class:`V01JsonRpc`, at the JSON-RPC URL) and the tutorial's plain
HTTP routes (:mod:`a2a_grpc.dialects._tutorial`). Each call converts its v0.1
params up through the one table (:mod:`a2a_grpc.dialects._v01`), calls the SAME
:class:`~a2a_grpc.bindings._servicer.A2AServicer` method — the whole interceptor chain
runs as for a v1.0 call (``A2A-Version: 1.0`` is what the converted request
is in) — and converts the answer down. The one thing a v0.1 call may do that
a v1.0 call may not: name a task id the server does not know, which creates
the task under it (C3; :class:`V01Context` is the only context carrying
``client_task_ids``).

:class:`V01JsonRpc` answers ``tasks/send`` (a Task), ``tasks/sendSubscribe``
(SSE; each ``data:`` a JSON-RPC response whose ``result`` is a v0.1
status or artifact event, the last status one ``final: true``, C18),
``tasks/pushNotification/set|get``, and ``tasks/resubscribe`` of a v0.1
client's task (v0.1 events; a finished task: its status, final); every other
method name goes to the v0.3 dialect (``tasks/get`` and ``tasks/cancel`` are
also v0.3 names: they answer a Task in v0.1 when the task was created in v0.1,
legacy digest §6.2). Errors are v0.1 JSON-RPC error objects (C14).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from a2a_grpc.bindings._http.errors import GatewayAbort, jsonrpc_error, status_of
from a2a_grpc.dialects import _v01 as v01
from a2a_grpc.dialects._jsonrpc import Envelope as V03Envelope
from a2a_grpc.dialects._jsonrpc import JsonRpcDialect, V03Context, respond, version_error
from a2a_grpc.dialects._v03 import Method
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb

__all__ = ["V01Calls", "V01Context", "V01JsonRpc"]

Json = dict[str, Any]


class V01Context(V03Context):
    """The servicer's context of a v0.1 call: as a v0.3 one (sent on as
    ``A2A-Version: 1.0``), plus ``client_task_ids`` (C3), which the servicer
    copies into :attr:`a2a_grpc.context.CallContext.client_task_ids`. Its
    ``dialect`` is ``0.1``: push configs set through it record that, and get
    the v1.0 body until the dispatcher has a v0.1 one (docs/dialects.md)."""

    client_task_ids = True
    dialect = "0.1"

    def __init__(self, request: web.Request, binding: str) -> None:
        super().__init__(request)
        self.binding = binding


def failure(exc: BaseException) -> A2AError:
    """The A2AError of a servicer failure (a gateway abort or an A2AError)."""
    return A2AError.from_status(status_of(exc))


def _history_asked(params: Json) -> int:
    value = params.get("historyLength")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class V01Calls:
    """The v0.1 operations on ``servicer``; each raises A2AError (INVALID_PARAMS
    for params that do not fit, and whatever the v1.0 RPC raises)."""

    def __init__(self, servicer: Any) -> None:
        self.servicer = servicer

    @staticmethod
    def send_request(params: Any) -> pb.SendMessageRequest:
        """The v1.0 SendMessageRequest of v0.1 ``TaskSendParams``."""
        return protojson.parse(v01.DIALECT.up("SendMessageRequest", params), pb.SendMessageRequest())

    async def send(self, params: Any, ctx: V01Context) -> Json:
        """``tasks/send``: the v0.1 Task once it is terminal or interrupted (C6)."""
        req = self.send_request(params)
        try:
            resp = await self.servicer.SendMessage(req, ctx)
        except (GatewayAbort, A2AError) as exc:
            raise failure(exc) from None
        value = protojson.to_dict(resp)
        if "message" in value:
            return v01.reply_task(req.message.task_id, req.message.context_id, value["message"])
        return v01.task(value["task"], history=bool(_history_asked(params)))

    def stream(self, req: pb.SendMessageRequest, ctx: V01Context) -> AsyncIterator[Any]:
        """The v1.0 ``SendStreamingMessage`` events of ``req`` (protos)."""
        result: AsyncIterator[Any] = self.servicer.SendStreamingMessage(req, ctx)
        return result

    async def get(self, task_id: str, ctx: V01Context, history: int = 0) -> Json:
        """The v0.1 Task ``task_id`` (with its last ``history`` messages when > 0)."""
        req = pb.GetTaskRequest(id=task_id)
        if history:
            req.history_length = history
        try:
            got = await self.servicer.GetTask(req, ctx)
        except (GatewayAbort, A2AError) as exc:
            raise failure(exc) from None
        return v01.task(protojson.to_dict(got), history=bool(history))

    async def cancel(self, task_id: str, ctx: V01Context) -> Json:
        """``tasks/cancel``: the v0.1 Task, canceled."""
        try:
            got = await self.servicer.CancelTask(pb.CancelTaskRequest(id=task_id), ctx)
        except (GatewayAbort, A2AError) as exc:
            raise failure(exc) from None
        return v01.task(protojson.to_dict(got), history=False)

    async def snapshots(self, params: Any, ctx: V01Context) -> AsyncIterator[Json]:
        """``POST /tasks/sendSubscribe`` of the tutorial (C18): the whole v0.1
        Task after each v1.0 event, read back with GetTask (consecutive equal
        snapshots are sent once); a direct Message reply is one completed Task."""
        req = self.send_request(params)
        history = _history_asked(params)
        last: Json | None = None
        async for event in self.stream(req, ctx):
            kind = event.WhichOneof("payload")
            if kind == "message":
                msg = protojson.to_dict(event.message)
                yield v01.reply_task(req.message.task_id, req.message.context_id, msg)
                return
            if kind == "task" and not history:
                snapshot = v01.task(protojson.to_dict(event.task), history=False)
            else:
                task_id = event.task.id if kind == "task" else getattr(event, kind).task_id
                snapshot = await self.get(task_id, ctx, history)
            if snapshot != last:
                last = snapshot
                yield snapshot


class V01JsonRpc:
    """The v0.1 JSON-RPC methods in front of ``fallback`` (the v0.3
    :class:`~a2a_grpc.dialects._jsonrpc.JsonRpcDialect`): what
    :class:`a2a_grpc.bindings._http.jsonrpc.JsonRpcBinding` asks about a method name
    the v1.0 service does not have."""

    def __init__(
        self,
        servicer: Any,
        fallback: JsonRpcDialect,
        *,
        keepalive: float = 15.0,
        stopping: asyncio.Event | None = None,
    ) -> None:
        self.calls = V01Calls(servicer)
        self.servicer = servicer
        self.fallback = fallback
        self.keepalive = keepalive
        self.stopping = stopping

    def lookup(self, name: str) -> Method | None:
        """The v0.1 or v0.3 method called ``name``, or None."""
        return v01.METHODS.get(name) or self.fallback.lookup(name)

    async def serve(
        self, request: web.Request, request_id: Any, method: Method, params: Any
    ) -> web.StreamResponse:
        """Answers one call; v0.3 methods are the fallback's."""
        if v01.METHODS.get(method.name) is not method:
            shared = not version_error(method, _version(request))
            answered = None
            if shared and method.name == "tasks/resubscribe":
                answered = await self._resubscribe(request, _Envelope(request_id), params)
            elif (
                shared and method.name == "tasks/get" and isinstance(params, dict) and _history_asked(params)
            ):
                answered = await self._get(request, _Envelope(request_id), params)
            if answered is not None:
                return answered
            return await self.fallback.serve(request, request_id, method, params)
        refused = version_error(method, _version(request))
        if refused is not None:  # a v1.0 (or unknown-version) caller: the v1.0 error form
            return respond({"jsonrpc": "2.0", "id": request_id, "error": jsonrpc_error(refused.to_status())})
        envelope = _Envelope(request_id)
        ctx = V01Context(request, "jsonrpc")
        try:
            if params is None:
                raise A2AError(ErrorCode.INVALID_PARAMS, f"{method.name!r} needs params")
            if method.rpc == "SendStreamingMessage":
                return await self._stream(request, envelope, params, ctx)
            result = await self._unary(method, params, ctx)
        except (GatewayAbort, A2AError) as exc:
            return envelope.error(failure(exc), ctx.response_headers())
        return envelope.result(result, ctx.response_headers())

    async def _unary(self, method: Method, params: Any, ctx: V01Context) -> Json:
        if method.rpc == "SendMessage":
            return await self.calls.send(params, ctx)
        message: Any = protojson.parse(
            v01.DIALECT.up(method.request, params), protojson.message_class(_descriptor(method.request))()
        )
        if method.rpc == "GetTaskPushNotificationConfig":
            listing = pb.ListTaskPushNotificationConfigsRequest(task_id=message.task_id)
            configs = (await self.servicer.ListTaskPushNotificationConfigs(listing, ctx)).configs
            if not configs:  # v0.1 has one webhook per task: "none set" is null (legacy digest §5.2)
                return {"id": message.task_id, "pushNotificationConfig": None}
            result = configs[0]
        else:
            result = await getattr(self.servicer, method.rpc)(message, ctx)
        return v01.DIALECT.down(method.result, protojson.to_dict(result))

    async def _get(
        self, request: web.Request, envelope: _Envelope, params: Json
    ) -> web.StreamResponse | None:
        """``tasks/get`` with a positive ``historyLength`` of a v0.1 client's
        task, in v0.1 (§6.2): the dialect is read off the whole history (the
        last messages are the agent's, which carry no mark), then the last
        ``historyLength`` are kept. None for any other task (or bad params):
        the v0.3 method answers."""
        found = await self._v01_task(request, params)
        if found is None:
            return None
        ctx, task = found
        task["history"] = task.get("history", [])[-_history_asked(params) :]
        return envelope.result(v01.task(task), ctx.response_headers())

    async def _resubscribe(
        self, request: web.Request, envelope: _Envelope, params: Any
    ) -> web.StreamResponse | None:
        """``tasks/resubscribe`` of a v0.1 client's task in v0.1 events (§6.2);
        None for any other task (or bad params): the v0.3 method answers."""
        found = await self._v01_task(request, params)
        if found is None:
            return None
        ctx, task = found
        events = self.servicer.SubscribeToTask(pb.SubscribeToTaskRequest(id=task["id"]), ctx)
        return await self._sse(request, envelope, _resubscribed(events, task), ctx)

    async def _v01_task(self, request: web.Request, params: Any) -> tuple[V01Context, Json] | None:
        """(the call's context, the task ``params["id"]`` as a ProtoJSON dict)
        when that task is a v0.1 client's (§6.2); None for any other task, a
        missing one or bad params (the v0.3 method then answers)."""
        task_id = params.get("id") if isinstance(params, dict) else None
        if not isinstance(task_id, str) or not task_id:
            return None
        ctx = V01Context(request, "jsonrpc")
        try:
            task = protojson.to_dict(await self.servicer.GetTask(pb.GetTaskRequest(id=task_id), ctx))
        except (GatewayAbort, A2AError):
            return None
        return (ctx, task) if v01.is_v01_task(task) else None

    async def _stream(
        self, request: web.Request, envelope: _Envelope, params: Any, ctx: V01Context
    ) -> web.StreamResponse:
        req = self.calls.send_request(params)
        return await self._sse(request, envelope, _events(self.calls.stream(req, ctx), req), ctx)

    async def _sse(
        self, request: web.Request, envelope: _Envelope, events: AsyncIterator[Json], ctx: V01Context
    ) -> web.StreamResponse:
        return await envelope.sse(request, events, ctx, keepalive=self.keepalive, stopping=self.stopping)


async def _events(events: AsyncIterator[Any], req: pb.SendMessageRequest) -> AsyncIterator[Json]:
    """The v0.1 events of a v1.0 stream (C16, C18), ending with a ``final``
    status event (C2); a direct Message reply is one completed, final one."""
    out = v01.Events()
    async for item in events:
        if item.WhichOneof("payload") == "message":
            reply = v01.reply_task(
                req.message.task_id, req.message.context_id, protojson.to_dict(item.message)
            )
            yield {"id": reply["id"], "status": reply["status"], "final": True}
            return
        for event in out.down(protojson.to_dict(item)):
            yield event
    closing = out.closing()
    if closing is not None:
        yield closing


async def _resubscribed(events: AsyncIterator[Any], task: Json) -> AsyncIterator[Json]:
    """The v0.1 events of a v1.0 SubscribeToTask stream of ``task``; for a
    finished task (which v1.0 refuses) its status, final (C8)."""
    out = v01.Events(closes_on_interrupt=False)
    try:
        async for item in events:
            for event in out.down(protojson.to_dict(item)):
                yield event
    except GatewayAbort as exc:
        if out.last is not None or failure(exc).code is not ErrorCode.UNSUPPORTED_OPERATION:
            raise
        for event in out.down({"task": task}):
            yield event
    closing = out.closing()
    if closing is not None:
        yield closing


def _version(request: web.Request) -> str:
    return request.headers.get("A2A-Version") or request.query.get("A2A-Version", "")


def _descriptor(name: str) -> Any:
    return pb.DESCRIPTOR.message_types_by_name[name]


class _Envelope(V03Envelope):
    """The v0.3 JSON-RPC envelope with the v0.1 error codes (C14)."""

    def error_json(self, err: A2AError) -> Json:
        return {"jsonrpc": "2.0", "id": self.request_id, "error": v01.error_object(err)}
