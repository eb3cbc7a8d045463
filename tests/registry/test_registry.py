"""The registry over gRPC, JSON-RPC and HTTP+JSON: CRUD and filters answer
the same on all three; the store survives a restart; pages."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_grpc.registry._client import RegistryClient
from a2a_grpc.registry._server import RegistryConfig, RegistryServer
from a2a_grpc.registry._types import rpb
from tests.registry.conftest import BINDINGS, card, skill, url_of

OUTPUT_ONLY_TIMES = ("registerTime", "cardUpdateTime", "lastSeenTime", "lastCheckTime")


def _stable(agent: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in agent.items() if k not in OUTPUT_ONLY_TIMES}


async def _two_agents(start_agent: Any) -> tuple[str, str]:
    review = await start_agent(
        card(
            "Reviewer",
            skill("code-review", "review", "python", inputs=("text/x-diff",)),
            skill("lint", "python"),
        )
    )
    explain = await start_agent(card("Explainer", skill("explain", "python", "docs")), order=("JSONRPC",))
    return url_of(review), url_of(explain)


async def test_crud_and_filters_agree_on_every_binding(
    registry: RegistryServer, callers: Any, start_agent: Any
):
    review_url, explain_url = await _two_agents(start_agent)
    registered = await callers["grpc"]("RegisterAgent", rpb.RegisterAgentRequest(base_url=review_url))
    agent = registered["agent"]
    assert agent["baseUrl"] == review_url and agent["health"] == "HEALTH_STATE_HEALTHY"
    assert agent["card"]["name"] == "Reviewer" and agent["cardEtag"].startswith('"')
    # The card's URLs are kept as the agent serves them.
    assert [i["url"] for i in agent["card"]["supportedInterfaces"]][1] == review_url + "/"
    # Registering again over another binding: the same agent.
    again = await callers["rest"]("RegisterAgent", rpb.RegisterAgentRequest(base_url=review_url + "/"))
    assert again["agent"]["agentId"] == agent["agentId"]
    await callers["jsonrpc"]("RegisterAgent", rpb.RegisterAgentRequest(base_url=explain_url))

    queries = [
        rpb.ListAgentsRequest(),
        rpb.ListAgentsRequest(skill="code-review"),
        rpb.ListAgentsRequest(skill="explain"),
        rpb.ListAgentsRequest(tag="PYTHON"),
        rpb.ListAgentsRequest(tag="docs"),
        rpb.ListAgentsRequest(input_mode="text/x-diff"),
        rpb.ListAgentsRequest(skill="lint", input_mode="text/x-diff"),  # same skill must match both
        rpb.ListAgentsRequest(output_mode="application/json"),
        rpb.ListAgentsRequest(binding="GRPC"),
        rpb.ListAgentsRequest(binding="jsonrpc"),
        rpb.ListAgentsRequest(healthy_only=True),
        rpb.ListAgentsRequest(query="does explain"),
        rpb.ListAgentsRequest(query="reviewer lint"),
        rpb.ListAgentsRequest(query="nothing-like-this"),
    ]
    expected_names = [
        {"Reviewer", "Explainer"},
        {"Reviewer"},
        {"Explainer"},
        {"Reviewer", "Explainer"},
        {"Explainer"},
        {"Reviewer"},
        set(),
        {"Reviewer", "Explainer"},
        {"Reviewer"},
        {"Reviewer", "Explainer"},
        {"Reviewer", "Explainer"},
        {"Explainer"},
        {"Reviewer"},
        set(),
    ]
    for query, names in zip(queries, expected_names, strict=True):
        answers = {b: await callers[b]("ListAgents", query) for b in BINDINGS}
        assert answers["grpc"] == answers["jsonrpc"] == answers["rest"], query
        assert {a["card"]["name"] for a in answers["grpc"]["agents"]} == names, query
        assert answers["grpc"]["totalSize"] == len(names)

    got = {b: await callers[b]("GetAgent", rpb.GetAgentRequest(agent_id=agent["agentId"])) for b in BINDINGS}
    assert got["grpc"] == got["jsonrpc"] == got["rest"]
    assert _stable(got["grpc"]["agent"]) == _stable(agent)
    updated = await callers["rest"]("UpdateAgent", rpb.UpdateAgentRequest(agent_id=agent["agentId"]))
    assert updated["agent"]["agentId"] == agent["agentId"]

    for b in BINDINGS:
        missing = await callers[b]("GetAgent", rpb.GetAgentRequest(agent_id="no-such-agent"))
        assert missing == {"error": "AGENT_NOT_FOUND"}
        bad = await callers[b]("ListAgents", rpb.ListAgentsRequest(binding="carrier-pigeon"))
        assert bad == {"error": "INVALID_PARAMS"}
    assert (
        await callers["jsonrpc"]("DeregisterAgent", rpb.DeregisterAgentRequest(agent_id=agent["agentId"]))
        == {}
    )
    for b in BINDINGS:
        gone = await callers[b]("DeregisterAgent", rpb.DeregisterAgentRequest(agent_id=agent["agentId"]))
        assert gone == {"error": "AGENT_NOT_FOUND"}
    left = await callers["rest"]("ListAgents", rpb.ListAgentsRequest())
    assert [a["card"]["name"] for a in left["agents"]] == ["Explainer"]


async def test_pages_and_tokens(registry: RegistryServer, callers: Any, start_agent: Any):
    for i in range(5):
        srv = await start_agent(card(f"Agent {i}", skill("same", "t")))
        await callers["grpc"]("RegisterAgent", rpb.RegisterAgentRequest(base_url=url_of(srv)))
    for b in BINDINGS:
        seen: list[str] = []
        req = rpb.ListAgentsRequest(skill="same", page_size=2)
        while True:
            page = await callers[b]("ListAgents", req)
            assert page["pageSize"] == 2 and page["totalSize"] == 5
            seen.extend(a["agentId"] for a in page["agents"])
            if not page["nextPageToken"]:
                break
            req.page_token = page["nextPageToken"]
        assert len(seen) == 5 and seen == sorted(seen)
        # A token is bound to its filters.
        first = await callers[b]("ListAgents", rpb.ListAgentsRequest(skill="same", page_size=2))
        other = rpb.ListAgentsRequest(skill="other", page_size=2, page_token=first["nextPageToken"])
        assert await callers[b]("ListAgents", other) == {"error": "INVALID_PARAMS"}
        assert await callers[b]("ListAgents", rpb.ListAgentsRequest(page_size=101)) == {
            "error": "INVALID_PARAMS"
        }


async def test_registrations_survive_a_restart(tmp_path: Any, start_agent: Any):
    srv = await start_agent(card("Durable", skill("keep", "t")))
    cfg = RegistryConfig(
        grpc_port=0, http_port=0, store_url=f"sqlite:///{tmp_path / 'r.db'}", allow_private=True
    )
    async with RegistryServer(cfg) as reg, RegistryClient(f"grpc://{reg.grpc_target}") as client:
        first = await client.register(url_of(srv))
    async with RegistryServer(cfg) as reg, RegistryClient(reg.http_url) as client:
        again = await client.get(first.agent_id)
        assert again.card == first.card and again.base_url == first.base_url
        assert [a.agent_id for a in await client.list(skill="keep")] == [first.agent_id]


@pytest.mark.postgres
async def test_postgres_store(start_agent: Any):
    import uuid

    srv = await start_agent(card("Pg", skill("pg", "t")))
    prefix = f"t{uuid.uuid4().hex[:8]}_"
    cfg = RegistryConfig(
        grpc_port=0,
        http_port=0,
        store_url="postgresql://postgres@127.0.0.1:5432/test",
        table_prefix=prefix,
        allow_private=True,
    )
    async with RegistryServer(cfg) as reg, RegistryClient(f"grpc://{reg.grpc_target}") as client:
        agent = await client.register(url_of(srv))
    async with RegistryServer(cfg) as reg, RegistryClient(f"grpc://{reg.grpc_target}") as client:
        assert (await client.get(agent.agent_id)).card.name == "Pg"
        await reg.registry.store.drop()


async def test_watch_streams_over_sse(registry: RegistryServer, start_agent: Any):
    import json

    import aiohttp

    srv = await start_agent(card("Streamed", skill("s", "t")))
    async with RegistryClient(f"grpc://{registry.grpc_target}") as client:
        agent = await client.register(url_of(srv))
    async with aiohttp.ClientSession() as session:
        rest = session.get(registry.http_url + "/v1/agents:watch", params={"includeExisting": "true"})
        body = {"jsonrpc": "2.0", "id": 7, "method": "WatchAgents", "params": {"includeExisting": True}}
        jsonrpc = session.post(registry.http_url + "/", json=body)
        events = []
        for call in (rest, jsonrpc):
            async with call as resp:
                assert resp.headers["Content-Type"].startswith("text/event-stream")
                line = await resp.content.readline()
                events.append(json.loads(line.decode().removeprefix("data:")))
    assert events[1]["id"] == 7
    assert events[0] == events[1]["result"] | {"time": events[0]["time"]}
    assert events[0]["change"] == "CHANGE_TYPE_EXISTING" and events[0]["agent"]["agentId"] == agent.agent_id


async def test_api_catalog_lists_healthy_agents(registry: RegistryServer, start_agent: Any):
    import aiohttp

    up = await start_agent(card("Up", skill("u", "t")))
    down = await start_agent(card("Down", skill("d", "t")))
    async with RegistryClient(f"grpc://{registry.grpc_target}") as client:
        a = await client.register(url_of(up))
        b = await client.register(url_of(down))
    for _ in range(registry.config.failure_threshold):
        await registry.registry.record_check(b.agent_id, None, "UNAVAILABLE: test")
    async with (
        aiohttp.ClientSession() as session,
        session.get(registry.http_url + "/.well-known/api-catalog") as resp,
    ):
        assert resp.status == 200 and resp.content_type == "application/linkset+json"
        body = await resp.json(content_type=None)
    catalog, *agents = body["linkset"]
    assert catalog["anchor"] == registry.http_url + "/.well-known/api-catalog"
    card_href = a.base_url + "/.well-known/agent-card.json"
    assert catalog["item"] == [{"href": card_href, "type": "application/json", "title": "Up"}]
    assert agents == [{"anchor": a.base_url, "service-desc": [catalog["item"][0]]}]
