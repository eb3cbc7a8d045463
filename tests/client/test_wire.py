"""What the client puts on the wire, checked by small recording servers:
A2A-Version / A2A-Extensions / caller headers on every binding, REST content
type and verbs (SubscribeToTask POST, then GET on 405), lenient answers
(JSON-RPC ``null`` for Empty, ``application/json`` REST answers)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from aiohttp import web
from google.protobuf import empty_pb2, json_format

from a2a_grpc.client import A2AClient, A2AError, ErrorCode
from a2a_grpc.types import pb, pb_grpc

TASK = pb.Task(id="t1", context_id="c1", status=pb.TaskStatus(state=pb.TASK_STATE_WORKING))
DONE = pb.StreamResponse(
    status_update=pb.TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED)
    )
)
HEADERS = {"Authorization": "Bearer abc"}
EXTENSIONS = ("https://example.com/ext/a", "https://example.com/ext/b")


class Recorder(pb_grpc.A2AServiceServicer):
    def __init__(self) -> None:
        self.metadata: list[dict[str, str]] = []

    async def GetTask(self, request: Any, context: Any) -> pb.Task:
        self.metadata.append({k: v for k, v in context.invocation_metadata()})
        return TASK

    async def DeleteTaskPushNotificationConfig(self, request: Any, context: Any) -> empty_pb2.Empty:
        self.metadata.append({k: v for k, v in context.invocation_metadata()})
        return empty_pb2.Empty()


class Http:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def record(self, request: web.Request) -> bytes:
        body = await request.read()
        self.requests.append((request.method, request.path_qs, dict(request.headers), body))
        return body

    async def rpc(self, request: web.Request) -> web.Response:
        env = json.loads(await self.record(request))
        result: Any = (
            None if env["method"] == "DeleteTaskPushNotificationConfig" else json_format.MessageToDict(TASK)
        )
        return web.json_response({"jsonrpc": "2.0", "id": env["id"], "result": result})

    async def get_task(self, request: web.Request) -> web.Response:
        await self.record(request)
        # application/json (v1.0.0 servers, the Python SDK) is accepted too
        return web.json_response(json_format.MessageToDict(TASK))

    async def cancel(self, request: web.Request) -> web.Response:
        await self.record(request)
        return web.Response(
            text=json.dumps(json_format.MessageToDict(TASK)), content_type="application/a2a+json"
        )

    async def subscribe_post(self, request: web.Request) -> web.Response:
        await self.record(request)
        return web.json_response({"error": {"code": 405, "message": "use GET"}}, status=405)

    async def subscribe_get(self, request: web.Request) -> web.Response:
        await self.record(request)
        events = [pb.StreamResponse(task=TASK), DONE]
        body = "".join(f"data: {json.dumps(json_format.MessageToDict(e))}\n\n" for e in events)
        return web.Response(text=body, content_type="text/event-stream")

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/rpc", self.rpc)
        # aiohttp's {id} would swallow ":subscribe": the verb routes go first
        app.router.add_post("/rest/tasks/{id}:subscribe", self.subscribe_post)
        app.router.add_get("/rest/tasks/{id}:subscribe", self.subscribe_get)
        app.router.add_post("/rest/tasks/{id}:cancel", self.cancel)
        app.router.add_get("/rest/tasks/{id}", self.get_task)
        app.router.add_post("/rest/tasks", self.subscribe_post)  # GET /tasks answers 405
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", 0).start()
        self.port = self.runner.addresses[0][1]


@pytest.fixture
async def recorders() -> AsyncIterator[tuple[Recorder, int, Http]]:
    recorder = Recorder()
    server = grpc.aio.server()
    pb_grpc.add_A2AServiceServicer_to_server(recorder, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    http = Http()
    await http.start()
    try:
        yield recorder, port, http
    finally:
        assert http.runner is not None
        await http.runner.cleanup()
        await server.stop(0)


def _client(url: str, binding: str) -> A2AClient:
    return A2AClient.for_interface(url, binding, headers=HEADERS, extensions=EXTENSIONS)


async def test_grpc_metadata(recorders: tuple[Recorder, int, Http]) -> None:
    recorder, port, _ = recorders
    async with _client(f"grpc://127.0.0.1:{port}", "grpc") as client:
        assert (await client.get_task("t1")).id == "t1"
        await client.delete_task_push_notification_config("t1", "p1")
    md = recorder.metadata[0]
    assert md["a2a-version"] == "1.0"
    assert md["a2a-extensions"] == ",".join(EXTENSIONS)
    assert md["authorization"] == "Bearer abc"


async def test_jsonrpc_headers_envelope_and_null_empty(recorders: tuple[Recorder, int, Http]) -> None:
    _, _, http = recorders
    async with _client(f"http://127.0.0.1:{http.port}/rpc", "jsonrpc") as client:
        assert (await client.get_task("t1", history_length=2)).id == "t1"
        await client.delete_task_push_notification_config("t1", "p1")
    verb, path, headers, body = http.requests[0]
    assert (verb, path) == ("POST", "/rpc")
    assert headers["A2A-Version"] == "1.0"
    assert headers["A2A-Extensions"] == ",".join(EXTENSIONS)
    assert headers["Authorization"] == "Bearer abc"
    assert headers["Content-Type"] == "application/json"
    env = json.loads(body)
    assert env["jsonrpc"] == "2.0" and env["method"] == "GetTask"
    assert env["params"] == {"id": "t1", "historyLength": 2}


async def test_rest_paths_types_and_subscribe_fallback(recorders: tuple[Recorder, int, Http]) -> None:
    _, _, http = recorders
    async with _client(f"http://127.0.0.1:{http.port}/rest", "rest") as client:
        assert (await client.get_task("t1", history_length=0)).id == "t1"
        assert (await client.cancel_task("t1")).id == "t1"
        events = [e async for e in client.subscribe_to_task("t1")]
    assert [e.WhichOneof("payload") for e in events] == ["task", "status_update"]
    seen = [(verb, path) for verb, path, _, _ in http.requests]
    assert seen == [
        ("GET", "/rest/tasks/t1?historyLength=0"),
        ("POST", "/rest/tasks/t1:cancel"),
        ("POST", "/rest/tasks/t1:subscribe"),
        ("GET", "/rest/tasks/t1:subscribe"),
    ]
    _, _, cancel_headers, cancel_body = http.requests[1]
    assert cancel_headers["Content-Type"] == "application/a2a+json"
    assert cancel_headers["A2A-Version"] == "1.0"
    assert json.loads(cancel_body) == {}


async def test_rest_405_without_alternative_is_an_error(recorders: tuple[Recorder, int, Http]) -> None:
    _, _, http = recorders
    async with _client(f"http://127.0.0.1:{http.port}/rest", "rest") as client:
        with pytest.raises(A2AError) as info:
            await client.list_tasks()
    assert info.value.code is ErrorCode.METHOD_NOT_FOUND
