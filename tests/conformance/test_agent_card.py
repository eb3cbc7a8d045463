"""Discovery: the well-known Agent Card lists the three interfaces, and each
advertised URL answers with its binding (spec §8.2, §8.3)."""

from __future__ import annotations

import aiohttp
import grpc
import pytest
from google.protobuf import json_format

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb
from tests.conformance.clients import GrpcBinding, JsonRpcBinding, RestBinding

pytestmark = pytest.mark.asyncio(loop_scope="package")


async def _card(
    servers, path: str = "/.well-known/agent-card.json"
) -> tuple[pb.AgentCard, aiohttp.ClientResponse]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            f"http://127.0.0.1:{servers.main.http_port}{path}", headers={"A2A-Version": "1.0"}
        ) as resp,
    ):
        assert resp.status == 200
        body = await resp.json()
    # Strict parse: every member of the card served to a v1.0 caller is a field of AgentCard
    # (without the header the card also carries the v0.3 fields: docs/dialects.md).
    return json_format.ParseDict(body, pb.AgentCard()), resp


async def test_card_lists_every_binding_with_its_url(servers):
    card, resp = await _card(servers)
    assert resp.headers["Content-Type"].startswith("application/json")
    assert (
        "max-age=" in resp.headers["Cache-Control"] and resp.headers["ETag"] and resp.headers["Last-Modified"]
    )
    assert card.name == "Conformance"
    assert card.capabilities.streaming and card.capabilities.push_notifications
    bindings = {i.protocol_binding: i for i in card.supported_interfaces}
    assert list(bindings) == ["GRPC", "JSONRPC", "HTTP+JSON"]
    assert all(i.protocol_version == "1.0" for i in card.supported_interfaces)
    assert bindings["GRPC"].url == f"127.0.0.1:{servers.main.grpc_port}"  # bare host:port (design.md)
    legacy, _ = await _card(servers, "/.well-known/agent.json")
    assert legacy == card


async def test_each_advertised_interface_answers(servers):
    card, _ = await _card(servers)
    urls = {i.protocol_binding: i.url for i in card.supported_interfaces}
    reasons = []
    async with grpc.aio.insecure_channel(urls["GRPC"]) as channel, aiohttp.ClientSession() as session:
        for binding in (
            GrpcBinding(channel),
            JsonRpcBinding(session, urls["JSONRPC"]),
            RestBinding(session, urls["HTTP+JSON"]),
        ):
            ok = await binding.call(
                "SendMessage",
                pb.SendMessageRequest(
                    message=pb.Message(
                        message_id="card-m", role=pb.ROLE_USER, parts=[pb.Part(text="echo via card")]
                    )
                ),
            )
            assert ok.task.status.state == pb.TASK_STATE_COMPLETED
            with pytest.raises(A2AError) as exc:
                await binding.call("GetTask", pb.GetTaskRequest(id="nope"))
            reasons.append(exc.value.code)
    assert reasons == [ErrorCode.TASK_NOT_FOUND] * 3
