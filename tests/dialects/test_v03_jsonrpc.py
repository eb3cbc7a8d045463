"""The v0.3 JSON-RPC dialect over a real server (127.0.0.1 sockets): the
version rules of spec §3.6.2, the extensions header, and the v0.3 shapes an
official client does not exercise. One store for every dialect is
tests/dialects/test_cross_dialect.py."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.interop.agents import InteropAgent

V1 = {"A2A-Version": "1.0"}


@pytest.fixture
async def rpc(server: A2AServer) -> AsyncIterator[Any]:
    url = f"http://127.0.0.1:{server.http_port}/"
    async with aiohttp.ClientSession() as session:

        async def call(method: str, params: Any = None, headers: dict[str, str] | None = None) -> Any:
            body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
            if params is not None:
                body["params"] = params
            async with session.post(url, json=body, headers=headers or {}) as resp:
                if resp.content_type == "text/event-stream":
                    text = await resp.text()
                    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
                return await resp.json()

        yield call


def msg(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": str(uuid.uuid4()),
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        **extra,
    }


async def test_v03_method_with_version_1_0_names_the_v1_method(rpc: Any) -> None:
    out = await rpc("message/send", {"message": msg("hi")}, V1)
    assert out["error"]["code"] == -32601
    assert "SendMessage" in out["error"]["message"]
    assert out["error"]["data"][0]["reason"] == "METHOD_NOT_FOUND"  # a v1.0 caller gets the v1.0 form
    served = await rpc("message/send", {"message": msg("hi")}, {"A2A-Version": "0.3"})
    assert served["result"]["kind"] == "task"
    refused = await rpc("message/send", {"message": msg("hi")}, {"A2A-Version": "2.0"})
    assert refused["error"]["code"] == -32009


async def test_message_reply_and_stream_of_a_message(rpc: Any) -> None:
    reply = (await rpc("message/send", {"message": msg("reply")}))["result"]
    assert reply["kind"] == "message" and reply["role"] == "agent"
    events = await rpc("message/stream", {"message": msg("reply")})
    assert [e["result"]["kind"] for e in events] == ["message"]  # no status-update after a Message


async def test_stream_final_and_input_required(rpc: Any) -> None:
    events = [e["result"] for e in await rpc("message/stream", {"message": msg("ask")})]
    assert events[0]["kind"] == "task"
    last = events[-1]
    assert (
        last["kind"] == "status-update"
        and last["final"] is True
        and last["status"]["state"] == "input-required"
    )
    assert all(e.get("final") is False for e in events[:-1] if e["kind"] == "status-update")


async def test_push_get_without_config_id_and_errors(rpc: Any, server: A2AServer) -> None:
    task = (await rpc("message/send", {"message": msg("ask")}))["result"]
    assert (await rpc("tasks/pushNotificationConfig/get", {"id": task["id"]}))["error"]["code"] == -32001
    for cid in ("a", "b"):
        config = {
            "taskId": task["id"],
            "pushNotificationConfig": {
                "id": cid,
                "url": "http://127.0.0.1:9/h",
                "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "s"},
            },
        }
        assert (await rpc("tasks/pushNotificationConfig/set", config))["result"]["pushNotificationConfig"][
            "id"
        ] == cid
    first = (await rpc("tasks/pushNotificationConfig/get", {"id": task["id"]}))["result"]
    assert first["pushNotificationConfig"]["id"] == "a"  # C11: the first created
    assert first["pushNotificationConfig"]["authentication"]["schemes"] == ["Bearer"]  # C1
    v1 = (await rpc("ListTaskPushNotificationConfigs", {"taskId": task["id"]}, V1))["result"]["configs"]
    assert [c["id"] for c in v1] == ["a", "b"]


async def test_bad_params_are_v03_invalid_params(rpc: Any) -> None:
    for method, params in (
        ("message/send", None),
        ("message/send", {"message": {"kind": "message", "messageId": "m", "role": "robot", "parts": []}}),
        ("message/send", {"message": {"kind": "task"}}),
        ("tasks/get", [1]),
    ):
        out = await rpc(method, params)
        assert out["error"]["code"] == -32602, (method, params, out)
        assert isinstance(out["error"]["data"], dict) and out["error"]["data"]["reason"] == "INVALID_PARAMS"
    card = await rpc("agent/getAuthenticatedExtendedCard")
    assert card["error"]["code"] == -32004  # this agent declares no extended card


class ExtensionAgent(InteropAgent):
    card = pb.AgentCard()
    card.CopyFrom(InteropAgent.card)
    card.capabilities.extensions.add(uri="https://example.com/ext/v1", required=True)


async def test_extensions_header_is_read_and_echoed() -> None:
    uri = "https://example.com/ext/v1"
    server = A2AServer(ExtensionAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await server.start()
    url = f"http://127.0.0.1:{server.http_port}/"
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": msg("hi")}}
    try:
        refused, served, echoed = await _with_and_without(url, body, uri)
    finally:
        await server.stop(0.2)
    assert refused["error"]["code"] == -32004  # C14: ExtensionSupportRequired has no v0.3 code
    assert refused["error"]["data"]["requiredExtensions"] == uri
    assert served["result"]["kind"] == "task" and echoed == uri


async def _with_and_without(url: str, body: Any, uri: str) -> tuple[Any, Any, str | None]:
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json=body) as resp:
            refused = await resp.json()
        async with session.post(url, json=body, headers={"X-A2A-Extensions": uri}) as resp:
            served = await resp.json()
            echoed = resp.headers.get("X-A2A-Extensions")
    return refused, served, echoed


async def test_card_serves_both_dialects(server: A2AServer) -> None:
    base = f"http://127.0.0.1:{server.http_port}"
    async with aiohttp.ClientSession() as session, session.get(base + "/.well-known/agent-card.json") as resp:
        card = await resp.json()
    assert card["url"] == base + "/" and card["protocolVersion"] == "0.3.0"
    parsed = pb.AgentCard()
    from google.protobuf import json_format

    json_format.ParseDict(card, parsed, ignore_unknown_fields=True)
    assert {i.protocol_binding for i in parsed.supported_interfaces} == {"GRPC", "JSONRPC", "HTTP+JSON"}


async def test_extended_card_is_the_pure_v03_card() -> None:
    extended = pb.AgentCard()
    extended.CopyFrom(InteropAgent.card)
    extended.name = "Interop Agent (extended)"
    server = A2AServer(
        InteropAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0), extended_card=extended
    )
    await server.start()
    url = f"http://127.0.0.1:{server.http_port}/"
    body = {"jsonrpc": "2.0", "id": "c", "method": "agent/getAuthenticatedExtendedCard"}
    try:
        async with aiohttp.ClientSession() as session, session.post(url, json=body) as resp:
            card = (await resp.json())["result"]
    finally:
        await server.stop(0.2)
    assert card["name"] == "Interop Agent (extended)"
    assert (
        card["url"] == url and card["protocolVersion"] == "0.3.0" and card["preferredTransport"] == "JSONRPC"
    )
    assert "supportedInterfaces" not in card and card["capabilities"]["stateTransitionHistory"] is False
