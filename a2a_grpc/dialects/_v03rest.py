"""A2A v0.3 over HTTP+JSON (legacy digest §3): ``/v1/...`` routes onto the v0.3 servicer.

The routes are the v0.3 proto's ``google.api.http`` annotations compiled by
the one route compiler, with the L-A3 and L-A7 corrections derived from the
annotated routes (:func:`a2a_grpc.dialects._v03proto.http_routes`; no path is
written here).

A matched request is built into the v0.3 request message (body, path
variables, query: :func:`a2a_grpc.bindings._http.rest.build_request`) and goes
through the gateway's one call path (:func:`a2a_grpc.bindings._http.invoke.invoke`)
to :class:`~a2a_grpc.dialects._v03grpc.V03Servicer` — the adapter in front of
the one v1.0 servicer. Bodies in (C13): the ProtoJSON of the v0.3 proto, or
the JSON-RPC dialect's shapes (``parts``, ``kind``-style parts, lowercase
roles), normalised to the first by the table; the create-config body as the
config itself or as ``{"config": …}`` (L-A2). Out: ProtoJSON of the v0.3
proto, ``Content-Type: application/json``, HTTP 200 (``{}`` for delete); the
push-config list is the ``{configs, nextPageToken}`` object (L-A8); streams
are SSE with one bare ``StreamResponse`` per ``data:``. Errors: the HTTP
status of the error table and the body ``{"code", "message", "data":
{"reason", …}}`` with the v0.3 JSON-RPC code (a2a-js's form; v0.3 defines
none, legacy digest §3.1).

Dialect of a ``/v1/...`` path (legacy digest §6.2): with no ``A2A-Version``
(header or query) or ``0.3``, v0.3 when a v0.3 route matches; otherwise
(``1.0``, any other version, or a path v0.3 does not have, such as ``GET
/v1/tasks``) the v1.0 binding, where ``v1`` is a tenant.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from aiohttp import web
from google.protobuf import message as _message
from google.rpc import status_pb2

from a2a_grpc.bindings._http.body import read_json
from a2a_grpc.bindings._http.invoke import invoke
from a2a_grpc.bindings._http.rest import RestBinding, build_request
from a2a_grpc.dialects import _v03 as v03
from a2a_grpc.dialects._v03grpc import V03Servicer
from a2a_grpc.dialects._v03proto import DIALECT, http_routes, named_error
from a2a_grpc.errors import A2AError, FieldViolation
from a2a_grpc.protocol import protojson
from a2a_grpc.protocol._httprule import MethodNotAllowed, RouteMatch, RouteNotFound
from a2a_grpc.types import pb

__all__ = ["CONTENT_TYPE", "V03RestBinding", "v03_requested"]

CONTENT_TYPE = "application/json"
Json = dict[str, Any]


def v03_requested(request: web.Request) -> bool:
    """True when the caller sent no ``A2A-Version`` (header, else query) or
    one whose Major.Minor is 0.3 (spec §3.6.2: absent means 0.3)."""
    version = request.headers.get("A2A-Version") or request.query.get("A2A-Version", "")
    return ".".join(version.strip().split(".")[:2]) in ("", "0.3")


def _error(err: A2AError) -> tuple[int, Json]:
    return err.code.http_status, v03.error_object(err)


def _a2a_error(status: status_pb2.Status) -> A2AError:
    """The A2AError of a status: the one its message names (the servicer's
    v0.3 form, C14), else the status's own (bad input refused before it)."""
    return named_error(status.message) or A2AError.from_status(status)


def _with_legacy_extensions(headers: Mapping[str, str] | None) -> dict[str, str]:
    out = dict(headers or {})
    if "A2A-Extensions" in out:
        out["X-A2A-Extensions"] = out["A2A-Extensions"]
    return out


class _Envelope:
    """The v0.3 HTTP+JSON answers (:class:`a2a_grpc.bindings._http.invoke.Envelope`)."""

    def result(self, message: _message.Message, headers: Mapping[str, str]) -> web.Response:
        return web.Response(
            text=protojson.to_json(message),
            content_type=CONTENT_TYPE,
            charset="utf-8",
            headers=_with_legacy_extensions(headers),
        )

    def error(self, status: status_pb2.Status, headers: Mapping[str, str] | None = None) -> web.Response:
        code, body = _error(_a2a_error(status))
        out = _with_legacy_extensions(headers)
        if code == 401:
            out.setdefault("WWW-Authenticate", "Bearer")
        return web.Response(
            status=code, text=protojson.dumps(body), content_type=CONTENT_TYPE, charset="utf-8", headers=out
        )

    def event(self, message: _message.Message) -> str:
        return protojson.to_json(message)

    def stream_error(self, status: status_pb2.Status) -> str:
        return protojson.dumps(_error(_a2a_error(status))[1])


_ENVELOPE = _Envelope()
#: RPCs whose body carries a Message: normalised through the table (C13).
_NORMALISED = {"SendMessage": "SendMessageRequest", "SendStreamingMessage": "SendMessageRequest"}


class V03RestBinding:
    """Serves ``/v1/...`` (under the gateway's prefix): v0.3 onto ``servicer``
    (the v1.0 A2AServicer, behind a :class:`V03Servicer` serving ``card``,
    the public card as served), everything that is not v0.3 onto the v1.0
    ``fallback`` binding."""

    def __init__(
        self,
        servicer: Any,
        fallback: RestBinding,
        card: Callable[[], pb.AgentCard],
        *,
        prefix: str = "",
        keepalive: float = 15.0,
        stopping: asyncio.Event | None = None,
    ) -> None:
        self.servicer = V03Servicer(servicer, card)
        self.fallback = fallback
        self.table = http_routes()
        self.prefix = prefix.rstrip("/")
        self.keepalive = keepalive
        self.stopping = stopping

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """aiohttp handler of every path under ``{prefix}/v1/``."""
        found = self._match(request) if v03_requested(request) else None
        if found is None:
            return await self.fallback.handle(request)
        try:
            message = await _read(request, found)
        except A2AError as bad:
            return _ENVELOPE.error(bad.to_status())
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

    def _match(self, request: web.Request) -> RouteMatch | None:
        raw_path = request.rel_url.raw_path[len(self.prefix) :] or "/"
        try:
            return self.table.match(request.method, raw_path)
        except (RouteNotFound, MethodNotAllowed, UnicodeDecodeError):
            return None  # the v1.0 binding answers (404, 405, 400 or tenant "v1")


async def _read(request: web.Request, found: RouteMatch) -> _message.Message:
    """The v0.3 request message of a matched route (L-A2, C13). Raises A2AError."""
    route = found.route
    data = None
    if route.body or request.can_read_body:
        data = await read_json(request)
    if not route.body:
        data = None  # a GET/DELETE body, or the POST subscribe's ``{"name": …}`` (L-A7): path wins
    rule = _NORMALISED.get(route.method.name)
    if rule is not None and data is not None:
        data = DIALECT.down(rule, DIALECT.up(rule, data))
    if (
        route.method.name == "CreateTaskPushNotificationConfig"
        and isinstance(data, dict)
        and "config" in data
    ):
        route = dataclasses.replace(route, body="*")  # L-A2: the request form {"config": …}
    if route.body == "config" and data is not None and not isinstance(data, dict):
        raise A2AError.invalid_params(FieldViolation("config", "must be a JSON object"))
    return build_request(RouteMatch(route, found.path_params), data, request.query)
