"""The orchestrator agent on real servers: a registry, delegate agents and
the orchestrator on 127.0.0.1, driven by A2AClient."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from google.protobuf import json_format

from a2a_grpc.agents._orchestrator import OrchestratorAgent
from a2a_grpc.client import A2AClient
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext, data_part
from a2a_grpc.errors import A2AError
from a2a_grpc.registry._client import RegistryClient
from a2a_grpc.registry._server import RegistryServer
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import Event, pb
from tests.registry.conftest import card, skill, url_of


class WorkAgent(AgentExecutor):
    """A delegate with skill ``work``: the text is a command."""

    def __init__(self, name: str) -> None:
        self.card = card(name, skill("work", "test"))
        self.name = name
        self.cancelled = asyncio.Event()

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        text = ctx.text().strip()
        if ctx.task is not None and ctx.task.status.state in (
            pb.TASK_STATE_INPUT_REQUIRED,
            pb.TASK_STATE_AUTH_REQUIRED,
        ):
            yield ctx.artifact([f"got: {text}"], name="answer")
            yield ctx.status(pb.TASK_STATE_COMPLETED, "answered")
        elif text == "ask":
            yield ctx.status(pb.TASK_STATE_INPUT_REQUIRED, "which file?")
        elif text == "auth":
            yield ctx.status(pb.TASK_STATE_AUTH_REQUIRED, "sign in at https://example.com/login")
        elif text == "slow":
            yield ctx.status(pb.TASK_STATE_WORKING, "started")
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
            yield ctx.status(pb.TASK_STATE_COMPLETED)
        elif text == "fail":
            yield ctx.status(pb.TASK_STATE_FAILED, "broken")
        else:
            yield ctx.status(pb.TASK_STATE_WORKING, f"step 1 by {self.name}")
            yield ctx.artifact([data_part({"by": self.name}), f"result by {self.name}"], name="result")
            yield ctx.status(pb.TASK_STATE_COMPLETED, "done")


@pytest.fixture
async def world(registry: RegistryServer) -> AsyncIterator[Callable[..., Any]]:
    """start(*names, order=...) -> (orchestrator client, {name: (server, agent)})."""
    servers: list[A2AServer] = []
    clients: list[A2AClient] = []

    async def start(
        *names: str, order: tuple[str, ...] = ("GRPC", "JSONRPC", "HTTP+JSON"), binding: str = "grpc"
    ):
        delegates = {}
        async with RegistryClient(f"grpc://{registry.grpc_target}") as reg:
            for name in names:
                agent = WorkAgent(name)
                cfg = ServerConfig(grpc_port=0, http_port=0, interface_order=order)
                srv = A2AServer(agent, InMemoryTaskStore(), cfg)
                await srv.start()
                servers.append(srv)
                delegates[name] = (srv, agent, await reg.register(url_of(srv)))
        orch = A2AServer(
            OrchestratorAgent(f"grpc://{registry.grpc_target}", timeout=10.0, connect_timeout=2.0),
            InMemoryTaskStore(),
            ServerConfig(grpc_port=0, http_port=0),
        )
        await orch.start()
        servers.append(orch)
        client = await A2AClient.connect(url_of(orch), bindings=[binding])
        clients.append(client)
        return client, delegates

    yield start
    for c in clients:
        await c.close()
    for s in servers:
        with __import__("contextlib").suppress(Exception):
            await s.stop(0.1)


def _work(text: str) -> list[pb.Part]:
    return [data_part({"skill": "work"}), pb.Part(text=text)]


def _texts(status: pb.TaskStatus) -> str:
    return " ".join(p.text for p in status.message.parts if p.text)


def _delegate(meta: Any) -> dict[str, Any]:
    return dict(json_format.MessageToDict(meta)["delegate"])


async def _collect(stream: AsyncIterator[pb.StreamResponse]) -> list[pb.StreamResponse]:
    return [event async for event in stream]


@pytest.mark.parametrize("order", [("GRPC",), ("JSONRPC",), ("HTTP+JSON",)], ids=["grpc", "jsonrpc", "rest"])
async def test_delegates_relaying_progress_and_artifacts(world: Any, order: tuple[str, ...]):
    client, delegates = await world("Alpha", order=order, binding="jsonrpc")
    events = await _collect(client.send_streaming_message(_work("go")))
    statuses = [e.status_update.status for e in events if e.HasField("status_update")]
    texts = [_texts(s) for s in statuses]
    binding = {"GRPC": "grpc", "JSONRPC": "jsonrpc", "HTTP+JSON": "rest"}[order[0]]
    assert texts[0] == f"delegating skill 'work' to Alpha over {binding}"
    assert "step 1 by Alpha" in texts and statuses[-1].state == pb.TASK_STATE_COMPLETED
    artifacts = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert len(artifacts) == 1 and artifacts[0].parts[1].text == "result by Alpha"
    meta = _delegate(artifacts[0].metadata)
    assert meta["name"] == "Alpha" and meta["agentId"] == delegates["Alpha"][2].agent_id
    # The delegate's own task is there, completed.
    async with await A2AClient.connect(url_of(delegates["Alpha"][0])) as direct:
        assert (await direct.get_task(meta["taskId"])).status.state == pb.TASK_STATE_COMPLETED
    task = await client.get_task(events[0].task.id)
    assert task.status.state == pb.TASK_STATE_COMPLETED and task.artifacts[0].name == "result"


async def test_input_required_goes_up_and_the_follow_up_down(world: Any):
    client, delegates = await world("Asker", binding="rest")
    first = await client.send_message(_work("ask"))
    assert first.task.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert _texts(first.task.status) == "which file?"
    meta = _delegate(first.task.status.message.metadata)
    again = await client.send_message("app/db.py", task_id=first.task.id, context_id=first.task.context_id)
    assert again.task.status.state == pb.TASK_STATE_COMPLETED
    assert [a.parts[0].text for a in again.task.artifacts] == ["got: app/db.py"]
    async with await A2AClient.connect(url_of(delegates["Asker"][0])) as direct:
        theirs = await direct.get_task(meta["taskId"])
    assert (
        theirs.status.state == pb.TASK_STATE_COMPLETED
        and theirs.artifacts[0].parts[0].text == "got: app/db.py"
    )
    auth = await client.send_message(_work("auth"))
    assert auth.task.status.state == pb.TASK_STATE_AUTH_REQUIRED
    assert "sign in" in _texts(auth.task.status)


async def test_cancel_cascades_to_the_delegate(world: Any):
    client, delegates = await world("Sleeper")
    stream = client.send_streaming_message(_work("slow"))
    task_id = delegate_task = ""
    async for event in stream:
        if event.HasField("task"):
            task_id = event.task.id
        if event.HasField("status_update") and _texts(event.status_update.status) == "started":
            delegate_task = _delegate(event.status_update.status.message.metadata)["taskId"]
            break
    await stream.aclose()
    canceled = await client.cancel_task(task_id)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    await asyncio.wait_for(delegates["Sleeper"][1].cancelled.wait(), 5)
    async with await A2AClient.connect(url_of(delegates["Sleeper"][0])) as direct:
        assert (await direct.get_task(delegate_task)).status.state == pb.TASK_STATE_CANCELED


async def test_fails_over_to_the_next_agent(world: Any):
    client, delegates = await world("One", "Two")
    ordered = sorted(delegates.values(), key=lambda d: d[2].agent_id)
    await ordered[0][0].stop(0.1)  # still healthy in the registry: not checked since
    result = await client.send_message(_work("go"))
    assert result.task.status.state == pb.TASK_STATE_COMPLETED
    survivor = ordered[1][1].name
    assert result.task.artifacts[0].parts[1].text == f"result by {survivor}"
    await ordered[1][0].stop(0.1)
    failed = await client.send_message(_work("go"))
    assert failed.task.status.state == pb.TASK_STATE_FAILED
    text = _texts(failed.task.status)
    assert "skill 'work'" in text and "One: UNAVAILABLE" in text and "Two: UNAVAILABLE" in text


async def test_clear_failures(world: Any):
    client, _ = await world("Broken")
    failed = await client.send_message(_work("fail"))
    assert failed.task.status.state == pb.TASK_STATE_FAILED
    assert _texts(failed.task.status) == "skill 'work': Broken: its task ended FAILED: broken"
    none = await client.send_message([data_part({"skill": "juggling"}), pb.Part(text="x")])
    assert _texts(none.task.status) == "no healthy agent in the registry offers skill 'juggling'"
    with pytest.raises(A2AError) as info:
        await client.send_message("hello")
    assert info.value.code.reason == "INVALID_PARAMS" and "which skill" in info.value.message
