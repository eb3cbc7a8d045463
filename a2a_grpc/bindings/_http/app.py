"""The aiohttp application serving JSON-RPC, HTTP+JSON and the Agent Card.

:func:`create_app` mounts, onto the very servicer object the gRPC server runs:

* JSON-RPC 2.0 at ``POST jsonrpc_path`` (:mod:`a2a_grpc.bindings._http.jsonrpc`);
* HTTP+JSON at ``rest_prefix`` + the paths of the proto's ``google.api.http``
  rules, compiled at start-up (:mod:`a2a_grpc.protocol._httprule`, :mod:`a2a_grpc.bindings._http.rest`);
* the legacy dialects (:mod:`a2a_grpc.dialects`): the v0.3 and v0.1 JSON-RPC
  methods at the same JSON-RPC URL (:mod:`a2a_grpc.dialects._jsonrpc`,
  :mod:`a2a_grpc.dialects._v01calls`), the v0.3 HTTP+JSON routes under
  ``rest_prefix + "/v1/"`` (:mod:`a2a_grpc.dialects._v03rest`; a ``/v1/...``
  request with ``A2A-Version: 1.0`` is v1.0 with the tenant ``v1``), and the
  tutorial's ``/tasks/send`` routes (:mod:`a2a_grpc.dialects._tutorial`);
* the public Agent Card at ``/.well-known/agent-card.json`` and the legacy
  ``/.well-known/agent.json`` (v0.1 fields added, :func:`a2a_grpc.dialects._v01.card`;
  :mod:`a2a_grpc.bindings._http.card`).

On shutdown, open SSE streams end cleanly (their generators are closed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from a2a_grpc.bindings._http.body import MAX_BODY_KEY, MAX_MESSAGE_KEY
from a2a_grpc.bindings._http.card import CardEndpoint
from a2a_grpc.bindings._http.fallback import UNROUTED_PATH, Handler, guarded, unrouted
from a2a_grpc.bindings._http.jsonrpc import JsonRpcBinding
from a2a_grpc.bindings._http.rest import RestBinding
from a2a_grpc.dialects import _v01 as v01
from a2a_grpc.dialects._jsonrpc import JsonRpcDialect
from a2a_grpc.dialects._tutorial import TutorialRoutes
from a2a_grpc.dialects._v01calls import V01JsonRpc
from a2a_grpc.dialects._v03 import card_json
from a2a_grpc.dialects._v03rest import V03RestBinding
from a2a_grpc.protocol import protojson
from a2a_grpc.protocol._httprule import RouteTable, compile_service
from a2a_grpc.types import pb

__all__ = [
    "CARD_PATHS",
    "ROUTES_KEY",
    "SERVICER_KEY",
    "STOPPING_KEY",
    "create_app",
]

#: Where the public Agent Card is served (spec §8.2; legacy v0.2 path second).
CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")

SERVICER_KEY = web.AppKey("a2a_servicer", object)
ROUTES_KEY = web.AppKey("a2a_routes", RouteTable)
STOPPING_KEY = web.AppKey("a2a_stopping", asyncio.Event)

#: Default limit of a request body: a 16 MiB gRPC message grows by a third in base64.
DEFAULT_MAX_BODY_BYTES = 24 * 1024 * 1024


def _card_json(card: pb.AgentCard, request: web.Request) -> str:
    """The card in the dialect of the caller's ``A2A-Version`` (header or query)."""
    return card_json(card, request.headers.get("A2A-Version") or request.query.get("A2A-Version", ""))


def _v01_card_json(jsonrpc_path: str) -> Callable[[pb.AgentCard, web.Request], str]:
    """The card at ``/.well-known/agent.json``: the pure v1.0 card for
    ``A2A-Version: 1.x``, else the v0.3 hybrid card plus the v0.1 fields."""

    def render(card: pb.AgentCard, request: web.Request) -> str:
        version = request.headers.get("A2A-Version") or request.query.get("A2A-Version", "")
        if version.strip().startswith("1."):
            return protojson.to_json(card)
        url = str(request.url.with_path(jsonrpc_path).with_query(None))
        return protojson.dumps(v01.card(protojson.to_dict(card), url))

    return render


def _add_card_and_metrics(
    app: web.Application,
    cards: tuple[CardEndpoint, CardEndpoint],
    metrics: Callable[[web.Request], Awaitable[web.StreamResponse]] | None,
    guard: Callable[[Handler], Handler],
) -> None:
    """The Agent Card at its well-known paths (one endpoint each, in
    CARD_PATHS order), and ``GET /metrics`` when given (both ahead of the
    REST catch-all)."""
    for path, card in zip(CARD_PATHS, cards, strict=True):
        app.router.add_get(path, guard(card.handle))
    if metrics is not None:
        app.router.add_get("/metrics", guard(metrics))


def create_app(
    servicer: Any,
    card_source: Callable[[], pb.AgentCard],
    *,
    jsonrpc_path: str = "/",
    rest_prefix: str = "",
    keepalive_seconds: float = 15.0,
    card_max_age_seconds: int = 300,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_message_bytes: int | None = None,
    metrics: Callable[[web.Request], Awaitable[web.StreamResponse]] | None = None,
) -> web.Application:
    """Builds the gateway application.

    ``servicer`` is an ``a2a_grpc.bindings._servicer.A2AServicer`` (any object with the
    generated method names taking ``(request, context)``); ``card_source`` a
    zero-argument callable returning the current public ``pb.AgentCard``.
    ``keepalive_seconds``: the SSE keep-alive interval; ``card_max_age_seconds``:
    the card's ``Cache-Control: max-age``; ``max_body_bytes``: the largest
    request body (larger: PAYLOAD_TOO_LARGE, HTTP 413), derived from the
    ``max_message_bytes`` that error names; ``metrics``: the handler of ``GET
    /metrics`` (:meth:`a2a_grpc.telemetry._metrics.Metrics.handle`). What aiohttp
    would answer in text/plain is answered in JSON (:mod:`a2a_grpc.bindings._http.fallback`).
    """
    if not jsonrpc_path.startswith("/"):
        raise ValueError(f"jsonrpc_path must start with '/': {jsonrpc_path!r}")
    prefix = rest_prefix.rstrip("/")
    if prefix and not prefix.startswith("/"):
        raise ValueError(f"rest_prefix must start with '/': {rest_prefix!r}")
    service = pb.DESCRIPTOR.services_by_name["A2AService"]
    table = compile_service(service)
    stopping = asyncio.Event()

    app = web.Application(client_max_size=max_body_bytes)
    app[SERVICER_KEY], app[ROUTES_KEY], app[STOPPING_KEY] = servicer, table, stopping
    app[MAX_BODY_KEY], app[MAX_MESSAGE_KEY] = max_body_bytes, max_message_bytes or 0  # 0: not known
    cards = (
        CardEndpoint(card_source, max_age_seconds=card_max_age_seconds, render=_card_json),
        CardEndpoint(card_source, max_age_seconds=card_max_age_seconds, render=_v01_card_json(jsonrpc_path)),
    )

    def guard(handler: Handler) -> Handler:
        return guarded(handler, jsonrpc_path)

    _add_card_and_metrics(app, cards, metrics, guard)
    _add_bindings(app, servicer, service, jsonrpc_path, prefix, keepalive_seconds, stopping, guard)
    if prefix:  # else the REST catch-all takes every path
        app.router.add_route("*", UNROUTED_PATH, guard(unrouted(app)))

    async def _on_shutdown(_: web.Application) -> None:
        stopping.set()

    app.on_shutdown.append(_on_shutdown)
    return app


def _add_bindings(
    app: web.Application,
    servicer: Any,
    service: Any,
    jsonrpc_path: str,
    prefix: str,
    keepalive: float,
    stopping: asyncio.Event,
    guard: Callable[[Handler], Handler],
) -> None:
    """JSON-RPC (v1.0, then the v0.1 and v0.3 methods) at ``jsonrpc_path``;
    the tutorial's routes, the v0.3 HTTP+JSON routes under ``/v1/`` and the
    v1.0 HTTP+JSON catch-all, in that order, under ``prefix``."""
    v03 = JsonRpcDialect(servicer, keepalive=keepalive, stopping=stopping)
    legacy = V01JsonRpc(servicer, v03, keepalive=keepalive, stopping=stopping)
    jsonrpc = JsonRpcBinding(servicer, service, keepalive=keepalive, stopping=stopping, dialect=legacy)
    app.router.add_post(jsonrpc_path, guard(jsonrpc.handle))

    rest = RestBinding(
        servicer,
        app[ROUTES_KEY],
        prefix=prefix,
        keepalive=keepalive,
        stopping=stopping,
        jsonrpc_path=jsonrpc_path,
    )
    tutorial = TutorialRoutes(
        servicer, None if prefix else rest.handle, keepalive=keepalive, stopping=stopping
    )
    tutorial.add_to(app, guard)  # ahead of the catch-all: GET /tasks/{id} is shared (compat.tutorial)
    v03rest = V03RestBinding(servicer, rest, prefix=prefix, keepalive=keepalive, stopping=stopping)
    app.router.add_route("*", prefix + "/v1" + UNROUTED_PATH, guard(v03rest.handle))  # v0.3, else tenant "v1"
    app.router.add_route("*", prefix + UNROUTED_PATH, guard(rest.handle))
