"""Bad input on the legacy dialects, found by trying to break them: each answer is a clear error
in the dialect's own form (never an internal error), and the owner's tasks stay readable."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from a2a_grpc.push import PushDispatcher
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from tests.interop.agents import InteropAgent

V1 = {"A2A-Version": "1.0"}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    store = InMemoryTaskStore()
    push = PushDispatcher(store, allow=["127.0.0.1"], max_attempts=1)
    srv = A2AServer(InteropAgent(), store, ServerConfig(grpc_port=0, http_port=0), push=push)
    await srv.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.http_port}", timeout=30) as client:
            yield client
    finally:
        await srv.stop(0.2)


async def rpc(http: httpx.AsyncClient, method: str, params: Any, headers: Any = None) -> Any:
    body = {"jsonrpc": "2.0", "id": "req-1", "method": method, "params": params}
    resp = await http.post("/", json=body, headers=headers or {})
    assert resp.status_code == 200
    return resp.json()


def v03_message(text: str = "hello") -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": uuid.uuid4().hex,
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }


def v01_params(text: str = "hello", task_id: str | None = None, **extra: Any) -> dict[str, Any]:
    message = {"role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": task_id or uuid.uuid4().hex, "message": message, **extra}


async def still_readable(http: httpx.AsyncClient) -> None:
    listing = await http.get("/tasks", headers=V1)
    assert listing.status_code == 200, listing.text


@pytest.mark.parametrize("schemes", [5, {"a": 1}, "Bearer", [5]])
async def test_push_authentication_schemes_of_the_wrong_type_are_invalid_params(
    http: httpx.AsyncClient, schemes: Any
) -> None:
    auth = {"schemes": schemes}
    push = {"url": "http://127.0.0.1:9/hook", "authentication": auth}
    sent = await rpc(
        http, "message/send", {"message": v03_message(), "configuration": {"pushNotificationConfig": push}}
    )
    assert sent["error"]["code"] == -32602, sent
    assert "scheme" in sent["error"]["message"]
    v01 = await rpc(http, "tasks/send", v01_params(pushNotification=push))
    assert v01["error"]["code"] == -32602, v01
    tutorial = await http.post("/tasks/send", json=v01_params(pushNotification=push))
    assert tutorial.status_code == 400 and "scheme" in tutorial.json()["detail"], tutorial.text
    body = {"message": {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]}}
    rest = await http.post("/v1/message:send", json={**body, "configuration": {"pushNotification": push}})
    assert rest.status_code == 400 and rest.json()["code"] == -32602, rest.text
    await still_readable(http)


@pytest.mark.parametrize("value", ["99999999999999999999", "2147483648", "\u00b2"])
async def test_tutorial_get_refuses_a_history_length_out_of_range(
    http: httpx.AsyncClient, value: str
) -> None:
    task_id = uuid.uuid4().hex
    assert (await http.post("/tasks/send", json=v01_params("ask", task_id))).status_code == 200
    got = await http.get(f"/tasks/{task_id}", params={"historyLength": value})
    assert got.status_code == 400, got.text
    assert "historyLength" in got.json()["detail"]
    assert (await http.get(f"/tasks/{task_id}", params={"historyLength": "2147483647"})).status_code == 200


async def test_a_v01_method_with_a2a_version_1_is_not_called_a_v03_method(http: httpx.AsyncClient) -> None:
    refused = await rpc(http, "tasks/send", v01_params(), headers=V1)
    assert refused["error"]["code"] == -32601
    assert "0.1 method" in refused["error"]["message"] and "SendMessage" in refused["error"]["message"]
    refused = await rpc(http, "message/send", {"message": v03_message()}, headers=V1)
    assert "0.3 method" in refused["error"]["message"]


@pytest.mark.parametrize("blocking", ["yes", 1, {}])
async def test_blocking_that_is_not_a_boolean_is_invalid_params(
    http: httpx.AsyncClient, blocking: Any
) -> None:
    sent = await rpc(
        http, "message/send", {"message": v03_message(), "configuration": {"blocking": blocking}}
    )
    assert sent["error"]["code"] == -32602, sent
    assert "blocking" in sent["error"]["message"]


async def test_tasks_get_with_history_length_answers_a_v01_task_in_v01(http: httpx.AsyncClient) -> None:
    """The last message of a v0.1 task is the agent's, which carries no v0.1 mark: the dialect
    is learnt from the whole history, not from the slice asked for (legacy digest §6.2)."""
    params = v01_params("ask")
    await rpc(http, "tasks/send", params)
    got = (await rpc(http, "tasks/get", {"id": params["id"], "historyLength": 1}))["result"]
    assert "sessionId" in got and "kind" not in got and "contextId" not in got, got
    assert got["history"] == [{"role": "agent", "parts": [{"type": "text", "text": "what should I echo?"}]}]
    created = (await rpc(http, "message/send", {"message": v03_message("ask")}))["result"]
    got = (await rpc(http, "tasks/get", {"id": created["id"], "historyLength": 1}))["result"]
    assert got["kind"] == "task" and len(got["history"]) == 1
    missing = await rpc(http, "tasks/get", {"id": "nope", "historyLength": 1})
    assert missing["error"]["code"] == -32001
    for bad in ([params["id"]], "x", {"id": 5, "historyLength": 1}):
        assert (await rpc(http, "tasks/get", bad))["error"]["code"] == -32602


def nulls(**fields: Any) -> dict[str, Any]:
    """What a pydantic client's ``model_dump()`` sends: every unset optional field as null."""
    return fields


async def test_the_v01_sample_clients_nulls_are_unset_fields(http: httpx.AsyncClient) -> None:
    """The v0.1 sample client posts ``request.model_dump()`` (no ``exclude_none``): every optional
    field it did not set arrives as JSON null, which is "not set" as in ProtoJSON."""
    text = nulls(type="text", text="ask", metadata=None)
    message = nulls(role="user", parts=[text], metadata=None)
    task_id = uuid.uuid4().hex
    params = nulls(
        id=task_id, sessionId="s-1", message=message, pushNotification=None, historyLength=None, metadata=None
    )
    sent = await rpc(http, "tasks/send", params)
    assert sent["result"]["status"]["state"] == "input-required", sent
    got = await rpc(http, "tasks/get", nulls(id=task_id, historyLength=None, metadata=None))
    assert got["result"]["sessionId"] == "s-1", got
    push = nulls(url="http://127.0.0.1:9/hook", token=None, authentication=None)
    pushed = await rpc(http, "tasks/pushNotification/set", nulls(id=task_id, pushNotificationConfig=push))
    assert pushed["result"]["pushNotificationConfig"]["url"] == push["url"], pushed
    file = nulls(name=None, mimeType="text/plain", bytes=None, uri="http://127.0.0.1:9/a.txt")
    part = nulls(type="file", file=file, metadata=None)
    sent = await rpc(
        http, "tasks/send", {**params, "id": uuid.uuid4().hex, "message": {**message, "parts": [part]}}
    )
    assert sent["result"]["artifacts"][0]["parts"][0]["file"]["uri"] == file["uri"], sent
    canceled = await rpc(http, "tasks/cancel", nulls(id=task_id, metadata=None))
    assert canceled["result"]["status"]["state"] == "canceled", canceled


async def test_v03_nulls_are_unset_fields(http: httpx.AsyncClient) -> None:
    message = {**v03_message(), "taskId": None, "contextId": None, "metadata": None, "referenceTaskIds": None}
    config = nulls(blocking=None, historyLength=None, pushNotificationConfig=None, acceptedOutputModes=None)
    for params in (
        {"message": message, "configuration": None},
        {"message": message, "configuration": config},
    ):
        sent = await rpc(http, "message/send", {**params, "metadata": None})
        assert sent["result"]["status"]["state"] == "completed", sent
    still_wrong = await rpc(http, "message/send", {"message": {**message, "role": None}})
    assert still_wrong["error"]["code"] == -32602


@pytest.mark.parametrize("part", [{}, {"type": "image", "text": "x"}, {"type": 5}])
async def test_a_v01_part_without_a_known_type_names_the_type_field(
    http: httpx.AsyncClient, part: Any
) -> None:
    params = {"id": uuid.uuid4().hex, "message": {"role": "user", "parts": [part]}}
    refused = await http.post("/tasks/send", json=params)
    assert refused.status_code == 400 and "part.type" in refused.json()["detail"], refused.text
    assert "part.type" in (await rpc(http, "tasks/send", params))["error"]["message"]
