"""SendStreamingMessage and SubscribeToTask as gRPC server streams (spec
§3.1.2, §3.1.6, §3.5.2; design.md stream end A2)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from a2a_grpc.context import Owner
from a2a_grpc.core._executor import AgentExecutor, Event, ExecutorContext
from a2a_grpc.core.ports import StoredTask, TaskWrite
from a2a_grpc.errors import ErrorCode
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.core.agents import ScriptedAgent
from tests.core.helpers import VERSION_MD, connect, msg, raises, read_all, state_of


async def test_stream_task_then_updates_in_order(stub) -> None:
    events = await read_all(stub.SendStreamingMessage(msg("chunks 3"), metadata=VERSION_MD))
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds == ["task", "artifact_update", "artifact_update", "artifact_update", "status_update"]
    assert events[0].task.status.state == pb.TASK_STATE_SUBMITTED
    task_id = events[0].task.id
    arts = [e.artifact_update for e in events[1:4]]
    assert [(a.append, a.last_chunk) for a in arts] == [(False, False), (True, False), (True, True)]
    assert [a.artifact.parts[0].text for a in arts] == ["c0", "c1", "c2"]
    assert all(e.artifact_update.task_id == task_id for e in events[1:4])
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    got = await stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=VERSION_MD)
    assert got.status == events[-1].status_update.status


async def test_stream_ends_at_interrupted(stub) -> None:
    events = await read_all(stub.SendStreamingMessage(msg("ask"), metadata=VERSION_MD))
    assert [state_of(e) for e in events] == [pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_INPUT_REQUIRED]
    # The follow-up continues the same task on a new stream, to its end: the
    # task is active again (WORKING, spec §9.2) and its timestamps never go back.
    task_id = events[0].task.id
    more = await read_all(stub.SendStreamingMessage(msg("yes", task_id=task_id), metadata=VERSION_MD))
    assert more[0].task.id == task_id and more[0].task.status.state == pb.TASK_STATE_WORKING
    assert state_of(more[-1]) == pb.TASK_STATE_COMPLETED
    for stream in (events, more):
        first = stream[0].task.status.timestamp.ToNanoseconds()
        updates = [
            e.status_update.status.timestamp.ToNanoseconds()
            for e in stream[1:]
            if e.HasField("status_update")
        ]
        assert updates and all(first <= t for t in updates)


async def test_stream_history_length_bounds_the_task_event(stub) -> None:
    req = msg("echo hi")
    req.configuration.history_length = 0
    events = await read_all(stub.SendStreamingMessage(req, metadata=VERSION_MD))
    assert events[0].WhichOneof("payload") == "task" and len(events[0].task.history) == 0


async def test_stream_message_only(stub) -> None:
    events = await read_all(stub.SendStreamingMessage(msg("reply"), metadata=VERSION_MD))
    assert len(events) == 1
    assert events[0].WhichOneof("payload") == "message"
    assert events[0].message.parts[0].text == "hi there"


async def test_stream_errors_before_first_event(stub) -> None:
    """An error before the first event: the stream carries no event at all,
    only the error status."""
    cases = [
        (ErrorCode.CONTENT_TYPE_NOT_SUPPORTED, msg("refuse")),
        (ErrorCode.INVALID_AGENT_RESPONSE, msg("empty")),
        (ErrorCode.INTERNAL, msg("boom-first")),
        (ErrorCode.TASK_NOT_FOUND, msg("x", task_id="nope")),
        (ErrorCode.INVALID_PARAMS, pb.SendMessageRequest()),
    ]
    for code, req in cases:
        call = stub.SendStreamingMessage(req, metadata=VERSION_MD)
        got: list[pb.StreamResponse] = []
        with raises(code):
            while (ev := await call.read()) is not grpc.aio.EOF:
                got.append(ev)
        assert len(got) == 0, code


async def test_streaming_not_declared(make_server) -> None:
    card = pb.AgentCard()
    card.CopyFrom(ScriptedAgent.card)
    card.capabilities.streaming = False
    srv = await make_server(ScriptedAgent(card))
    async with connect(srv) as stub:
        with raises(ErrorCode.UNSUPPORTED_OPERATION):
            await read_all(stub.SendStreamingMessage(msg("echo x"), metadata=VERSION_MD))
        task = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
        with raises(ErrorCode.UNSUPPORTED_OPERATION):
            await read_all(stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD))


async def test_subscribe_snapshot_then_updates(stub, agent: ScriptedAgent) -> None:
    task = (await stub.SendMessage(msg("gate sub", return_immediately=True), metadata=VERSION_MD)).task
    await agent.started("sub").wait()
    call = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD)
    first = await call.read()
    assert first.WhichOneof("payload") == "task"
    assert first.task.id == task.id and first.task.status.state == pb.TASK_STATE_WORKING
    agent.gate("sub").set()
    rest = await read_all(call)
    assert [e.WhichOneof("payload") for e in rest] == ["artifact_update", "status_update"]
    assert state_of(rest[-1]) == pb.TASK_STATE_COMPLETED


async def test_subscribe_terminal_and_unknown(stub) -> None:
    done = (await stub.SendMessage(msg("echo done"), metadata=VERSION_MD)).task
    with raises(ErrorCode.UNSUPPORTED_OPERATION):
        await read_all(stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=done.id), metadata=VERSION_MD))
    with raises(ErrorCode.TASK_NOT_FOUND):
        await read_all(stub.SubscribeToTask(pb.SubscribeToTaskRequest(id="nope"), metadata=VERSION_MD))


async def test_subscribe_interrupted_task_follows_next_turn(stub) -> None:
    """SubscribeToTask follows the task until it is terminal, across turns."""
    task = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
    call = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD)
    first = await call.read()
    assert first.task.status.state == pb.TASK_STATE_INPUT_REQUIRED
    done = (await stub.SendMessage(msg("answer", task_id=task.id), metadata=VERSION_MD)).task
    assert done.status.state == pb.TASK_STATE_COMPLETED
    rest = await asyncio.wait_for(read_all(call), 5)
    assert rest[0].WhichOneof("payload") == "task"  # the new turn's SUBMITTED snapshot
    assert state_of(rest[-1]) == pb.TASK_STATE_COMPLETED


async def test_two_subscribers_identical(server, stub, agent: ScriptedAgent) -> None:
    task = (await stub.SendMessage(msg("gate two", return_immediately=True), metadata=VERSION_MD)).task
    await agent.started("two").wait()
    async with connect(server) as other:
        a = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD)
        b = other.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD)
        fa, fb = await a.read(), await b.read()
        assert fa == fb
        agent.gate("two").set()
        ra, rb = await asyncio.gather(read_all(a), read_all(b))
    assert ra == rb
    assert len(ra) == 2 and state_of(ra[-1]) == pb.TASK_STATE_COMPLETED


async def test_stream_and_subscribers_see_same_sequence(server, stub, agent: ScriptedAgent) -> None:
    """Many events: the streaming caller and two subscribers see the same
    updates in the same order (spec §3.5.2)."""
    call = stub.SendStreamingMessage(msg("gate seq"), metadata=VERSION_MD)
    first = await call.read()
    second = await call.read()  # WORKING
    assert state_of(second) == pb.TASK_STATE_WORKING
    async with connect(server) as s2:
        subs = [
            s.SubscribeToTask(pb.SubscribeToTaskRequest(id=first.task.id), metadata=VERSION_MD)
            for s in (stub, s2)
        ]
        snaps = [await s.read() for s in subs]
        assert snaps[0] == snaps[1]
        agent.gate("seq").set()
        results = await asyncio.gather(read_all(call), *(read_all(s) for s in subs))
    assert results[0] == results[1] == results[2]


async def test_client_disconnect_does_not_affect_task(stub, agent: ScriptedAgent) -> None:
    call = stub.SendStreamingMessage(msg("gate gone"), metadata=VERSION_MD)
    first = await call.read()
    await agent.started("gone").wait()
    call.cancel()
    await asyncio.sleep(0.05)
    assert first.task.id not in agent.cancelled
    agent.gate("gone").set()
    for _ in range(100):
        got = await stub.GetTask(pb.GetTaskRequest(id=first.task.id), metadata=VERSION_MD)
        if got.status.state == pb.TASK_STATE_COMPLETED:
            break
        await asyncio.sleep(0.02)
    assert got.status.state == pb.TASK_STATE_COMPLETED
    assert got.artifacts[0].parts[0].text == "opened gone"


async def test_subscriber_disconnect_does_not_disturb_others(server, stub, agent: ScriptedAgent) -> None:
    task = (await stub.SendMessage(msg("gate drop", return_immediately=True), metadata=VERSION_MD)).task
    await agent.started("drop").wait()
    async with connect(server) as other:
        keep = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD)
        drop = other.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD)
        await keep.read()
        await drop.read()
        drop.cancel()
        agent.gate("drop").set()
        rest = await read_all(keep)
        assert state_of(rest[-1]) == pb.TASK_STATE_COMPLETED
        assert await drop.code() == grpc.StatusCode.CANCELLED


class _GatedStore(InMemoryTaskStore):
    """The memory store, pausing on ``hold_get`` after the next ``get`` has
    read (the subscriber's) and on ``hold_update`` before the next
    ``update`` writes, when those are set."""

    def __init__(self) -> None:
        super().__init__()
        self.hold_get: asyncio.Event | None = None
        self.get_read = asyncio.Event()
        self.hold_update: asyncio.Event | None = None
        self.update_held = asyncio.Event()

    async def get(self, task_id: str, owner: Owner) -> StoredTask | None:
        got = await super().get(task_id, owner)
        hold, self.hold_get = self.hold_get, None
        if hold is not None:
            self.get_read.set()
            await hold.wait()
        return got

    async def update(self, write: TaskWrite) -> int:
        if not write.expected_version:  # a creation is not held
            return await super().update(write)
        hold, self.hold_update = self.hold_update, None
        if hold is not None:
            self.update_held.set()
            await hold.wait()
        return await super().update(write)


class _SteppedChunks(AgentExecutor):
    """Yields chunk i of artifact "a" once ``steps[i]`` is set, then completes."""

    card = ScriptedAgent.card

    def __init__(self, n: int) -> None:
        self.steps = [asyncio.Event() for _ in range(n)]

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        for i, step in enumerate(self.steps):
            await step.wait()
            yield ctx.artifact([f"c{i}"], artifact_id="a", append=i > 0)
        yield ctx.status(pb.TASK_STATE_COMPLETED)


async def _stored_chunks(stub: Any, task_id: str, n: int) -> None:
    for _ in range(200):
        got = await stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=VERSION_MD)
        if got.artifacts and len(got.artifacts[0].parts) == n:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"chunk {n - 1} was not stored")


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_subscribe_snapshot_never_holds_a_chunk_still_being_written(make_server: Any) -> None:
    """A subscriber whose store read is older than the execution's last
    write, while the next chunk is being written (applied in place to the
    execution's task before its write commits), gets each chunk once: its
    snapshot is a committed version, not the execution's task in between
    (it used to hold the chunk in flight, which then came again as its
    update)."""
    store, agent = _GatedStore(), _SteppedChunks(3)
    srv = await make_server(agent=agent, store=store)
    async with connect(srv) as stub:
        agent.steps[0].set()
        task = (await stub.SendMessage(msg("go", return_immediately=True), metadata=VERSION_MD)).task
        await _stored_chunks(stub, task.id, 1)
        read_held = store.hold_get = asyncio.Event()
        sub = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD)
        reading = asyncio.ensure_future(read_all(sub))
        await asyncio.wait_for(store.get_read.wait(), 5)  # the subscriber's read: chunk 0 only
        agent.steps[1].set()
        await _stored_chunks(stub, task.id, 2)  # the execution is ahead of that read
        write_held = store.hold_update = asyncio.Event()
        agent.steps[2].set()
        await asyncio.wait_for(store.update_held.wait(), 5)  # chunk 2 applied, not yet written
        read_held.set()
        await asyncio.sleep(0.05)  # the subscriber takes its snapshot now
        write_held.set()
        events = await asyncio.wait_for(reading, 5)
    texts = [p.text for a in events[0].task.artifacts for p in a.parts]
    texts += [
        p.text for e in events[1:] if e.HasField("artifact_update") for p in e.artifact_update.artifact.parts
    ]
    assert texts == ["c0", "c1", "c2"]
