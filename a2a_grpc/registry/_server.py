"""``a2a-grpc registry serve``: the registry on gRPC, JSON-RPC and HTTP+JSON.

:class:`RegistryServer` serves one :class:`RegistryServicer` on

* gRPC (grpc.aio) with server reflection and ``grpc.health.v1``;
* an aiohttp application with JSON-RPC 2.0 at ``POST /`` and HTTP+JSON at the
  paths of registry.proto's ``google.api.http`` rules — the gateway's own
  bindings (:mod:`a2a_grpc.bindings._http.jsonrpc`, :mod:`a2a_grpc.bindings._http.rest`), nothing written by
  hand — and the RFC 9727 API catalog of the healthy agents at
  ``/.well-known/api-catalog`` (:mod:`.catalog`);

and runs the :class:`HealthChecker`. The agents live in the SQL store at
``store_url`` (SQLite by default, PostgreSQL) and survive restarts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from aiohttp import web
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from a2a_grpc.bindings._http.jsonrpc import JsonRpcBinding
from a2a_grpc.bindings._http.rest import RestBinding
from a2a_grpc.protocol._httprule import compile_service
from a2a_grpc.registry._catalog import CATALOG_PATH, LINKSET_TYPE, linkset
from a2a_grpc.registry._fetch import CardFetcher, open_policy
from a2a_grpc.registry._health import HealthChecker
from a2a_grpc.registry._registry import AgentRegistry
from a2a_grpc.registry._servicer import RegistryServicer
from a2a_grpc.registry._store import RegistryStore
from a2a_grpc.registry._types import SERVICE, SERVICE_NAME, rpb_grpc
from a2a_grpc.types import pb

__all__ = ["RegistryConfig", "RegistryServer"]


@dataclass
class RegistryConfig:
    """How the registry is served. Ports 0 pick free ones."""

    host: str = "127.0.0.1"
    grpc_port: int = 50061
    http_port: int = 8061
    store_url: str = "memory"
    table_prefix: str = "a2a_registry_"
    #: Admit private, loopback and link-local agent addresses (development).
    allow_private: bool = False
    #: Private networks, addresses or host names admitted anyway.
    allow: tuple[str, ...] = ()
    check_interval_seconds: float = 30.0
    check_jitter: float = 0.1
    failure_threshold: int = 3
    fetch_timeout_seconds: float = 10.0
    #: The signed-card policy hook: called with each fetched card, raises A2AError to refuse it.
    #: Unset, it is :func:`signed_card_policy` of ``trusted_keys`` and ``require_signed_cards``.
    verify_card: Callable[[pb.AgentCard], None] | None = field(default=None, repr=False)
    #: Public keys whose card signatures are checked (a2a_grpc.protocol.cardsign.TrustedKeys): a card
    #: signed with a ``kid`` they hold must verify, or it is refused (spec §8.4.3).
    trusted_keys: Any = field(default=None, repr=False)
    #: Refuse cards without a signature that verifies with ``trusted_keys``.
    require_signed_cards: bool = False


def signed_card_policy(trusted: Any, require: bool) -> Callable[[pb.AgentCard], None] | None:
    """The registration check of signed cards (None when there is nothing
    to check): every signature whose ``kid`` names a ``trusted`` key must
    verify, at least one must when the card is signed and keys are trusted,
    and with ``require`` an unsigned card is refused too. Refusals are
    A2AError(INVALID_AGENT_RESPONSE) naming the card (spec §8.4.3)."""
    if trusted is None and not require:
        return None
    from a2a_grpc.protocol.cardsign import TrustedKeys, verify_card

    keys = trusted if trusted is not None else TrustedKeys()

    def verify(card: pb.AgentCard) -> None:
        verify_card(card, keys, require=require, source=f"the agent card of {card.name!r}")

    return verify


class RegistryServer:
    """The registry's servers; ``async with RegistryServer(cfg) as srv``."""

    def __init__(self, config: RegistryConfig) -> None:
        self.config = config
        fetcher = CardFetcher(
            open_policy(config.allow_private, config.allow),
            timeout=config.fetch_timeout_seconds,
            verify=config.verify_card or signed_card_policy(config.trusted_keys, config.require_signed_cards),
        )
        store = RegistryStore(config.store_url, table_prefix=config.table_prefix)
        self.registry = AgentRegistry(store, fetcher, failure_threshold=config.failure_threshold)
        self.servicer = RegistryServicer(self.registry)
        self.checker = HealthChecker(
            self.registry,
            interval=config.check_interval_seconds,
            jitter=config.check_jitter,
            timeout=config.fetch_timeout_seconds,
        )
        self.grpc_port = 0
        self.http_port = 0
        self._grpc: grpc.aio.Server | None = None
        self._runner: web.AppRunner | None = None
        self._stopping = asyncio.Event()
        self._stopped = asyncio.Event()

    @property
    def http_url(self) -> str:
        """The base URL of the JSON-RPC and HTTP+JSON bindings."""
        return f"http://{self.config.host}:{self.http_port}"

    @property
    def grpc_target(self) -> str:
        """``host:port`` of the gRPC server."""
        return f"{self.config.host}:{self.grpc_port}"

    async def start(self) -> None:
        """Opens the store, starts gRPC, HTTP and the health checks."""
        cfg = self.config
        await self.registry.open()
        server = grpc.aio.server()
        rpb_grpc.add_AgentRegistryServiceServicer_to_server(self.servicer, server)
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        health_name = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
        reflection.enable_server_reflection((SERVICE_NAME, health_name, reflection.SERVICE_NAME), server)
        self.grpc_port = server.add_insecure_port(f"{cfg.host}:{cfg.grpc_port}")
        await server.start()
        self._grpc = server
        await self._health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
        await self._health.set("", health_pb2.HealthCheckResponse.SERVING)
        runner = web.AppRunner(self._app(), access_log=None, handle_signals=False, shutdown_timeout=2.0)
        await runner.setup()
        site = web.TCPSite(runner, cfg.host, cfg.http_port)
        await site.start()
        self._runner = runner
        self.http_port = runner.addresses[0][1]
        self.checker.start()

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get(CATALOG_PATH, self._catalog)
        app.router.add_post("/", JsonRpcBinding(self.servicer, SERVICE, stopping=self._stopping).handle)
        rest = RestBinding(self.servicer, compile_service(SERVICE), stopping=self._stopping, jsonrpc_path="/")
        app.router.add_route("*", "/{tail:.*}", rest.handle)
        return app

    async def _catalog(self, request: web.Request) -> web.Response:
        """GET ``/.well-known/api-catalog`` (RFC 9727): the healthy agents."""
        body = linkset(str(request.url.with_query(None)), self.registry.agents())
        return web.Response(text=json.dumps(body), content_type=LINKSET_TYPE)

    async def stop(self) -> None:
        """Stops the checks and both servers, closes the store."""
        self._stopping.set()
        await self.checker.stop()
        if self._grpc is not None:
            await self._grpc.stop(1.0)
            self._grpc = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        with contextlib.suppress(Exception):
            await self.registry.close()
        self._stopped.set()

    async def wait_stopped(self) -> None:
        """Returns once ``stop()`` has finished."""
        await self._stopped.wait()

    async def __aenter__(self) -> RegistryServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()
