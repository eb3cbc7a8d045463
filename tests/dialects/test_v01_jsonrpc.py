"""The v0.1 JSON-RPC methods (``tasks/send`` era, legacy digest §5) and the tutorial routes over a
real server: client-chosen task ids, v0.1 objects and events, the names v0.1 shares with v0.3
(§6.2), one store across v0.1 / v0.3 / v1.0 on every binding, the v0.1 card, errors."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
import pytest

from a2a_grpc.errors import ErrorCode
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import new_id, pb, pb_grpc
from tests.interop.agents import InteropAgent

V1 = {"A2A-Version": "1.0"}
V1_MD = (("a2a-version", "1.0"),)


@pytest.fixture
async def http(server: A2AServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.http_port}", timeout=30) as client:
        yield client


@pytest.fixture
async def stub(server: A2AServer) -> AsyncIterator[Any]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        yield pb_grpc.A2AServiceStub(channel)


async def rpc(http: httpx.AsyncClient, method: str, params: Any = None, headers: Any = None) -> Any:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": "req-1", "method": method}
    if params is not None:
        body["params"] = params
    resp = await http.post("/", json=body, headers=headers or {})
    if resp.headers["content-type"].startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in resp.text.splitlines() if line.startswith("data:")]
    return resp.json()


def send_params(text: str, task_id: str | None = None, **extra: Any) -> dict[str, Any]:
    message = {"role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": task_id or uuid.uuid4().hex, "message": message, **extra}


async def test_tasks_send_creates_under_the_client_id_and_continues_it(http: httpx.AsyncClient) -> None:
    params = send_params("ask", sessionId="s-1")
    task = (await rpc(http, "tasks/send", params))["result"]
    assert task["id"] == params["id"] and task["sessionId"] == "s-1"
    assert task["status"]["state"] == "input-required"
    assert "kind" not in task and "contextId" not in task and "history" not in task
    assert task["status"]["message"]["parts"] == [{"type": "text", "text": "what should I echo?"}]
    done = (await rpc(http, "tasks/send", {**send_params("hello", params["id"]), "historyLength": 5}))[
        "result"
    ]
    assert done["id"] == params["id"] and done["status"]["state"] == "completed"
    assert done["artifacts"][0]["index"] == 0
    assert done["artifacts"][0]["parts"] == [{"type": "text", "text": "hello"}]
    assert "artifactId" not in done["artifacts"][0]
    assert done["history"][0]["role"] == "user"
    assert all(set(m) <= {"role", "parts", "metadata"} for m in done["history"])  # C17: no messageId out
    # tasks/get and tasks/cancel are also v0.3 names: a task created in v0.1 is answered in v0.1.
    got = (await rpc(http, "tasks/get", {"id": params["id"]}))["result"]
    assert got["sessionId"] == "s-1" and "kind" not in got and got["status"]["state"] == "completed"
    assert (await rpc(http, "tasks/cancel", {"id": params["id"]}))["error"]["code"] == -32002


async def test_shared_names_answer_v03_for_a_v03_task(http: httpx.AsyncClient) -> None:
    msg = {
        "kind": "message",
        "messageId": new_id(),
        "role": "user",
        "parts": [{"kind": "text", "text": "ask"}],
    }
    created = (await rpc(http, "message/send", {"message": msg}))["result"]
    got = (await rpc(http, "tasks/get", {"id": created["id"]}))["result"]
    assert got["kind"] == "task" and got["contextId"] == created["contextId"]
    canceled = (await rpc(http, "tasks/cancel", {"id": created["id"]}))["result"]
    assert canceled["kind"] == "task" and canceled["status"]["state"] == "canceled"


async def test_send_subscribe_streams_v01_events(http: httpx.AsyncClient) -> None:
    params = send_params("stream me")
    events = await rpc(http, "tasks/sendSubscribe", params)
    assert all(e["jsonrpc"] == "2.0" and e["id"] == "req-1" for e in events)
    results = [e["result"] for e in events]
    assert all(r["id"] == params["id"] and "kind" not in r and "taskId" not in r for r in results)
    statuses = [r for r in results if "status" in r]
    artifacts = [r["artifact"] for r in results if "artifact" in r]
    assert statuses[0]["status"]["state"] == "submitted" and statuses[0]["final"] is False
    assert statuses[-1] == results[-1] and results[-1]["final"] is True
    assert results[-1]["status"]["state"] == "completed"
    assert [a["index"] for a in artifacts] == [0]
    assert artifacts[0]["parts"] == [{"type": "text", "text": "stream me"}]
    asked = [e["result"] for e in await rpc(http, "tasks/sendSubscribe", send_params("ask"))]
    assert asked[-1]["status"]["state"] == "input-required" and asked[-1]["final"] is True


async def test_direct_message_reply_is_a_completed_task(http: httpx.AsyncClient) -> None:
    params = send_params("reply", sessionId="s-2")
    task = (await rpc(http, "tasks/send", params))["result"]
    assert task == {
        "id": params["id"],
        "sessionId": "s-2",
        "status": {
            "state": "completed",
            "message": {"role": "agent", "parts": [{"type": "text", "text": "a direct reply"}]},
        },
    }
    events = [e["result"] for e in await rpc(http, "tasks/sendSubscribe", send_params("reply"))]
    assert len(events) == 1 and events[0]["final"] is True


async def test_v1_surfaces_never_create_a_task_from_a_client_id(http: httpx.AsyncClient, stub: Any) -> None:
    unknown = uuid.uuid4().hex
    message = pb.Message(message_id=new_id(), role=pb.ROLE_USER, task_id=unknown, parts=[pb.Part(text="hi")])
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.SendMessage(pb.SendMessageRequest(message=message), metadata=V1_MD)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    body = {"messageId": new_id(), "role": "ROLE_USER", "taskId": unknown, "parts": [{"text": "hi"}]}
    out = await rpc(http, "SendMessage", {"message": body}, V1)
    assert out["error"]["code"] == ErrorCode.TASK_NOT_FOUND.jsonrpc_code
    rest = await http.post("/message:send", json={"message": body}, headers=V1)
    assert rest.status_code == 404
    v03 = {
        "kind": "message",
        "messageId": new_id(),
        "role": "user",
        "taskId": unknown,
        "parts": [{"kind": "text", "text": "hi"}],
    }
    assert (await rpc(http, "message/send", {"message": v03}))["error"]["code"] == -32001
    assert (await http.get(f"/tasks/{unknown}")).status_code == 404  # and nothing was created


async def test_one_store_across_v01_and_v1(http: httpx.AsyncClient, stub: Any) -> None:
    tutorial_id = uuid.uuid4().hex
    made = await http.post("/tasks/send", json=send_params("from the tutorial", tutorial_id))
    assert made.status_code == 200
    v1 = await stub.GetTask(pb.GetTaskRequest(id=tutorial_id), metadata=V1_MD)
    assert v1.id == tutorial_id and v1.status.state == pb.TASK_STATE_COMPLETED
    assert v1.history[0].message_id  # minted on ingest (C17)
    # GET /tasks/{id} is both the tutorial's and v1.0's: A2A-Version decides.
    as_v1 = await http.get(f"/tasks/{tutorial_id}", headers=V1)
    assert as_v1.headers["content-type"].startswith("application/a2a+json")
    assert as_v1.json()["status"]["state"] == "TASK_STATE_COMPLETED"

    created = await stub.SendMessage(
        pb.SendMessageRequest(
            message=pb.Message(message_id=new_id(), role=pb.ROLE_USER, parts=[pb.Part(text="ask")])
        ),
        metadata=V1_MD,
    )
    v1_id = created.task.id
    seen = (await http.get(f"/tasks/{v1_id}")).json()
    assert seen["id"] == v1_id and seen["status"]["state"] == "input-required"
    assert seen["sessionId"] == created.task.context_id
    assert (await http.get(f"/tasks/{v1_id}", headers=V1)).json()["id"] == v1_id
    # and continued through the old shape, then read by v1.0
    cont = await http.post(f"/tasks/{v1_id}/send", json={"message": send_params("go on")["message"]})
    assert cont.json()["status"]["state"] == "completed"
    assert (
        await stub.GetTask(pb.GetTaskRequest(id=v1_id), metadata=V1_MD)
    ).status.state == pb.TASK_STATE_COMPLETED
    # the v1.0 routes that only look alike still reach v1.0
    sub = await http.get(f"/tasks/{v1_id}:subscribe", headers=V1)
    assert sub.status_code == 400  # v1.0's own answer: a terminal task cannot be subscribed to


async def test_bad_input_is_a_clear_4xx(http: httpx.AsyncClient) -> None:
    good = send_params("hi")
    for params in (
        None,
        {"message": good["message"]},  # no id
        {**good, "id": "a/b"},
        {**good, "id": "x" * 300},
        {**good, "id": 7},
        {**good, "message": "hi"},
        {**good, "message": {"role": ["user"], "parts": [{"type": "text", "text": "x"}]}},
        {**good, "message": {"role": "user", "parts": [{"type": "image", "text": "x"}]}},
        {**good, "sessionId": 3},
    ):
        out = await rpc(http, "tasks/send", params)
        assert out["error"]["code"] == -32602, (params, out)
        assert out["error"]["data"]["reason"] == "INVALID_PARAMS"
        if params is not None:
            resp = await http.post("/tasks/send", json=params)
            assert resp.status_code == 400, (params, resp.text)
            assert isinstance(resp.json()["detail"], str)
    for resp in (
        await http.post("/tasks/send", content=b"{nope", headers={"Content-Type": "application/json"}),
        await http.post("/tasks/send", json=[1]),
        await http.post("/tasks/send", content=b"id=1", headers={"Content-Type": "text/plain"}),
        await http.post("/tasks/sendSubscribe", json={"id": "x"}),
        await http.post("/tasks/abc/send", json={**good, "id": "other"}),
        await http.get("/tasks/abc", params={"historyLength": "-1"}),
    ):
        assert 400 <= resp.status_code < 500, resp.text
        assert list(resp.json()) == ["detail"], resp.text
    for version in ("2.0", "0.3"):  # a header is not the tutorial's (0.3 has no such path): v1.0 refuses it
        other = await http.get("/tasks/abc", headers={"A2A-Version": version})
        assert other.status_code == 400, version
        assert other.json()["error"]["details"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    refused = await rpc(http, "tasks/send", good, V1)
    assert refused["error"]["code"] == -32601 and "SendMessage" in refused["error"]["message"]


async def test_push_notification_set_and_get(http: httpx.AsyncClient) -> None:
    params = send_params("ask")
    await rpc(http, "tasks/send", params)
    none = (await rpc(http, "tasks/pushNotification/get", {"id": params["id"]}))["result"]
    assert none == {"id": params["id"], "pushNotificationConfig": None}
    config = {
        "id": params["id"],
        "pushNotificationConfig": {
            "url": "http://127.0.0.1:9/hook",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"]},
        },
    }
    stored = (await rpc(http, "tasks/pushNotification/set", config))["result"]
    assert stored == config
    assert (await rpc(http, "tasks/pushNotification/get", {"id": params["id"]}))["result"] == config


async def test_v01_card_at_agent_json(http: httpx.AsyncClient, server: A2AServer) -> None:
    card = (await http.get("/.well-known/agent.json")).json()
    base = f"http://127.0.0.1:{server.http_port}"
    assert card["url"] == base + "/"
    assert card["authentication"] == {"schemes": []}  # no security schemes on this server
    assert card["capabilities"]["stateTransitionHistory"] is False
    assert card["skills"] and card["version"] and card["name"] == "Interop Agent"
    assert {i["protocolBinding"] for i in card["supportedInterfaces"]} == {"GRPC", "JSONRPC", "HTTP+JSON"}
    pure = (await http.get("/.well-known/agent.json", headers=V1)).json()
    assert "authentication" not in pure and "url" not in pure


async def test_inline_push_notification_is_stored(http: httpx.AsyncClient) -> None:
    webhook = {"url": "http://127.0.0.1:9/inline", "token": "t0"}
    params = {**send_params("ask"), "pushNotification": webhook}
    assert (await rpc(http, "tasks/send", params))["result"]["status"]["state"] == "input-required"
    got = (await rpc(http, "tasks/pushNotification/get", {"id": params["id"]}))["result"]
    assert got == {"id": params["id"], "pushNotificationConfig": webhook}


async def test_lenient_server_follows_the_tasks_recorded_dialect() -> None:
    from a2a_grpc.core._handler import HandlerConfig

    srv = A2AServer(
        InteropAgent(),
        InMemoryTaskStore(),
        ServerConfig(grpc_port=0, http_port=0, handler=HandlerConfig(strict_version=False)),
    )
    await srv.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.http_port}") as http:
            tutorial_id = uuid.uuid4().hex
            await http.post("/tasks/send", json=send_params("old", tutorial_id))
            old = await http.get(f"/tasks/{tutorial_id}")  # no header
            assert old.json()["status"]["state"] == "completed"
            body = {"message": {"messageId": new_id(), "role": "ROLE_USER", "parts": [{"text": "new"}]}}
            made = (await http.post("/message:send", json=body)).json()  # lenient: served as 1.0
            new = await http.get(f"/tasks/{made['task']['id']}")  # no header: a v1.0 task, the v1.0 answer
            assert new.json()["status"]["state"] == "TASK_STATE_COMPLETED"
            assert (await http.get("/tasks/none")).json()["error"]["code"] == 404  # v1.0's form
    finally:
        await srv.stop(0.2)


async def test_resubscribe_follows_the_tasks_dialect(http: httpx.AsyncClient) -> None:
    params = send_params("slow 1")
    body = {"jsonrpc": "2.0", "id": "s", "method": "tasks/sendSubscribe", "params": params}
    async with http.stream("POST", "/", json=body) as live:
        lines = live.aiter_lines()
        assert (await anext(lines)).startswith("data:")  # the task exists and is running
        again = [
            e["result"]
            for e in await rpc(http, "tasks/resubscribe", {"id": params["id"], "historyLength": 2})
        ]
        rest = [json.loads(line[5:]) async for line in lines if line.startswith("data:")]
    assert all("kind" not in e and e["id"] == params["id"] for e in again)
    assert again[0]["status"]["state"] in ("submitted", "working") and again[0]["final"] is False
    assert again[-1]["status"]["state"] == "completed" and again[-1]["final"] is True
    assert rest[-1]["result"]["final"] is True
    finished = [e["result"] for e in await rpc(http, "tasks/resubscribe", {"id": params["id"]})]
    assert finished == [{"id": params["id"], "status": again[-1]["status"], "final": True}]

    msg = {
        "kind": "message",
        "messageId": new_id(),
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
    }
    v03 = (await rpc(http, "message/send", {"message": msg}))["result"]
    seen = [e["result"] for e in await rpc(http, "tasks/resubscribe", {"id": v03["id"]})]
    assert seen[0]["kind"] == "task"  # a v0.3 task: the v0.3 answer (C8)
    assert (await rpc(http, "tasks/resubscribe", {"id": "none"}))["error"]["code"] == -32001
