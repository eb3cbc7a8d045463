"""Registration validates the card and refuses private targets unless
allowed; refreshes cost a 304 when the card is unchanged; health changes
(card fetch and gRPC health) appear on WatchAgents."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from a2a_grpc.bindings._http.card import CardEndpoint
from a2a_grpc.errors import A2AError
from a2a_grpc.protocol import protojson
from a2a_grpc.registry._client import RegistryClient
from a2a_grpc.registry._server import RegistryConfig, RegistryServer
from a2a_grpc.registry._types import rpb
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.ports import free_port
from tests.registry.conftest import Done, card, skill, url_of


class CardSite:
    """A real HTTP server whose well-known card is ``self.body`` (a dict) or
    a ``pb.AgentCard`` served by the gateway's CardEndpoint (ETag, 304)."""

    def __init__(self) -> None:
        self.body: Any = None
        self.card: pb.AgentCard | None = None
        self.statuses: list[int] = []
        self.url = ""

    async def start(self) -> None:
        endpoint = CardEndpoint(lambda: self.card)

        async def handle(request: web.Request) -> web.StreamResponse:
            if self.card is not None:
                resp = await endpoint.handle(request)
            elif isinstance(self.body, int):
                resp = web.Response(status=self.body)
            elif isinstance(self.body, str):
                resp = web.Response(text=self.body)
            else:
                resp = web.json_response(self.body)
            self.statuses.append(resp.status)
            return resp

        app = web.Application()
        app.router.add_get("/.well-known/agent-card.json", handle)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"

    def interfaces(self, *extra: pb.AgentInterface) -> list[pb.AgentInterface]:
        return [pb.AgentInterface(url=self.url, protocol_binding="JSONRPC", protocol_version="1.0"), *extra]


@pytest.fixture
async def site() -> AsyncIterator[CardSite]:
    s = CardSite()
    await s.start()
    yield s
    await s.runner.cleanup()


def _card_json(site: CardSite, **changes: Any) -> dict[str, Any]:
    c = card("Site", skill("s1", "t"))
    c.supported_interfaces.extend(site.interfaces())
    raw = protojson.to_dict(c)
    for key, value in changes.items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    return raw


async def _refused(client: RegistryClient, url: str) -> A2AError:
    with pytest.raises(A2AError) as info:
        await client.register(url)
    return info.value


async def test_invalid_cards_are_refused(registry: RegistryServer, site: CardSite):
    skill_json = {"id": "a", "name": "A", "description": "d", "tags": []}
    cases: list[tuple[Any, str, str]] = [
        (_card_json(site, name=None), "INVALID_AGENT_RESPONSE", "missing required field name"),
        (_card_json(site, skills=[]), "INVALID_AGENT_RESPONSE", "declares no skills"),
        (_card_json(site, skills=[skill_json, skill_json]), "INVALID_AGENT_RESPONSE", "'a' repeats"),
        (_card_json(site, supportedInterfaces=[]), "INVALID_AGENT_RESPONSE", "supportedInterfaces is empty"),
        (
            _card_json(
                site,
                supportedInterfaces=[{"url": "x://h", "protocolBinding": "SMOKE", "protocolVersion": "1.0"}],
            ),
            "INVALID_AGENT_RESPONSE",
            "'SMOKE' is not one of",
        ),
        (
            _card_json(
                site,
                supportedInterfaces=[{"url": "/rel", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            ),
            "INVALID_AGENT_RESPONSE",
            "has no host",
        ),
        ("not json {", "INVALID_AGENT_RESPONSE", "not JSON"),
        (404, "INVALID_AGENT_RESPONSE", "HTTP 404"),
    ]
    for via in (f"grpc://{registry.grpc_target}", registry.http_url):
        async with RegistryClient(via) as client:
            for body, reason, text in cases:
                site.body = body
                err = await _refused(client, site.url)
                assert err.code.reason == reason and text in err.message, (body, err)
            site.body = _card_json(site)
            assert (await client.register(site.url)).card.name == "Site"
            err = await _refused(client, f"http://127.0.0.1:{free_port()}")
            assert err.code.reason == "UNAVAILABLE"
            for bad in ("", "ftp://example.com", "http://user:pw@example.com"):
                assert (await _refused(client, bad)).code.reason == "INVALID_PARAMS", bad
    assert len(registry.registry.agents()) == 1


async def test_private_targets_need_permission(tmp_path: Any, site: CardSite):
    site.body = _card_json(site)
    cfg = RegistryConfig(grpc_port=0, http_port=0, store_url="memory")
    async with RegistryServer(cfg) as reg, RegistryClient(f"grpc://{reg.grpc_target}") as client:
        err = await _refused(client, site.url)
        assert err.code.reason == "INVALID_PARAMS" and "loopback" in err.message
        assert site.statuses == []  # refused before any request was made
    cfg = RegistryConfig(grpc_port=0, http_port=0, store_url="memory", allow=("127.0.0.1",))
    async with RegistryServer(cfg) as reg, RegistryClient(f"grpc://{reg.grpc_target}") as client:
        assert (await client.register(site.url)).card.name == "Site"


async def _next(
    watch: AsyncIterator[rpb.WatchAgentsResponse], timeout: float = 10.0
) -> rpb.WatchAgentsResponse:
    return await asyncio.wait_for(watch.__anext__(), timeout)


async def test_unchanged_card_costs_a_304_and_a_change_is_watched(registry: RegistryServer, site: CardSite):
    c = card("Etag", skill("e", "t"))
    c.supported_interfaces.extend(site.interfaces())
    site.card = c
    async with RegistryClient(f"grpc://{registry.grpc_target}") as client:
        watch = await client.watch()
        agent = await client.register(site.url)
        assert (await _next(watch)).change == rpb.CHANGE_TYPE_REGISTERED
        before = agent.last_seen_time.ToMilliseconds()
        await asyncio.sleep(0.01)
        await registry.checker.check(agent)
        assert site.statuses == [200, 304]
        seen = await client.get(agent.agent_id)
        assert seen.card == agent.card and seen.last_seen_time.ToMilliseconds() > before
        c.description = "A new description."
        await registry.checker.check(seen)
        assert site.statuses == [200, 304, 200]
        change = await _next(watch)
        assert change.change == rpb.CHANGE_TYPE_CARD_CHANGED
        assert change.agent.card.description == "A new description."
        assert change.agent.card_etag != agent.card_etag
        await watch.aclose()


async def test_grpc_health_counts(registry: RegistryServer, site: CardSite):
    """A card whose GRPC interface does not answer: unhealthy after the threshold."""
    c = card("Half", skill("h", "t"))
    c.supported_interfaces.extend(
        site.interfaces(
            pb.AgentInterface(url=f"127.0.0.1:{free_port()}", protocol_binding="GRPC", protocol_version="1.0")
        )
    )
    site.card = c
    async with RegistryClient(registry.http_url) as client:
        agent = await client.register(site.url)
        for _ in range(registry.config.failure_threshold):
            assert (await client.get(agent.agent_id)).health == rpb.HEALTH_STATE_HEALTHY
            await registry.checker.check(await client.get(agent.agent_id))
        now = await client.get(agent.agent_id)
        assert now.health == rpb.HEALTH_STATE_UNHEALTHY and now.consecutive_failures == 3
        assert "gRPC health" in now.last_error and "UNAVAILABLE" in now.last_error
        assert [a.agent_id for a in await client.list(healthy_only=True)] == []


async def test_health_transitions_on_watch(tmp_path: Any):
    cfg = RegistryConfig(
        grpc_port=0,
        http_port=0,
        store_url="memory",
        allow_private=True,
        check_interval_seconds=0.2,
        check_jitter=0.2,
        failure_threshold=2,
        fetch_timeout_seconds=1.0,
    )
    agent_card = card("Flaky", skill("f", "t"))
    srv = A2AServer(Done(agent_card), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await srv.start()
    ports = (srv.grpc_port, srv.http_port)
    async with RegistryServer(cfg) as reg, RegistryClient(f"grpc://{reg.grpc_target}") as client:
        agent = await client.register(url_of(srv))
        watch = await client.watch(include_existing=True)
        assert (await _next(watch)).change == rpb.CHANGE_TYPE_EXISTING
        await srv.stop(0.1)
        down = await _next(watch)
        assert (
            down.change == rpb.CHANGE_TYPE_HEALTH_CHANGED and down.agent.health == rpb.HEALTH_STATE_UNHEALTHY
        )
        assert down.agent.consecutive_failures == 2 and down.agent.last_error
        assert (
            down.agent.last_seen_time == agent.last_seen_time
            or down.agent.last_seen_time.seconds >= agent.last_seen_time.seconds
        )
        back_srv = A2AServer(
            Done(agent_card), InMemoryTaskStore(), ServerConfig(grpc_port=ports[0], http_port=ports[1])
        )
        await back_srv.start()
        try:
            up = await _next(watch)
            assert up.change == rpb.CHANGE_TYPE_HEALTH_CHANGED and up.agent.health == rpb.HEALTH_STATE_HEALTHY
            assert up.agent.consecutive_failures == 0 and not up.agent.last_error
            assert up.agent.last_seen_time.ToMilliseconds() > down.agent.last_check_time.ToMilliseconds() - 1
            await client.deregister(agent.agent_id)
            assert (await _next(watch)).change == rpb.CHANGE_TYPE_REMOVED
        finally:
            await watch.aclose()
            await back_srv.stop(0.1)
