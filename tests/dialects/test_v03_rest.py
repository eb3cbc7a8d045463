"""A2A v0.3 over HTTP+JSON (``/v1/...``) on a real server (127.0.0.1
sockets): all ten RPCs, bodies in both dialects (C13), L-A2/L-A3/L-A7/L-A8,
errors and bad input (400, never 500), C8 on streams, the ``/v1`` vs tenant
``v1`` rule (legacy digest §6.2), and one store with v1.0 and v0.3 gRPC."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import grpc
import pytest

from a2a_grpc.gen.a2a.v1 import a2a_pb2 as v03
from a2a_grpc.gen.a2a.v1 import a2a_pb2_grpc as v03_grpc
from a2a_grpc.server import A2AServer

V1 = {"A2A-Version": "1.0"}


class Http:
    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session, self.base = session, base
        self.content_type = ""

    async def call(self, method: str, path: str, body: Any = None, headers: Any = None) -> tuple[int, Any]:
        kwargs: dict[str, Any] = {"headers": headers or {}}
        if body is not None:
            kwargs["data"] = body if isinstance(body, str | bytes) else json.dumps(body)
            kwargs["headers"] = {"Content-Type": "application/json", **kwargs["headers"]}
        async with self.session.request(method, self.base + path, **kwargs) as resp:
            if resp.content_type == "text/event-stream":
                text = await resp.text()
                return resp.status, [json.loads(x[6:]) for x in text.splitlines() if x.startswith("data: ")]
            self.content_type = resp.content_type
            return resp.status, json.loads(await resp.text() or "null")


@pytest.fixture
async def http(server: A2AServer) -> AsyncIterator[Http]:
    async with aiohttp.ClientSession() as session:
        yield Http(session, f"http://127.0.0.1:{server.http_port}")


def message(text: str, **extra: Any) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "content": [{"text": text}], **extra}


async def send(http: Http, text: str, *, blocking: bool = True, **extra: Any) -> dict[str, Any]:
    body = {"message": message(text, **extra), "configuration": {"blocking": blocking}}
    status, out = await http.call("POST", "/v1/message:send", body)
    assert status == 200, out
    return out


async def test_send_and_get_emit_v03_protojson(http: Http) -> None:
    out = await send(http, "hello")
    task = out["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["history"][0]["content"] == [{"text": "hello"}] and task["history"][0]["role"] == "ROLE_USER"
    assert task["artifacts"][0]["parts"] == [{"text": "hello"}]
    assert http.content_type == "application/json"
    status, got = await http.call("GET", f"/v1/tasks/{task['id']}?historyLength=1")
    assert status == 200 and got["id"] == task["id"] and len(got["history"]) == 1
    status, reply = await http.call("POST", "/v1/message:send", {"message": message("reply")})
    assert status == 200 and reply["message"]["role"] == "ROLE_AGENT"


async def test_c13_json_rpc_shaped_body_is_accepted(http: Http) -> None:
    body = {
        "message": {
            "kind": "message",
            "messageId": "m-13",
            "role": "user",
            "parts": [
                {"kind": "text", "text": "mixed"},
                {"kind": "file", "file": {"uri": "https://e/f.txt", "mimeType": "text/plain"}},
                {"kind": "data", "data": {"a": 1}},
            ],
        },
        "configuration": {"blocking": True},
    }
    status, out = await http.call("POST", "/v1/message:send", body)
    assert status == 200, out
    assert out["task"]["artifacts"][0]["parts"] == [
        {"text": "mixed"},
        {"file": {"fileWithUri": "https://e/f.txt", "mimeType": "text/plain"}},
        {"data": {"data": {"a": 1}}},
    ]


async def test_stream_and_subscribe_get_and_post(http: Http) -> None:
    body = {"message": message("stream me")}
    status, events = await http.call("POST", "/v1/message:stream", body)
    assert status == 200 and "artifactUpdate" in {next(iter(e)) for e in events}
    assert events[-1]["statusUpdate"]["final"] is True
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    for verb in ("GET", "POST"):  # L-A7
        task = (await send(http, "slow 30", blocking=False))["task"]
        path = f"/v1/tasks/{task['id']}"
        reader = asyncio.create_task(http.call(verb, path + ":subscribe"))
        await asyncio.sleep(0.3)
        status, canceled = await http.call("POST", path + ":cancel", {})
        assert status == 200 and canceled["status"]["state"] == "TASK_STATE_CANCELLED"
        status, events = await asyncio.wait_for(reader, 10)
        assert status == 200 and "task" in events[0]
        assert events[-1]["statusUpdate"]["final"] is True
        assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELLED"


async def test_c8_subscribe_on_a_finished_task(http: Http) -> None:
    task = (await send(http, "done"))["task"]
    status, events = await http.call("GET", f"/v1/tasks/{task['id']}:subscribe")
    assert status == 200 and events[0]["task"]["id"] == task["id"]
    assert events[-1]["statusUpdate"]["final"] is True and len(events) == 2


@pytest.mark.parametrize("form", ["config", "request"])
async def test_push_config_crud(http: Http, form: str) -> None:
    task = (await send(http, "slow 30", blocking=False))["task"]
    base = f"/v1/tasks/{task['id']}/pushNotificationConfigs"
    config = {"pushNotificationConfig": {"id": "hook-1", "url": "http://127.0.0.1:9/h", "token": "tok"}}
    body = config if form == "config" else {"parent": f"tasks/{task['id']}", "config": config}  # L-A2
    status, created = await http.call("POST", base, body)  # L-A3: tasks/{id}, plural
    assert status == 200, created
    name = f"tasks/{task['id']}/pushNotificationConfigs/hook-1"
    assert created["name"] == name and created["pushNotificationConfig"]["token"] == "tok"
    status, got = await http.call("GET", f"{base}/hook-1")
    assert status == 200 and got == created
    status, listed = await http.call("GET", base)
    assert status == 200 and listed["configs"] == [created]  # L-A8: the object
    status, deleted = await http.call("DELETE", f"{base}/hook-1")
    assert (status, deleted) == (200, {})
    status, missing = await http.call("GET", f"{base}/hook-1")
    assert status == 404 and missing["code"] == -32001
    await http.call("POST", f"/v1/tasks/{task['id']}:cancel")


async def test_push_config_id_from_config_id_query_c11(http: Http) -> None:
    task = (await send(http, "slow 30", blocking=False))["task"]
    base = f"/v1/tasks/{task['id']}/pushNotificationConfigs"
    body = {"pushNotificationConfig": {"url": "http://127.0.0.1:9/h"}}
    status, created = await http.call("POST", base + "?configId=from-query", body)
    assert status == 200 and created["pushNotificationConfig"]["id"] == "from-query"
    status, minted = await http.call("POST", base, body)
    assert status == 200 and minted["pushNotificationConfig"]["id"]  # none given: minted
    await http.call("POST", f"/v1/tasks/{task['id']}:cancel")


async def test_card(http: Http, server: A2AServer) -> None:
    status, card = await http.call("GET", "/v1/card")
    assert status == 200 and card["name"] == "Interop Agent" and card["protocolVersion"] == "0.3.0"
    assert {"url": f"http://127.0.0.1:{server.http_port}", "transport": "HTTP+JSON"} in card[
        "additionalInterfaces"
    ]
    assert "supportedInterfaces" not in card


async def test_errors_have_the_table_status_and_v03_code(http: Http) -> None:
    status, err = await http.call("GET", "/v1/tasks/no-such-task")
    assert status == 404 and err["code"] == -32001 and err["data"]["reason"] == "TASK_NOT_FOUND"
    assert not err["message"].startswith("TaskNotFoundError")
    task = (await send(http, "done"))["task"]
    status, err = await http.call("POST", f"/v1/tasks/{task['id']}:cancel", "null")
    assert status == 400 and err["code"] == -32002
    status, err = await http.call("GET", "/v1/tasks/nope:subscribe")
    assert status == 404 and err["code"] == -32001


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/message:send", "{not json"),
        ("POST", "/v1/message:send", [1]),
        ("POST", "/v1/message:send", {"message": "x"}),
        ("POST", "/v1/message:send", {"message": {"messageId": "m", "content": "x"}}),
        ("POST", "/v1/message:send", {"message": {"messageId": "m", "content": [{"file": {}}]}}),
        ("POST", "/v1/message:send", {"message": {"messageId": 5, "content": [{"text": "a"}]}}),
        (
            "POST",
            "/v1/message:send",
            {"message": {"messageId": "m", "role": "ROLE_X", "content": [{"text": "a"}]}},
        ),
        ("POST", "/v1/message:stream", {"message": {"content": [{"kind": "video"}]}}),
        ("GET", "/v1/tasks/t?historyLength=many", None),
        ("POST", "/v1/tasks/t/pushNotificationConfigs", [1]),
        ("POST", "/v1/tasks/t/pushNotificationConfigs", {"pushNotificationConfig": {"url": 5}}),
        ("POST", "/v1/tasks/t/pushNotificationConfigs", {"parent": "tasks/other", "config": {}}),
    ],
)
async def test_bad_input_is_400(http: Http, method: str, path: str, body: Any) -> None:
    status, err = await http.call(method, path, body)
    assert status == 400, err
    assert err["code"] in (-32700, -32600, -32602), err


async def test_version_1_0_on_a_v1_path_is_the_v1_0_binding_with_tenant_v1(http: Http) -> None:
    v1_body = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "tenant v1"}]}}
    status, out = await http.call("POST", "/v1/message:send", v1_body, V1)
    assert status == 200, out
    task = out["task"]
    status, _ = await http.call("GET", f"/tasks/{task['id']}", headers=V1)
    assert status == 404  # the task is in tenant "v1", not in the default tenant
    status, got = await http.call("GET", f"/v1/tasks/{task['id']}", headers=V1)
    assert status == 200 and got["id"] == task["id"] and got["history"][0]["parts"] == [{"text": "tenant v1"}]
    status, listed = await http.call("GET", "/v1/tasks", headers=V1)  # ListTasks: v1.0 only
    assert status == 200 and [t["id"] for t in listed["tasks"]] == [task["id"]]
    status, _ = await http.call("GET", f"/v1/tasks/{task['id']}")  # no header: v0.3, default tenant
    assert status == 404


async def test_paths_v03_does_not_have_go_to_v1_0(http: Http) -> None:
    status, err = await http.call("GET", "/v1/nothing/here")
    assert status == 404 and "error" in err  # the v1.0 error form: not a v0.3 route
    status, err = await http.call("PUT", "/v1/message:send", {})
    assert status == 405


async def test_one_store_across_rest_and_grpc_of_both_versions(http: Http, server: A2AServer) -> None:
    made = (await send(http, "slow 30", blocking=False))["task"]
    status, v1 = await http.call("GET", f"/tasks/{made['id']}", headers=V1)  # v1.0 HTTP+JSON
    assert status == 200 and v1["status"]["state"] == "TASK_STATE_WORKING"
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as ch:
        stub = v03_grpc.A2AServiceStub(ch)
        await stub.CancelTask(v03.CancelTaskRequest(name=f"tasks/{made['id']}"))
    status, got = await http.call("GET", f"/v1/tasks/{made['id']}")
    assert status == 200 and got["status"]["state"] == "TASK_STATE_CANCELLED"
    v1_body = {"message": {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "made in v1.0"}]}}
    status, out = await http.call("POST", "/message:send", v1_body, V1)
    assert status == 200
    status, got = await http.call("GET", f"/v1/tasks/{out['task']['id']}")
    assert status == 200 and got["history"][0]["content"] == [{"text": "made in v1.0"}]


_JUNK: list[Any] = [
    None,
    1,
    "x",
    [],
    [{}],
    {"message": None},
    {"message": []},
    {"config": 5},
    {"content": {}},
]


@pytest.mark.parametrize(
    ("method", "path", "type_name"),
    [
        ("POST", "/v1/message:send", "SendMessageRequest"),
        ("POST", "/v1/message:stream", "SendMessageRequest"),
        ("POST", "/v1/tasks/{id}:cancel", "CancelTaskRequest"),
        ("POST", "/v1/tasks/{id}:subscribe", "TaskSubscriptionRequest"),
        ("POST", "/v1/tasks/{id}/pushNotificationConfigs", "TaskPushNotificationConfig"),
        ("POST", "/v1/tasks/{id}/pushNotificationConfigs", "CreateTaskPushNotificationConfigRequest"),
        ("GET", "/v1/tasks/{id}", ""),
        ("DELETE", "/v1/tasks/{id}/pushNotificationConfigs/c", ""),
    ],
)
async def test_random_bodies_never_500(http: Http, method: str, path: str, type_name: str) -> None:
    """Random ProtoJSON of v0.3 messages (tests/randmsg.py) and junk JSON to
    each route: served, or a 4xx in the v0.3 error form."""
    import random

    from a2a_grpc.protocol import protojson
    from tests.randmsg import fill

    task_id = (await send(http, "done"))["task"]["id"]
    rng = random.Random(path + type_name)
    for i in range(30):
        body: Any = rng.choice(_JUNK)
        if type_name and i % 3:
            body = protojson.to_dict(fill(getattr(v03, type_name)(), rng))
            if i % 2 and "message" in body:
                body["message"].update(messageId=str(uuid.uuid4()), role="ROLE_USER")
                body["message"].pop("taskId", None)
                body["message"].pop("contextId", None)
        target = path.format(id=task_id if i % 2 else rng.choice(["x", "a%2Fb", "t:1", "%FF"]))
        query = rng.choice(["", "?historyLength=-1", "?historyLength=x", "?configId=c"])
        status, out = await http.call(method, target + query, body if method == "POST" else None)
        assert status < 500, (status, out, body)
        if status >= 400 and isinstance(out, dict) and "code" in out:
            assert isinstance(out["code"], int) and out["message"], out
