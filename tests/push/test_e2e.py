"""Push notifications through a real A2AServer: config CRUD over gRPC,
JSON-RPC and HTTP+JSON, and a running task's events reaching a webhook on
127.0.0.1 (issue 5 §1–§3, spec §3.1.7–3.1.10, §4.3.3)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from grpc_status import rpc_status

from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.push import PushDispatcher
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store import TaskStore, open_store
from a2a_grpc.types import Event, pb, pb_grpc
from tests.push.conftest import Receiver

MD = (("a2a-version", "1.0"),)
FAST: dict[str, Any] = {
    "allow": ["127.0.0.1"],
    "base_backoff_seconds": 0.01,
    "max_backoff_seconds": 0.05,
    "poll_interval_seconds": 0.05,
}


class GatedAgent(AgentExecutor):
    """WORKING, then waits for ``release(task_id)``, then three artifacts and
    COMPLETED. Lets a test register webhooks while the task runs."""

    card = pb.AgentCard(
        name="Gated Agent",
        description="Waits for the test before finishing.",
        version="1.0.0",
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="gate", name="Gate", description="Waits.", tags=["test"])],
    )

    def __init__(self) -> None:
        self.gates: dict[str, asyncio.Event] = {}
        self.started: asyncio.Queue[str] = asyncio.Queue()

    def gate(self, task_id: str) -> asyncio.Event:
        return self.gates.setdefault(task_id, asyncio.Event())

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        yield ctx.status(pb.TASK_STATE_WORKING, "working")
        self.started.put_nowait(ctx.task_id)
        await self.gate(ctx.task_id).wait()
        for i in range(3):
            yield ctx.artifact([f"part {i}"], name=f"a{i}")
        yield ctx.status(pb.TASK_STATE_COMPLETED)


class Harness:
    def __init__(self, server: A2AServer, agent: GatedAgent, session: aiohttp.ClientSession) -> None:
        self.server = server
        self.agent = agent
        self.session = session
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}")
        self.stub = pb_grpc.A2AServiceStub(self.channel)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.http_port}"

    async def start_task(self, **config: Any) -> str:
        """A running task (WORKING, waiting at the gate); returns its id."""
        req = pb.SendMessageRequest(
            message=pb.Message(message_id="m1", role=pb.ROLE_USER, parts=[pb.Part(text="go")]),
            configuration=pb.SendMessageConfiguration(return_immediately=True, **config),
        )
        resp = await self.stub.SendMessage(req, metadata=MD)
        task_id = resp.task.id
        assert await asyncio.wait_for(self.agent.started.get(), 5) == task_id
        return task_id

    async def call(self, binding: str, method: str, req: Message, out: type[Message]) -> Any:
        """Calls ``method`` over ``binding``; returns the response message or
        raises A2AError rebuilt from the binding's error form."""
        if binding == "grpc":
            try:
                return await getattr(self.stub, method)(req, metadata=MD)
            except grpc.aio.AioRpcError as exc:
                status = rpc_status.from_call(exc)
                assert status is not None
                raise A2AError.from_status(status) from None
        if binding == "jsonrpc":
            body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": json_format.MessageToDict(req)}
            async with self.session.post(self.base + "/", json=body, headers={"A2A-Version": "1.0"}) as r:
                data = await r.json()
            if "error" in data:
                err = data["error"]
                reason = next(d["reason"] for d in err.get("data", []) if "reason" in d)
                code = ErrorCode.from_reason(reason)
                assert code is not None and err["code"] == code.jsonrpc_code
                raise A2AError(code, err["message"])
            return json_format.ParseDict(data["result"] or {}, out())
        assert binding == "rest"
        verb, path, payload, query = _rest(method, req)
        async with self.session.request(
            verb, self.base + path, json=payload, params=query, headers={"A2A-Version": "1.0"}
        ) as r:
            data = await r.json()
            if r.status != 200:
                err = data["error"]
                reason = next(d["reason"] for d in err.get("details", []) if "reason" in d)
                code = ErrorCode.from_reason(reason)
                assert code is not None and r.status == code.http_status
                raise A2AError(code, err["message"])
        return json_format.ParseDict(data or {}, out())

    async def close(self) -> None:
        await self.channel.close()


def _rest(method: str, req: Any) -> tuple[str, str, Any, dict[str, str]]:
    base = f"/tasks/{req.task_id}/pushNotificationConfigs"
    if method == "CreateTaskPushNotificationConfig":
        body = json_format.MessageToDict(req)
        body.pop("taskId", None)
        return "POST", base, body, {}
    if method == "GetTaskPushNotificationConfig":
        return "GET", f"{base}/{req.id}", None, {}
    if method == "DeleteTaskPushNotificationConfig":
        return "DELETE", f"{base}/{req.id}", None, {}
    assert method == "ListTaskPushNotificationConfigs"
    query = {}
    if req.page_size:
        query["pageSize"] = str(req.page_size)
    if req.page_token:
        query["pageToken"] = req.page_token
    return "GET", base, None, query


MakeHarness = Callable[..., Any]


@pytest.fixture
async def make_harness(tmp_path: Path) -> AsyncIterator[MakeHarness]:
    made: list[Harness] = []
    session = aiohttp.ClientSession()

    async def make(store: TaskStore | None = None, **push: Any) -> Harness:
        store = store or open_store(f"sqlite:///{tmp_path / 'e2e.db'}")
        agent = GatedAgent()
        dispatcher = PushDispatcher(store, **{**FAST, **push})
        server = A2AServer(
            agent, store, ServerConfig(grpc_port=0, http_port=0, grace_seconds=0.5), push=dispatcher
        )
        await server.start()
        h = Harness(server, agent, session)
        made.append(h)
        return h

    yield make
    for h in made:
        await h.close()
        h.agent.gates.clear()
        await h.server.stop()
    await session.close()


def ids_of(hits: list[Any]) -> list[str]:
    return [h.headers["A2A-Notification-Id"] for h in hits]


async def test_card_declares_push(make_harness: MakeHarness) -> None:
    h = await make_harness()
    async with h.session.get(h.base + "/.well-known/agent-card.json") as r:
        card = await r.json()
    assert card["capabilities"]["pushNotifications"] is True


@pytest.mark.parametrize("binding", ["grpc", "jsonrpc", "rest"])
async def test_config_crud_and_delivery_over_each_binding(
    binding: str, make_harness: MakeHarness, receiver: Receiver
) -> None:
    h = await make_harness()
    task_id = await h.start_task()
    TPNC = pb.TaskPushNotificationConfig

    created = await h.call(
        binding,
        "CreateTaskPushNotificationConfig",
        TPNC(
            task_id=task_id,
            url=receiver.url("/kept"),
            token="tok",
            authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="cred"),
        ),
        TPNC,
    )
    assert created.id and created.task_id == task_id and created.url == receiver.url("/kept")
    second = await h.call(
        binding,
        "CreateTaskPushNotificationConfig",
        TPNC(task_id=task_id, id="second", url=receiver.url("/deleted")),
        TPNC,
    )
    assert second.id == "second"

    got = await h.call(
        binding,
        "GetTaskPushNotificationConfig",
        pb.GetTaskPushNotificationConfigRequest(task_id=task_id, id=created.id),
        TPNC,
    )
    assert got.url == created.url and got.token == "tok"

    page1 = await h.call(
        binding,
        "ListTaskPushNotificationConfigs",
        pb.ListTaskPushNotificationConfigsRequest(task_id=task_id, page_size=1),
        pb.ListTaskPushNotificationConfigsResponse,
    )
    assert [c.id for c in page1.configs] == [created.id] and page1.next_page_token
    page2 = await h.call(
        binding,
        "ListTaskPushNotificationConfigs",
        pb.ListTaskPushNotificationConfigsRequest(
            task_id=task_id, page_size=1, page_token=page1.next_page_token
        ),
        pb.ListTaskPushNotificationConfigsResponse,
    )
    assert [c.id for c in page2.configs] == ["second"]

    delete = pb.DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="second")
    from google.protobuf import empty_pb2

    await h.call(binding, "DeleteTaskPushNotificationConfig", delete, empty_pb2.Empty)
    await h.call(binding, "DeleteTaskPushNotificationConfig", delete, empty_pb2.Empty)  # idempotent
    with pytest.raises(A2AError) as info:
        await h.call(
            binding,
            "GetTaskPushNotificationConfig",
            pb.GetTaskPushNotificationConfigRequest(task_id=task_id, id="second"),
            TPNC,
        )
    assert info.value.code is ErrorCode.TASK_NOT_FOUND

    # SSRF and header injection are refused at create time, in the binding's own form
    for bad in (
        TPNC(task_id=task_id, url="http://169.254.169.254/latest/meta-data/"),
        TPNC(task_id=task_id, url="http://0x7f.1/"),
        TPNC(task_id=task_id, url=receiver.url("/x"), token="a\r\nX-Evil: 1"),
    ):
        with pytest.raises(A2AError) as info:
            await h.call(binding, "CreateTaskPushNotificationConfig", bad, TPNC)
        assert info.value.code is ErrorCode.INVALID_PARAMS

    h.agent.gate(task_id).set()  # the task finishes: artifacts, then COMPLETED
    await receiver.wait_for(lambda: len(receiver.on("/kept")) == 4)
    await asyncio.sleep(0.2)
    assert receiver.on("/deleted") == []
    hits = receiver.on("/kept")
    assert [next(iter(hit.body)) for hit in hits] == ["artifactUpdate"] * 3 + ["statusUpdate"]
    assert hits[-1].body["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [hit.body["artifactUpdate"]["artifact"]["name"] for hit in hits[:3]] == ["a0", "a1", "a2"]
    assert hits[0].headers["Authorization"] == "Bearer cred"
    assert hits[0].headers["X-A2A-Notification-Token"] == "tok"
    versions = [int(i.rsplit(":", 1)[1]) for i in ids_of(hits)]
    assert versions == sorted(versions) and len(set(versions)) == 4


async def test_streaming_task_events_reach_the_webhook_in_stream_order(
    make_harness: MakeHarness, receiver: Receiver
) -> None:
    h = await make_harness()
    req = pb.SendMessageRequest(
        message=pb.Message(message_id="m1", role=pb.ROLE_USER, parts=[pb.Part(text="go")]),
        configuration=pb.SendMessageConfiguration(
            task_push_notification_config=pb.TaskPushNotificationConfig(
                url=receiver.url("/stream"), token="t"
            )
        ),
    )
    stream = h.stub.SendStreamingMessage(req, metadata=MD)
    events: list[pb.StreamResponse] = []
    async for event in stream:
        events.append(event)
        if len(events) == 2:  # task + WORKING: let it finish
            h.agent.gate(event.status_update.task_id or event.task.id).set()
    await receiver.wait_for(lambda: len(receiver.hits) == len(events))
    # the webhook saw exactly what the stream saw, in the same order (ProtoJSON)
    assert [hit.body for hit in receiver.hits] == [json_format.MessageToDict(e) for e in events]
    task_id = events[0].task.id
    assert all(i.startswith(task_id + ":") for i in ids_of(receiver.hits))
    assert len(set(ids_of(receiver.hits))) == len(events)


async def test_inline_config_with_a_blocked_url_is_refused(make_harness: MakeHarness) -> None:
    h = await make_harness()
    req = pb.SendMessageRequest(
        message=pb.Message(message_id="m1", role=pb.ROLE_USER, parts=[pb.Part(text="go")]),
        configuration=pb.SendMessageConfiguration(
            task_push_notification_config=pb.TaskPushNotificationConfig(url="http://[::ffff:10.0.0.1]/")
        ),
    )
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await h.stub.SendMessage(req, metadata=MD)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "10.0.0.1 is private" in (info.value.details() or "")


async def test_server_restart_with_pending_deliveries(
    tmp_path: Path, make_harness: MakeHarness, receiver: Receiver
) -> None:
    url = f"sqlite:///{tmp_path / 'restart.db'}"
    receiver.always["/later"] = 503
    first = await make_harness(open_store(url), base_backoff_seconds=0.2, max_backoff_seconds=0.3)
    task_id = await first.start_task(
        task_push_notification_config=pb.TaskPushNotificationConfig(url=receiver.url("/later"))
    )
    first.agent.gate(task_id).set()
    await receiver.wait_for(lambda: len(receiver.hits) >= 1)
    await first.close()
    await first.server.stop()
    sent_before = set(ids_of(receiver.hits))

    receiver.always.clear()
    second = await make_harness(open_store(url))
    # task snapshot, WORKING, three artifacts, COMPLETED
    await receiver.wait_for(lambda: len(set(ids_of(receiver.hits))) == 6, timeout=15)
    order = list(dict.fromkeys(ids_of(receiver.hits)))
    versions = [int(i.rsplit(":", 1)[1]) for i in order]
    assert versions == sorted(versions)
    assert sent_before <= set(order)
    assert second.server.push is not None


async def test_a_hanging_webhook_does_not_hold_up_the_task(
    make_harness: MakeHarness, receiver: Receiver
) -> None:
    """Delivery runs beside execution: the task completes while the webhook
    still sits on the first notification (later ones wait behind it)."""
    receiver.delay["/hang"] = 3.0
    h = await make_harness()
    task_id = await h.start_task(
        task_push_notification_config=pb.TaskPushNotificationConfig(url=receiver.url("/hang"))
    )
    await receiver.wait_for(lambda: len(receiver.hits) == 1)  # the webhook is now stuck
    h.agent.gate(task_id).set()
    for _ in range(200):
        task = await h.stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=MD)
        if task.status.state == pb.TASK_STATE_COMPLETED:
            break
        await asyncio.sleep(0.01)
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert len(receiver.hits) == 1  # completed before the webhook answered even once
    del receiver.delay["/hang"]
    await receiver.wait_for(lambda: len(receiver.hits) >= 6)
