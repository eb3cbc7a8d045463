"""The aiohttp application serving JSON-RPC, HTTP+JSON and the Agent Card.

:func:`create_app` mounts, onto the very servicer object the gRPC server runs:

* JSON-RPC 2.0 at ``POST jsonrpc_path`` (:mod:`a2a_grpc.bindings._http.jsonrpc`);
* HTTP+JSON at ``rest_prefix`` + the paths of the proto's ``google.api.http``
  rules, compiled at start-up (:mod:`a2a_grpc.protocol._httprule`, :mod:`a2a_grpc.bindings._http.rest`);
* the public Agent Card at ``/.well-known/agent-card.json`` and the legacy
  ``/.well-known/agent.json`` (:mod:`a2a_grpc.bindings._http.card`);
* what the ``mounts`` add: each is called with the :class:`Gateway` being
  built, and may add routes (ahead of the HTTP+JSON catch-all), the
  JSON-RPC methods the v1.0 service does not have, and how each card path
  renders the card. The server's features give them (the legacy dialects:
  :mod:`a2a_grpc.dialects`; ``GET /metrics``: :mod:`a2a_grpc.telemetry`), so
  the bindings import neither.

On shutdown, open SSE streams end cleanly (their generators are closed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from aiohttp import web

from a2a_grpc.bindings._http.body import MAX_BODY_KEY, MAX_MESSAGE_KEY
from a2a_grpc.bindings._http.card import CardEndpoint
from a2a_grpc.bindings._http.fallback import UNROUTED_PATH, Handler, guarded, unrouted
from a2a_grpc.bindings._http.jsonrpc import JsonRpcBinding
from a2a_grpc.bindings._http.rest import RestBinding
from a2a_grpc.protocol._httprule import RouteTable, compile_service
from a2a_grpc.types import pb

__all__ = [
    "CARD_PATHS",
    "ROUTES_KEY",
    "SERVICER_KEY",
    "STOPPING_KEY",
    "CardRender",
    "Gateway",
    "Mount",
    "create_app",
]

#: Where the public Agent Card is served (spec §8.2; legacy v0.2 path second).
CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")

SERVICER_KEY = web.AppKey("a2a_servicer", object)
ROUTES_KEY = web.AppKey("a2a_routes", RouteTable)
STOPPING_KEY = web.AppKey("a2a_stopping", asyncio.Event)

#: Default limit of a request body: a 16 MiB gRPC message grows by a third in base64.
DEFAULT_MAX_BODY_BYTES = 24 * 1024 * 1024

#: Renders the card for one request (the JSON text served).
CardRender = Callable[[pb.AgentCard, web.Request], str]


class Gateway:
    """The gateway being built, as a mount sees it.

    ``servicer`` (the v1.0 A2AServicer), ``card`` (the served card's source),
    ``rest`` (the v1.0 HTTP+JSON binding: what a mount does not serve goes
    there), ``prefix``, ``jsonrpc_path``, ``keepalive`` (SSE keep-alive
    seconds) and ``stopping`` (set at shutdown) are what a mount builds on;
    :meth:`add_route`, :meth:`add_jsonrpc_methods` and :meth:`render_card`
    are what it adds. :func:`create_app` registers it all once every mount
    has run: the card paths, JSON-RPC, the mounts' routes in their order,
    then the HTTP+JSON catch-all."""

    def __init__(
        self,
        servicer: Any,
        card: Callable[[], pb.AgentCard],
        rest: RestBinding,
        *,
        prefix: str,
        jsonrpc_path: str,
        keepalive: float,
        stopping: asyncio.Event,
    ) -> None:
        self.servicer = servicer
        self.card = card
        self.rest = rest
        self.prefix = prefix
        self.jsonrpc_path = jsonrpc_path
        self.keepalive = keepalive
        self.stopping = stopping
        self.routes: list[tuple[str, str, Handler]] = []
        self.jsonrpc_methods: Any = None
        self.card_renders: dict[str, CardRender] = {}

    def add_route(self, method: str, path: str, handler: Handler) -> None:
        """Serves ``method`` (``*``: any; ``GET``: HEAD too) ``path`` with
        ``handler`` (answering in JSON what it raises:
        :func:`~a2a_grpc.bindings._http.fallback.guarded`)."""
        self.routes.append((method, path, handler))

    def add_jsonrpc_methods(self, dialect: Any) -> None:
        """``dialect`` answers the JSON-RPC methods the v1.0 service does not
        have (``lookup(name)`` and ``serve(...)``, see
        :class:`~a2a_grpc.bindings._http.jsonrpc.JsonRpcBinding`); one only.
        Raises ValueError for a second one."""
        if self.jsonrpc_methods is not None:
            raise ValueError("the JSON-RPC URL already serves another dialect")
        self.jsonrpc_methods = dialect

    def render_card(self, path: str, render: CardRender) -> None:
        """``render`` turns the card into what ``path`` (one of
        :data:`CARD_PATHS`) serves (default: its ProtoJSON)."""
        if path not in CARD_PATHS:
            raise ValueError(f"{path!r} is not a card path ({', '.join(CARD_PATHS)})")
        self.card_renders[path] = render


#: Adds to the gateway being built (see :class:`Gateway`).
Mount = Callable[[Gateway], None]


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
    mounts: Sequence[Mount] = (),
) -> web.Application:
    """Builds the gateway application.

    ``servicer`` is an ``a2a_grpc.bindings._servicer.A2AServicer`` (any object with the
    generated method names taking ``(request, context)``); ``card_source`` a
    zero-argument callable returning the current public ``pb.AgentCard``.
    ``keepalive_seconds``: the SSE keep-alive interval; ``card_max_age_seconds``:
    the card's ``Cache-Control: max-age``; ``max_body_bytes``: the largest
    request body (larger: PAYLOAD_TOO_LARGE, HTTP 413), derived from the
    ``max_message_bytes`` that error names; ``mounts``: see :class:`Gateway`.
    What aiohttp would answer in text/plain is answered in JSON
    (:mod:`a2a_grpc.bindings._http.fallback`). Raises ValueError for a bad
    path or prefix.
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
    rest = RestBinding(
        servicer,
        table,
        prefix=prefix,
        keepalive=keepalive_seconds,
        stopping=stopping,
        jsonrpc_path=jsonrpc_path,
    )
    gateway = Gateway(
        servicer,
        card_source,
        rest,
        prefix=prefix,
        jsonrpc_path=jsonrpc_path,
        keepalive=keepalive_seconds,
        stopping=stopping,
    )
    for mount in mounts:
        mount(gateway)
    _add_routes(app, gateway, service, card_max_age_seconds)

    async def _on_shutdown(_: web.Application) -> None:
        stopping.set()

    app.on_shutdown.append(_on_shutdown)
    return app


def _add_routes(app: web.Application, gateway: Gateway, service: Any, card_max_age: int) -> None:
    """The card paths (one endpoint each, in CARD_PATHS order), JSON-RPC at
    its URL, the mounts' routes in their order, and last the v1.0 HTTP+JSON
    catch-all under the prefix (with a prefix, a JSON 404/405 for the
    paths outside it)."""

    def guard(handler: Handler) -> Handler:
        return guarded(handler, gateway.jsonrpc_path)

    for path in CARD_PATHS:
        card = CardEndpoint(gateway.card, max_age_seconds=card_max_age, render=gateway.card_renders.get(path))
        app.router.add_get(path, guard(card.handle))
    jsonrpc = JsonRpcBinding(
        gateway.servicer,
        service,
        keepalive=gateway.keepalive,
        stopping=gateway.stopping,
        dialect=gateway.jsonrpc_methods,
    )
    app.router.add_post(gateway.jsonrpc_path, guard(jsonrpc.handle))
    for method, path, handler in gateway.routes:
        if method == "GET":
            app.router.add_get(path, guard(handler))  # (HEAD too)
        else:
            app.router.add_route(method, path, guard(handler))
    app.router.add_route("*", gateway.prefix + UNROUTED_PATH, guard(gateway.rest.handle))
    if gateway.prefix:  # else the REST catch-all takes every path
        app.router.add_route("*", UNROUTED_PATH, guard(unrouted(app)))
