"""The aiohttp application serving JSON-RPC, HTTP+JSON and the Agent Card.

:func:`create_app` mounts, onto the very servicer object the gRPC server runs:

* JSON-RPC 2.0 at ``POST jsonrpc_path`` (:mod:`a2a_grpc.gateway.jsonrpc`);
* HTTP+JSON at ``rest_prefix`` + the paths of the proto's ``google.api.http``
  rules, compiled at start-up (:mod:`a2a_grpc.httprule`, :mod:`a2a_grpc.gateway.rest`);
* A2A v0.3: its JSON-RPC methods at the same JSON-RPC URL
  (:mod:`a2a_grpc.compat.jsonrpc`) and its HTTP+JSON routes under
  ``rest_prefix + "/v1/"`` (:mod:`a2a_grpc.compat.v03rest`; a ``/v1/...``
  request with ``A2A-Version: 1.0`` is v1.0 with the tenant ``v1``);
* the public Agent Card at ``/.well-known/agent-card.json`` and the legacy
  ``/.well-known/agent.json`` (:mod:`a2a_grpc.gateway.card`).

On shutdown, open SSE streams end cleanly (their generators are closed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from a2a_grpc.compat.jsonrpc import JsonRpcDialect
from a2a_grpc.compat.v03 import card_json
from a2a_grpc.compat.v03rest import V03RestBinding
from a2a_grpc.gateway.body import MAX_BODY_KEY, MAX_MESSAGE_KEY
from a2a_grpc.gateway.card import CardEndpoint
from a2a_grpc.gateway.fallback import json_errors
from a2a_grpc.gateway.jsonrpc import JsonRpcBinding
from a2a_grpc.gateway.rest import RestBinding
from a2a_grpc.httprule import RouteTable, compile_service
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


def _add_card_and_metrics(
    app: web.Application,
    card: CardEndpoint,
    metrics: Callable[[web.Request], Awaitable[web.StreamResponse]] | None,
) -> None:
    """The Agent Card at its well-known paths, and ``GET /metrics`` when
    given (both ahead of the REST catch-all)."""
    for path in CARD_PATHS:
        app.router.add_get(path, card.handle)
    if metrics is not None:
        app.router.add_get("/metrics", metrics)


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

    ``servicer`` is an ``a2a_grpc.servicer.A2AServicer`` (any object with the
    generated method names taking ``(request, context)``); ``card_source`` a
    zero-argument callable returning the current public ``pb.AgentCard``.
    ``keepalive_seconds``: the SSE keep-alive interval; ``card_max_age_seconds``:
    the card's ``Cache-Control: max-age``; ``max_body_bytes``: the largest
    request body (larger: PAYLOAD_TOO_LARGE, HTTP 413), derived from the
    ``max_message_bytes`` that error names; ``metrics``: the handler of ``GET
    /metrics`` (:meth:`a2a_grpc.telemetry.metrics.Metrics.handle`). What aiohttp
    would answer in text/plain is answered in JSON (:mod:`a2a_grpc.gateway.fallback`).
    """
    if not jsonrpc_path.startswith("/"):
        raise ValueError(f"jsonrpc_path must start with '/': {jsonrpc_path!r}")
    prefix = rest_prefix.rstrip("/")
    if prefix and not prefix.startswith("/"):
        raise ValueError(f"rest_prefix must start with '/': {rest_prefix!r}")
    service = pb.DESCRIPTOR.services_by_name["A2AService"]
    table = compile_service(service)
    stopping = asyncio.Event()

    app = web.Application(client_max_size=max_body_bytes, middlewares=[json_errors(jsonrpc_path)])
    app[SERVICER_KEY], app[ROUTES_KEY], app[STOPPING_KEY] = servicer, table, stopping
    app[MAX_BODY_KEY], app[MAX_MESSAGE_KEY] = max_body_bytes, max_message_bytes or 0  # 0: not known
    _add_card_and_metrics(
        app, CardEndpoint(card_source, max_age_seconds=card_max_age_seconds, render=_card_json), metrics
    )

    v03 = JsonRpcDialect(servicer, keepalive=keepalive_seconds, stopping=stopping)
    jsonrpc = JsonRpcBinding(servicer, service, keepalive=keepalive_seconds, stopping=stopping, dialect=v03)
    app.router.add_post(jsonrpc_path, jsonrpc.handle)

    rest = RestBinding(
        servicer,
        table,
        prefix=prefix,
        keepalive=keepalive_seconds,
        stopping=stopping,
        jsonrpc_path=jsonrpc_path,
    )
    legacy = V03RestBinding(servicer, rest, prefix=prefix, keepalive=keepalive_seconds, stopping=stopping)
    app.router.add_route("*", prefix + "/v1/{tail:[\\s\\S]*}", legacy.handle)  # v0.3, else tenant "v1"
    app.router.add_route("*", prefix + "/{tail:[\\s\\S]*}", rest.handle)  # not ".": /tasks/a%0Ab

    async def _on_shutdown(_: web.Application) -> None:
        stopping.set()

    app.on_shutdown.append(_on_shutdown)
    return app
