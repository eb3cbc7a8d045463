"""Events an agent yields together go to the store in one write (issue 17).

The stores here are real ones (memory, SQLite) that count their writes; the
event sequence a stream and the push outbox see must be the one they saw
when each event was its own write.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from a2a_grpc.agents._echo import EchoAgent
from a2a_grpc.context import CallContext
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.core._handler import RequestHandler
from a2a_grpc.core.ports import TaskWrite
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.store._sql import SqlTaskStore
from a2a_grpc.types import pb

_VERSION = (("a2a-version", "1.0"),)


class _Counting:
    """Mixin: counts task writes (creations and updates) of a real store."""

    writes: int
    gate: asyncio.Event | None

    async def update(self, write: TaskWrite) -> int:
        self.writes += 1
        if self.gate is not None and write.expected_version:  # (a creation is never held)
            self.waiting.set()
            await self.gate.wait()
        return await super().update(write)  # type: ignore[misc]


class _CountingMemory(_Counting, InMemoryTaskStore):
    def __init__(self) -> None:
        super().__init__()
        self.writes, self.gate, self.waiting = 0, None, asyncio.Event()


class _CountingSql(_Counting, SqlTaskStore):
    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.writes, self.gate, self.waiting = 0, None, asyncio.Event()


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    s: Any = _CountingMemory() if request.param == "memory" else _CountingSql(f"sqlite:///{tmp_path}/t.db")
    await s.open()
    yield s
    await s.close()


class _Sink:
    """Push delivery that only hears of committed outbox rows (they stay in
    the store's outbox, read back by the test)."""

    async def check_config(self, config: pb.TaskPushNotificationConfig) -> None:
        return None

    def wake(self) -> None:
        return None


class _Burst(AgentExecutor):
    """Yields ``events(ctx)`` with no wait between them; ``pause`` first
    waits (so the task exists in a write of its own)."""

    card = pb.AgentCard(
        name="burst", capabilities=pb.AgentCapabilities(streaming=True, push_notifications=True)
    )

    def __init__(self, pause: bool = False, slow: bool = False) -> None:
        self.pause, self.slow = pause, slow
        self.cancelled = False

    def events(self, ctx: ExecutorContext) -> Sequence[Any]:
        chunk = [ctx.artifact([f"c{i}"], artifact_id="a", append=i > 0) for i in range(3)]
        return [*chunk, ctx.status(pb.TASK_STATE_COMPLETED, "done")]

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Any]:
        if self.pause:
            yield ctx.status(pb.TASK_STATE_WORKING)
            await asyncio.sleep(0)
        try:
            for event in self.events(ctx):
                if self.slow and isinstance(event, pb.TaskStatusUpdateEvent):
                    await asyncio.sleep(30)
                yield event
        except asyncio.CancelledError:
            self.cancelled = True
            raise


def _call(method: str) -> CallContext:
    return CallContext.from_metadata(f"/lf.a2a.v1.A2AService/{method}", _VERSION)


def _send(text: str = "hi", **config: Any) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(
        message=pb.Message(message_id="m-" + text, role=pb.ROLE_USER, parts=[pb.Part(text=text)]),
        configuration=pb.SendMessageConfiguration(**config),
    )


async def test_a_blocking_echo_send_is_one_write(store: Any) -> None:
    handler = RequestHandler(EchoAgent(), store, EchoAgent.card)
    task = (await handler.send_message(_send(), _call("SendMessage"))).task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert [p.text for p in task.artifacts[0].parts] == ["hi"]
    assert store.writes == 1  # creation, artifact and COMPLETED: 2 writes before
    stored = await store.get(task.id, _call("GetTask").owner)
    assert stored is not None and stored.version == 3 and stored.task == task
    await handler.close()


async def test_a_burst_streams_the_same_events_with_their_versions(store: Any) -> None:
    agent = _Burst()
    handler = RequestHandler(agent, store, agent.card)
    events = [e async for e in handler.send_streaming_message(_send(), _call("SendStreamingMessage"))]
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds == ["task", "artifact_update", "artifact_update", "artifact_update", "status_update"]
    assert [e.artifact_update.append for e in events[1:4]] == [False, True, True]
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert store.writes == 1
    task_id = events[0].task.id
    stored = await store.get(task_id, _call("GetTask").owner)
    assert stored is not None and stored.version == 5
    assert [p.text for p in stored.task.artifacts[0].parts] == ["c0", "c1", "c2"]
    await handler.close()


async def test_a_burst_after_creation_is_one_update_with_an_outbox_row_per_event(store: Any) -> None:
    agent = _Burst(pause=True)
    handler = RequestHandler(agent, store, agent.card, push=_Sink())
    webhook = pb.TaskPushNotificationConfig(url="https://hooks.example.com/a2a")
    req = _send(task_push_notification_config=webhook)
    sub = [e async for e in handler.send_streaming_message(req, _call("SendStreamingMessage"))]
    task_id = sub[0].task.id
    # creation, its snapshot for the webhook, the WORKING status, then the burst in one write
    assert store.writes == 4
    rows = await store.outbox_due(now=2**40, limit=100)
    mine = [r.entry for r in rows if r.entry.task_id == task_id]
    assert [e.event_id for e in mine] == [f"{task_id}:{v}" for v in range(2, 8)]
    bodies = [pb.StreamResponse.FromString(e.payload) for e in mine]
    assert bodies[2:] == sub[2:]  # the burst: the same events, in order, to the stream and the webhook
    stored = await store.get(task_id, _call("GetTask").owner)
    assert stored is not None and stored.version == 7
    await handler.close()


class _BadBurst(_Burst):
    def events(self, ctx: ExecutorContext) -> Sequence[Any]:
        bad = ctx.artifact(["x"])
        bad.artifact.artifact_id = ""  # refused: an artifact update needs an id
        return [ctx.artifact(["ok"], artifact_id="good"), bad, ctx.status(pb.TASK_STATE_COMPLETED)]


async def test_an_invalid_event_in_a_burst_fails_the_task_after_the_valid_ones(store: Any) -> None:
    handler = RequestHandler(_BadBurst(), store, _BadBurst.card)
    task = (await handler.send_message(_send(), _call("SendMessage"))).task
    assert task.status.state == pb.TASK_STATE_FAILED
    assert "INVALID_AGENT_RESPONSE" in task.status.message.parts[0].text
    assert [a.artifact_id for a in task.artifacts] == ["good"]
    assert store.writes == 2  # creation with the valid artifact, then FAILED
    await handler.close()


async def test_cancel_between_events_of_a_slow_agent_wins(store: Any) -> None:
    agent = _Burst(slow=True)
    handler = RequestHandler(agent, store, agent.card)
    task = (await handler.send_message(_send(return_immediately=True), _call("SendMessage"))).task
    for _ in range(50):  # the chunks are stored (one write); the agent sleeps before COMPLETED
        stored = await store.get(task.id, _call("GetTask").owner)
        if stored is not None and stored.task.artifacts:
            break
        await asyncio.sleep(0.01)
    canceled = await handler.cancel_task(pb.CancelTaskRequest(id=task.id), _call("CancelTask"))
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    assert [p.text for p in canceled.artifacts[0].parts] == ["c0", "c1", "c2"]
    assert agent.cancelled
    assert store.writes == 2  # the burst, then CANCELED
    await handler.close()


async def test_a_cancel_during_a_burst_write_waits_for_it_then_stops_the_agent(store: Any) -> None:
    class _ThenWait(_Burst):
        def events(self, ctx: ExecutorContext) -> Sequence[Any]:
            return [ctx.artifact([f"c{i}"], artifact_id="a", append=i > 0) for i in range(2)]

        async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Any]:
            async for event in super().execute(ctx):
                yield event
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.cancelled = True
                raise

    agent = _ThenWait(pause=True)
    handler = RequestHandler(agent, store, agent.card)
    store.gate = asyncio.Event()  # updates wait: the first is the burst (creation is a create)
    task = (await handler.send_message(_send(return_immediately=True), _call("SendMessage"))).task
    await asyncio.wait_for(store.waiting.wait(), 5)
    stopping = asyncio.ensure_future(
        handler.cancel_task(pb.CancelTaskRequest(id=task.id), _call("CancelTask"))
    )
    for _ in range(20):
        await asyncio.sleep(0)
    store.gate.set()
    canceled = await asyncio.wait_for(stopping, 5)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    assert [p.text for p in canceled.artifacts[0].parts] == ["c0", "c1"]  # the write was not cut short
    assert agent.cancelled  # the agent was inside its wait, and was cancelled there
    await handler.close()
