"""Executions (a2a_grpc.core._execution) and the drive loop (a2a_grpc.core._drive) without
a server: busy tasks, interruption before the agent starts, shutdown, and a
lost write race that keeps the other writer's change (memory store)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2a_grpc.context import CallContext, Owner
from a2a_grpc.core._drive import Driver, TaskWriter
from a2a_grpc.core._events import EventBus
from a2a_grpc.core._execution import Execution, Executions, Request
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.core.ports import TaskWrite, task_key
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb

CALL = CallContext(method="/lf.a2a.v1.A2AService/SendMessage", protocol_version="1.0")
OWNER = Owner()


def execution(task_id: str = "t1") -> Execution:
    message = pb.Message(
        message_id="m", role=pb.ROLE_USER, task_id=task_id, context_id="c1", parts=[pb.Part(text="x")]
    )
    return Execution(Request(task_id, "c1", OWNER, message))


def context(ex: Execution) -> ExecutorContext:
    req = ex.request
    return ExecutorContext(message=req.message, task_id=req.task_id, context_id=req.context_id, call=CALL)


class _Agent(AgentExecutor):
    """WORKING, then waits for ``release``, then COMPLETED."""

    card = pb.AgentCard(name="unit")

    def __init__(self) -> None:
        self.ran = False
        self.working = asyncio.Event()
        self.release = asyncio.Event()

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Any]:
        self.ran = True
        yield ctx.status(pb.TASK_STATE_WORKING)
        self.working.set()
        await self.release.wait()
        yield ctx.artifact(["done"], artifact_id="out")
        yield ctx.status(pb.TASK_STATE_COMPLETED)


def executions(agent: AgentExecutor, store: InMemoryTaskStore) -> Executions:
    bus = EventBus()
    return Executions(Driver(agent, TaskWriter(store, store, bus, None)).drive, bus)


async def test_a_busy_task_is_refused_and_free_again_after_its_execution() -> None:
    gate = asyncio.Event()
    drives: list[str] = []

    async def drive(ex: Execution, ctx: ExecutorContext) -> None:
        drives.append(ex.task_id)
        await gate.wait()

    running = Executions(drive, EventBus())
    first = execution()

    async def prepare() -> ExecutorContext:
        return context(first)

    await running.start(first, prepare, stream=False)
    assert running.get(task_key(OWNER, "t1")) is first and first.runner is not None
    with pytest.raises(A2AError) as excinfo:
        await running.start(execution(), prepare, stream=False)
    assert excinfo.value.code is ErrorCode.UNSUPPORTED_OPERATION
    assert "busy" in excinfo.value.message and excinfo.value.metadata == {"taskId": "t1"}
    await running.start(execution("t2"), prepare, stream=True)  # another task is not busy
    gate.set()
    await asyncio.wait_for(first.signals.until_settled(), 5)
    await asyncio.sleep(0)
    assert running.get(task_key(OWNER, "t1")) is None and running.ended >= 1
    assert first.signals.committed  # ended without storing: a waiting caller is woken
    await running.close()


async def test_a_failing_prepare_frees_the_task() -> None:
    async def drive(ex: Execution, ctx: ExecutorContext) -> None:
        raise AssertionError("must not run")

    running = Executions(drive, EventBus())

    async def prepare() -> ExecutorContext:
        raise A2AError(ErrorCode.TASK_NOT_FOUND, "gone")

    ex = execution()
    with pytest.raises(A2AError):
        await running.start(ex, prepare, stream=True)
    assert running.get(task_key(OWNER, "t1")) is None and ex.runner is None and ex.stream is None


@pytest.mark.parametrize(
    ("reason", "code"), [("cancel", ErrorCode.UNSUPPORTED_OPERATION), ("shutdown", ErrorCode.UNAVAILABLE)]
)
async def test_an_interrupt_before_the_agent_starts(reason: str, code: ErrorCode) -> None:
    agent = _Agent()
    running = executions(agent, InMemoryTaskStore())
    ex = execution()

    async def prepare() -> ExecutorContext:
        running.interrupt(ex, reason)  # while the execution is prepared (no runner yet): flagged only
        return context(ex)

    await running.start(ex, prepare, stream=True)
    await asyncio.wait_for(ex.signals.until_settled(), 5)
    assert not agent.ran and ex.progress.current is None
    assert ex.progress.error is not None and ex.progress.error.code is code
    assert running.get(task_key(OWNER, "t1")) is None
    assert ex.stream is not None
    assert [e async for _, e in ex.stream] == [pb.StreamResponse()]  # the stream ends, empty


async def test_close_fails_running_tasks_and_refuses_new_ones() -> None:
    agent = _Agent()
    store = InMemoryTaskStore()
    running = executions(agent, store)
    ex = execution()

    async def prepare() -> ExecutorContext:
        return context(ex)

    await running.start(ex, prepare, stream=False)
    await asyncio.wait_for(agent.working.wait(), 5)
    await running.close(grace_seconds=0.05)
    assert running.closing
    assert ex.signals.settled and running.get(task_key(OWNER, "t1")) is None
    stored = await store.get("t1", OWNER)
    assert stored is not None and stored.task.status.state == pb.TASK_STATE_FAILED
    assert "the server stopped" in stored.task.status.message.parts[0].text
    with pytest.raises(A2AError) as excinfo:
        await running.start(execution("t2"), prepare, stream=False)
    assert excinfo.value.code is ErrorCode.UNAVAILABLE


async def test_a_lost_write_race_keeps_the_other_writers_change() -> None:
    agent = _Agent()
    store = InMemoryTaskStore()
    running = executions(agent, store)
    ex = execution()

    async def prepare() -> ExecutorContext:
        return context(ex)

    await running.start(ex, prepare, stream=False)
    await asyncio.wait_for(agent.working.wait(), 5)
    stored = await store.get("t1", OWNER)
    assert stored is not None
    stored.task.metadata.update({"other": "writer"})
    await store.update(TaskWrite(stored.task, OWNER, stored.version))
    agent.release.set()
    await asyncio.wait_for(ex.signals.until_settled(), 5)
    final = await store.get("t1", OWNER)
    assert final is not None and final.task.status.state == pb.TASK_STATE_COMPLETED
    assert dict(final.task.metadata) == {"other": "writer"}
    assert [a.artifact_id for a in final.task.artifacts] == ["out"]
    assert ex.progress.current == final


async def test_a_terminal_other_writer_stops_the_execution() -> None:
    agent = _Agent()
    store = InMemoryTaskStore()
    running = executions(agent, store)
    ex = execution()

    async def prepare() -> ExecutorContext:
        return context(ex)

    await running.start(ex, prepare, stream=False)
    await asyncio.wait_for(agent.working.wait(), 5)
    stored = await store.get("t1", OWNER)
    assert stored is not None
    stored.task.status.state = pb.TASK_STATE_CANCELED
    await store.update(TaskWrite(stored.task, OWNER, stored.version))
    agent.release.set()
    await asyncio.wait_for(ex.signals.until_settled(), 5)
    final = await store.get("t1", OWNER)
    assert final is not None and final.task.status.state == pb.TASK_STATE_CANCELED
    assert not final.task.artifacts  # the agent's event after the cancel is not stored
    assert ex.progress.current == final


async def test_two_owners_run_tasks_of_one_id_apart() -> None:
    """Running executions are keyed by owner and task id: a task id another
    owner runs is neither busy for a stranger nor reachable by it."""
    gate = asyncio.Event()

    async def drive(ex: Execution, ctx: ExecutorContext) -> None:
        await gate.wait()

    bus = EventBus()
    running = Executions(drive, bus)
    mine = execution("shared")
    theirs = Execution(Request("shared", "c2", Owner("t", "stranger"), mine.request.message))

    async def prepare() -> ExecutorContext:
        return context(mine)

    await running.start(mine, prepare, stream=True)
    await running.start(theirs, prepare, stream=True)  # not busy: another owner's task
    assert running.get(task_key(OWNER, "shared")) is mine
    assert running.get(task_key(Owner("t", "stranger"), "shared")) is theirs
    assert running.get(task_key(Owner("t", "other"), "shared")) is None
    assert running.running_for("stranger") == 1 and running.running_for("") == 1
    running.interrupt(theirs, "cancel")
    assert mine.cancel_reason is None
    gate.set()
    await asyncio.wait_for(mine.signals.until_settled(), 5)
    await asyncio.wait_for(theirs.signals.until_settled(), 5)
    # Each execution's end (it stored nothing) ends its own stream only.
    assert mine.stream is not None and theirs.stream is not None
    assert mine.stream.key != theirs.stream.key
    await running.close()


async def test_the_bus_keeps_owners_tasks_of_one_id_apart() -> None:
    bus = EventBus()
    mine, theirs = ("", "", "shared"), ("t", "stranger", "shared")
    sub = bus.subscribe(mine)
    other = bus.subscribe(theirs)
    bus.publish(theirs, 0, pb.StreamResponse(), last=True)  # the stranger's execution ended
    assert bus.subscriber_count(mine) == 1 and bus.subscriber_count(theirs) == 0
    assert [e async for _v, e in other] == [pb.StreamResponse()]
    event = pb.StreamResponse(status_update=pb.TaskStatusUpdateEvent(task_id="shared"))
    bus.publish(mine, 2, event, last=True)
    assert [(v, e) async for v, e in sub] == [(2, event)]
