"""One store, one task, every dialect (issue 13 item 6): a task created in one
dialect is read, continued, canceled and subscribed to in another, on one
server with the SQLite store (127.0.0.1, ephemeral ports).

Each dialect is a small client class with the same five calls (``send``,
``get``, ``cancel``, ``subscribe`` and what a task looks like to it, as a
neutral :class:`View`); the tests run over every ordered pair of
:data:`DIALECTS`: v1.0 JSON-RPC and gRPC, and the three v0.3 bindings. A new dialect
(the ``/tasks/send`` shape) slots in as one more class in that table.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from itertools import permutations
from pathlib import Path
from typing import Any, ClassVar

import aiohttp
import grpc
import pytest
from google.protobuf import json_format

from a2a_grpc.gen.a2a.v1 import a2a_pb2 as v03
from a2a_grpc.gen.a2a.v1 import a2a_pb2_grpc as v03_grpc
from a2a_grpc.protocol import protojson
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store import open_store
from a2a_grpc.types import pb, pb_grpc
from tests.interop.agents import InteropAgent

TIMEOUT = aiohttp.ClientTimeout(total=20)


@dataclass(frozen=True)
class View:
    """A task as any dialect shows it: states as v0.3 spells them
    (``input-required``), texts of the history and of the artifacts."""

    id: str
    context_id: str
    state: str
    history: tuple[str, ...]
    artifacts: tuple[str, ...]


def v1_state(state: str) -> str:
    """``TASK_STATE_INPUT_REQUIRED`` → ``input-required`` (the v0.3 proto's ``CANCELLED`` too)."""
    return state.removeprefix("TASK_STATE_").lower().replace("_", "-").replace("cancelled", "canceled")


class Dialect:
    """A raw client of one dialect at ``base`` (the server's HTTP URL)."""

    name: ClassVar[str]

    def __init__(self, session: aiohttp.ClientSession, base: str, grpc_target: str) -> None:
        self.session, self.base, self.grpc_target = session, base, grpc_target

    async def send(self, text: str, task_id: str = "", *, blocking: bool = True) -> View:
        raise NotImplementedError

    async def get(self, task_id: str) -> View:
        raise NotImplementedError

    async def cancel(self, task_id: str) -> View:
        raise NotImplementedError

    async def subscribe(self, task_id: str) -> AsyncIterator[tuple[str, str]]:
        """(event kind, state or "") per event: kinds ``task``, ``status``, ``artifact``."""
        raise NotImplementedError
        yield  # pragma: no cover

    async def close(self) -> None:
        return None


class JsonRpc(Dialect):
    """JSON-RPC 2.0 at ``POST /`` (both dialects share the URL)."""

    headers: ClassVar[dict[str, str]] = {}

    async def call(self, method: str, params: Any) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        async with self.session.post(self.base + "/", json=body, headers=self.headers) as resp:
            out = await resp.json()
        assert "result" in out, (self.name, method, out)
        return out["result"]

    async def events(self, method: str, params: Any) -> AsyncIterator[Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        headers = {**self.headers, "Accept": "text/event-stream"}
        async with self.session.post(self.base + "/", json=body, headers=headers) as resp:
            assert resp.content_type == "text/event-stream", await resp.text()
            async for line in resp.content:
                if line.startswith(b"data: "):
                    frame = json.loads(line[6:])
                    assert "result" in frame, (self.name, method, frame)
                    yield frame["result"]


class V10JsonRpc(JsonRpc):
    name = "v1.0 JSON-RPC"
    headers: ClassVar[dict[str, str]] = {"A2A-Version": "1.0"}

    @staticmethod
    def view(task: Any) -> View:
        return View(
            task["id"],
            task["contextId"],
            v1_state(task["status"]["state"]),
            tuple(p.get("text", "") for m in task.get("history", []) for p in m["parts"]),
            tuple(p.get("text", "") for a in task.get("artifacts", []) for p in a["parts"]),
        )

    async def send(self, text: str, task_id: str = "", *, blocking: bool = True) -> View:
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
        if task_id:
            message["taskId"] = task_id
        params = {"message": message, "configuration": {"returnImmediately": not blocking}}
        return self.view((await self.call("SendMessage", params))["task"])

    async def get(self, task_id: str) -> View:
        return self.view(await self.call("GetTask", {"id": task_id}))

    async def cancel(self, task_id: str) -> View:
        return self.view(await self.call("CancelTask", {"id": task_id}))

    @staticmethod
    def event(event: Any) -> tuple[str, str]:
        if "task" in event:
            return "task", v1_state(event["task"]["status"]["state"])
        if "statusUpdate" in event:
            return "status", v1_state(event["statusUpdate"]["status"]["state"])
        return "artifact", ""

    async def subscribe(self, task_id: str) -> AsyncIterator[tuple[str, str]]:
        async for event in self.events("SubscribeToTask", {"id": task_id}):
            yield self.event(event)


class V10Grpc(Dialect):
    """v1.0 gRPC: ``lf.a2a.v1.A2AService`` with ``a2a-version: 1.0``."""

    name = "v1.0 gRPC"
    MD = (("a2a-version", "1.0"),)

    def __init__(self, session: aiohttp.ClientSession, base: str, grpc_target: str) -> None:
        super().__init__(session, base, grpc_target)
        self.channel = grpc.aio.insecure_channel(grpc_target)
        self.stub = pb_grpc.A2AServiceStub(self.channel)

    async def send(self, text: str, task_id: str = "", *, blocking: bool = True) -> View:
        request = pb.SendMessageRequest()
        request.message.message_id, request.message.role = str(uuid.uuid4()), pb.ROLE_USER
        request.message.task_id = task_id
        request.message.parts.add(text=text)
        request.configuration.return_immediately = not blocking
        answer = await self.stub.SendMessage(request, metadata=self.MD, timeout=20)
        return V10JsonRpc.view(protojson.to_dict(answer.task))

    async def get(self, task_id: str) -> View:
        task = await self.stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=self.MD)
        return V10JsonRpc.view(protojson.to_dict(task))

    async def cancel(self, task_id: str) -> View:
        task = await self.stub.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=self.MD)
        return V10JsonRpc.view(protojson.to_dict(task))

    async def subscribe(self, task_id: str) -> AsyncIterator[tuple[str, str]]:
        async for event in self.stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id), metadata=self.MD):
            yield V10JsonRpc.event(protojson.to_dict(event))

    async def close(self) -> None:
        await self.channel.close()


class V03JsonRpc(JsonRpc):
    """v0.3: no ``A2A-Version`` header (spec §3.6.2)."""

    name = "v0.3 JSON-RPC"

    @staticmethod
    def view(task: Any) -> View:
        assert task["kind"] == "task", task
        return View(
            task["id"],
            task["contextId"],
            task["status"]["state"],
            tuple(p.get("text", "") for m in task.get("history", []) for p in m["parts"]),
            tuple(p.get("text", "") for a in task.get("artifacts", []) for p in a["parts"]),
        )

    async def send(self, text: str, task_id: str = "", *, blocking: bool = True) -> View:
        message = {
            "kind": "message",
            "messageId": str(uuid.uuid4()),
            "role": "user",
            "parts": [{"kind": "text", "text": text}],
        }
        if task_id:
            message["taskId"] = task_id
        params = {"message": message, "configuration": {"blocking": blocking}}
        return self.view(await self.call("message/send", params))

    async def get(self, task_id: str) -> View:
        return self.view(await self.call("tasks/get", {"id": task_id}))

    async def cancel(self, task_id: str) -> View:
        return self.view(await self.call("tasks/cancel", {"id": task_id}))

    async def subscribe(self, task_id: str) -> AsyncIterator[tuple[str, str]]:
        async for event in self.events("tasks/resubscribe", {"id": task_id}):
            kind = {"task": "task", "status-update": "status", "artifact-update": "artifact"}[event["kind"]]
            yield kind, event.get("status", {}).get("state", "")


def proto03_view(task: Any) -> View:
    """A task as ProtoJSON of the v0.3 proto (gRPC and HTTP+JSON): ``content`` of messages."""
    return View(
        task["id"],
        task["contextId"],
        v1_state(task["status"]["state"]),
        tuple(p.get("text", "") for m in task.get("history", []) for p in m["content"]),
        tuple(p.get("text", "") for a in task.get("artifacts", []) for p in a["parts"]),
    )


def proto03_event(event: Any) -> tuple[str, str]:
    if "task" in event:
        return "task", v1_state(event["task"]["status"]["state"])
    if "statusUpdate" in event:
        return "status", v1_state(event["statusUpdate"]["status"]["state"])
    return "artifact", ""


def proto03_message(text: str, task_id: str) -> dict[str, Any]:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "content": [{"text": text}]}
    return {**message, "taskId": task_id} if task_id else message


class V03Rest(Dialect):
    """v0.3 HTTP+JSON under ``/v1`` (no ``A2A-Version``)."""

    name = "v0.3 HTTP+JSON"

    async def call(self, verb: str, path: str, body: Any = None) -> Any:
        async with self.session.request(verb, self.base + "/v1" + path, json=body) as resp:
            out = await resp.json()
            assert resp.status == 200, (self.name, path, out)
        return out

    async def send(self, text: str, task_id: str = "", *, blocking: bool = True) -> View:
        body = {"message": proto03_message(text, task_id), "configuration": {"blocking": blocking}}
        return proto03_view((await self.call("POST", "/message:send", body))["task"])

    async def get(self, task_id: str) -> View:
        return proto03_view(await self.call("GET", f"/tasks/{task_id}"))

    async def cancel(self, task_id: str) -> View:
        return proto03_view(await self.call("POST", f"/tasks/{task_id}:cancel", {}))

    async def subscribe(self, task_id: str) -> AsyncIterator[tuple[str, str]]:
        url = f"{self.base}/v1/tasks/{task_id}:subscribe"
        async with self.session.get(url, headers={"Accept": "text/event-stream"}) as resp:
            assert resp.content_type == "text/event-stream", await resp.text()
            async for line in resp.content:
                if line.startswith(b"data: "):
                    yield proto03_event(json.loads(line[6:]))


class V03Grpc(Dialect):
    """v0.3 gRPC: the service ``a2a.v1.A2AService`` on the gRPC port."""

    name = "v0.3 gRPC"

    def __init__(self, session: aiohttp.ClientSession, base: str, grpc_target: str) -> None:
        super().__init__(session, base, grpc_target)
        self.channel = grpc.aio.insecure_channel(grpc_target)
        self.stub = v03_grpc.A2AServiceStub(self.channel)

    @staticmethod
    def json(msg: Any) -> Any:
        return json_format.MessageToDict(msg)

    async def send(self, text: str, task_id: str = "", *, blocking: bool = True) -> View:
        request = json_format.ParseDict(
            {"message": proto03_message(text, task_id), "configuration": {"blocking": blocking}},
            v03.SendMessageRequest(),
        )
        return proto03_view(self.json((await self.stub.SendMessage(request, timeout=20)).task))

    async def get(self, task_id: str) -> View:
        return proto03_view(self.json(await self.stub.GetTask(v03.GetTaskRequest(name=f"tasks/{task_id}"))))

    async def cancel(self, task_id: str) -> View:
        task = await self.stub.CancelTask(v03.CancelTaskRequest(name=f"tasks/{task_id}"))
        return proto03_view(self.json(task))

    async def subscribe(self, task_id: str) -> AsyncIterator[tuple[str, str]]:
        async for event in self.stub.TaskSubscription(v03.TaskSubscriptionRequest(name=f"tasks/{task_id}")):
            yield proto03_event(self.json(event))

    async def close(self) -> None:
        await self.channel.close()


#: Every dialect the server speaks, by name.
DIALECTS: dict[str, type[Dialect]] = {d.name: d for d in (V10JsonRpc, V10Grpc, V03JsonRpc, V03Rest, V03Grpc)}
PAIRS = [pytest.param(a, b, id=f"{a} -> {b}") for a, b in permutations(DIALECTS, 2)]


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[A2AServer]:
    store = open_store(f"sqlite:///{tmp_path}/a2a.db")
    srv = A2AServer(InteropAgent(), store, ServerConfig(grpc_port=0, http_port=0, grace_seconds=0.5))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop(0.5)


@pytest.fixture
async def clients(server: A2AServer) -> AsyncIterator[dict[str, Dialect]]:
    base, target = f"http://127.0.0.1:{server.http_port}", f"127.0.0.1:{server.grpc_port}"
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        made = {name: cls(session, base, target) for name, cls in DIALECTS.items()}
        yield made
        for client in made.values():
            await client.close()


@pytest.mark.parametrize(("first", "other"), PAIRS)
async def test_created_in_one_is_read_and_continued_in_the_other(
    clients: dict[str, Dialect], first: str, other: str
) -> None:
    a, b = clients[first], clients[other]
    asked = await a.send("ask")
    assert asked.state == "input-required"
    seen = await b.get(asked.id)
    assert (seen.id, seen.context_id, seen.state) == (asked.id, asked.context_id, "input-required")
    assert seen.history[0] == "ask"
    answered = await b.send("the answer", asked.id)
    assert (answered.id, answered.state, answered.artifacts) == (asked.id, "completed", ("the answer",))
    back = await a.get(asked.id)
    assert back == await b.get(asked.id)  # the same task, whoever reads it
    assert back.state == "completed" and back.artifacts == ("the answer",)
    assert back.history[:2] == ("ask", "what should I echo?") and "the answer" in back.history


@pytest.mark.parametrize(("first", "other"), PAIRS)
async def test_created_in_one_is_canceled_in_the_other(
    clients: dict[str, Dialect], first: str, other: str
) -> None:
    a, b = clients[first], clients[other]
    started = await a.send("slow 30", blocking=False)
    assert started.state in ("submitted", "working")
    canceled = await b.cancel(started.id)
    assert (canceled.id, canceled.state) == (started.id, "canceled")
    assert (await a.get(started.id)).state == "canceled"


@pytest.mark.parametrize(("first", "other"), PAIRS)
async def test_subscribed_in_the_other_sees_the_cancel_from_the_first(
    clients: dict[str, Dialect], first: str, other: str
) -> None:
    a, b = clients[first], clients[other]
    started = await a.send("slow 30", blocking=False)
    events: list[tuple[str, str]] = []
    opened = asyncio.Event()

    async def follow() -> None:
        async for event in b.subscribe(started.id):
            events.append(event)
            opened.set()

    reader = asyncio.create_task(follow())
    await asyncio.wait_for(opened.wait(), 10)
    assert events[0] in (("task", "submitted"), ("task", "working"))
    await a.cancel(started.id)
    await asyncio.wait_for(reader, 10)  # the stream ends at the terminal state
    assert events[-1] == ("status", "canceled"), events
