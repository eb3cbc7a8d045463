"""The tutorial's plain-HTTP rendering of A2A v0.1 (legacy digest §5.10), on the v1.0 servicer.

Routes (objects in v0.1 JSON, :mod:`a2a_grpc.dialects._v01`; the calls are
:class:`~a2a_grpc.dialects._v01calls.V01Calls`, so the whole interceptor chain
runs — authentication included — as for a v1.0 call):

* ``POST /tasks/send`` — body ``TaskSendParams`` (``{"id": <client-chosen
  task id>, "sessionId"?, "message": {"role", "parts"}, "historyLength"?,
  "metadata"?}``): creates the task under that id, or continues it (same
  caller); answers the Task once it is terminal or interrupted;
* ``POST /tasks/{id}/send`` — the same, the id taken from the path (a
  different ``id`` in the body is refused);
* ``POST /tasks/sendSubscribe`` — the same body; ``text/event-stream`` whose
  every event is ``data: <the whole Task>`` after each change (C18);
* ``GET /tasks/{id}`` (``?historyLength=N``) — the Task;
* ``POST /tasks/{id}/cancel`` — the Task, ``canceled``.

A Task carries ``history`` only when ``historyLength`` > 0 asked for it.
Errors are FastAPI-style ``{"detail": "<text>"}`` with the HTTP status of
the error table (404 unknown task, 400 bad input or a task that cannot be
canceled, 401 with ``WWW-Authenticate`` / 403 from authentication, 500).

Version rule (legacy digest §6.2, §6.3): ``GET /tasks/{id}`` is also a v1.0
HTTP+JSON path. Without ``A2A-Version`` (which means 0.3, spec §3.6.2, and
0.3 has no such path; the tutorial's clients, older than the header, send
none) it is the tutorial's; with any ``A2A-Version`` it — like every route
here — is the v1.0 binding's, which serves ``1.x`` (the v1.0 Task; 404 or 405
for the paths and methods it does not have, whatever the version) and
refuses other versions with VersionNotSupportedError (``0.3`` included:
0.3 has no such path). Under a
REST prefix no v1.0 route shares these paths and the header is not read. With ``--lenient-version`` (a missing header
means 1.0) a header-less ``GET /tasks/{id}`` follows the task's recorded
dialect instead: the tutorial's for a task a v0.1 client created
(:func:`a2a_grpc.dialects._v01.is_v01_task`), v1.0's for any other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from a2a_grpc.bindings._http.body import read_json
from a2a_grpc.bindings._http.errors import GatewayAbort
from a2a_grpc.bindings._http.sse import stream
from a2a_grpc.dialects import _v01 as v01
from a2a_grpc.dialects._v01calls import V01Calls, V01Context, failure
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb

__all__ = ["TutorialRoutes"]

Json = dict[str, Any]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: The path variable of a task id: no ``/`` and no ``:`` (``/tasks/{id}:subscribe`` is v1.0's).
_ID = "{id:[^/:]+}"
#: The largest ``historyLength`` (an int32 in the v1.0 proto).
_INT32_MAX = 2**31 - 1


def detail_response(err: A2AError, headers: dict[str, str] | None = None) -> web.Response:
    """``{"detail": <message>}`` with the error table's HTTP status."""
    headers = dict(headers or {})
    if err.code is ErrorCode.UNAUTHENTICATED:
        headers.setdefault("WWW-Authenticate", "Bearer")
    return web.json_response(
        {"detail": err.message}, status=err.code.http_status, headers=headers, dumps=protojson.dumps
    )


def _version(request: web.Request) -> str:
    return (request.headers.get("A2A-Version") or request.query.get("A2A-Version", "")).strip()


async def _body(request: web.Request) -> Json:
    data = await read_json(request)
    if not isinstance(data, dict):
        raise A2AError.invalid_params(FieldViolation("body", "must be a JSON object (TaskSendParams)"))
    return data


def _history(request: web.Request) -> int:
    raw = request.query.get("historyLength", "0")
    if not (raw.isascii() and raw.isdigit()) or int(raw) > _INT32_MAX:
        raise A2AError.invalid_params(
            FieldViolation("historyLength", f"must be an integer from 0 to {_INT32_MAX}")
        )
    return int(raw)


class TutorialRoutes:
    """The tutorial's routes onto ``servicer``; ``v1`` is the v1.0 HTTP+JSON
    handler that requests with ``A2A-Version: 1.x`` are handed to (None: no
    v1.0 route shares these paths, e.g. under a REST prefix)."""

    def __init__(
        self,
        servicer: Any,
        v1: Handler | None = None,
        *,
        keepalive: float = 15.0,
        stopping: asyncio.Event | None = None,
    ) -> None:
        self.calls = V01Calls(servicer)
        self.v1 = v1
        self.keepalive = keepalive
        self.stopping = stopping

    def routes(self) -> list[tuple[str, str, Handler]]:
        """The routes as (method, path, handler), to go ahead of the v1.0
        catch-all (:meth:`a2a_grpc.bindings._http.app.Gateway.add_route`)."""
        return [
            ("POST", "/tasks/send", self._wrap(self._send)),
            ("POST", "/tasks/sendSubscribe", self._wrap(self._subscribe)),
            ("GET", f"/tasks/{_ID}", self._wrap(self._get, shared=True)),
            ("POST", f"/tasks/{_ID}/cancel", self._wrap(self._cancel)),
            ("POST", f"/tasks/{_ID}/send", self._wrap(self._send)),
        ]

    def _lenient(self) -> bool:
        """Whether the server serves a request without ``A2A-Version`` as 1.0."""
        config = getattr(getattr(self.calls.servicer, "handler", None), "config", None)
        return getattr(config, "strict_version", True) is False

    async def _is_v01_task(self, request: web.Request, ctx: V01Context) -> bool:
        try:
            got = await self.calls.servicer.GetTask(pb.GetTaskRequest(id=request.match_info["id"]), ctx)
        except (GatewayAbort, A2AError):
            return False  # the v1.0 binding answers the error in its own form
        return v01.is_v01_task(protojson.to_dict(got))

    def _wrap(
        self, call: Callable[[web.Request, V01Context], Awaitable[Any]], *, shared: bool = False
    ) -> Handler:
        async def handle(request: web.Request) -> web.StreamResponse:
            if self.v1 is not None and _version(request):
                return await self.v1(request)  # 1.x is served there, any other version refused
            ctx = V01Context(request, "rest")
            lenient = shared and self.v1 is not None and self._lenient()
            if lenient and not await self._is_v01_task(request, ctx):
                assert self.v1 is not None
                return await self.v1(request)
            try:
                result = await call(request, ctx)
            except (GatewayAbort, A2AError) as exc:
                return detail_response(failure(exc), ctx.response_headers())
            if isinstance(result, web.StreamResponse):
                return result
            return web.json_response(result, headers=ctx.response_headers(), dumps=protojson.dumps)

        return handle

    async def _send(self, request: web.Request, ctx: V01Context) -> Json:
        return await self.calls.send(_with_path_id(request, await _body(request)), ctx)

    async def _get(self, request: web.Request, ctx: V01Context) -> Json:
        return await self.calls.get(request.match_info["id"], ctx, _history(request))

    async def _cancel(self, request: web.Request, ctx: V01Context) -> Json:
        if request.can_read_body:
            await read_json(request)  # refuses a body that is not JSON; TaskIdParams adds nothing
        return await self.calls.cancel(request.match_info["id"], ctx)

    async def _subscribe(self, request: web.Request, ctx: V01Context) -> web.StreamResponse:
        params = await _body(request)
        self.calls.send_request(params)  # bad params: a 400 before the stream starts

        def encode_error(status: Any) -> str:
            return protojson.dumps({"detail": A2AError.from_status(status).message})

        return await stream(
            request,
            self.calls.snapshots(params, ctx),
            encode_event=protojson.dumps,
            encode_error=encode_error,
            error_response=lambda st: detail_response(A2AError.from_status(st), ctx.response_headers()),
            headers=ctx.response_headers,
            keepalive=self.keepalive,
            on_disconnect=ctx.mark_cancelled,
            stopping=self.stopping,
        )


def _with_path_id(request: web.Request, body: Json) -> Json:
    """``POST /tasks/{id}/send``: the body with the path's task id."""
    path_id = request.match_info.get("id")
    if path_id is None:
        return body
    if body.get("id", path_id) != path_id:
        raise A2AError.invalid_params(FieldViolation("id", f"must be the task id of the path, {path_id!r}"))
    return {**body, "id": path_id}
