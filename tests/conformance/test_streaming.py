"""SendStreamingMessage and SubscribeToTask on every binding (spec §3.1.2, §3.1.6)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb
from tests.conformance.clients import collect, collect_with_error
from tests.conformance.scenario import kinds, send, start_holding

pytestmark = pytest.mark.asyncio(loop_scope="package")


async def test_stream_order_and_end(binding, transcript):
    t = transcript
    events = t.add("stream", await collect(binding, "SendStreamingMessage", send("chunks 3")))
    assert kinds(events) == ["task", "artifact_update", "artifact_update", "artifact_update", "status_update"]
    task_id = events[0].task.id
    assert all(e.artifact_update.task_id == task_id for e in events[1:4])
    assert [(e.artifact_update.append, e.artifact_update.last_chunk) for e in events[1:4]] == [
        (False, False),
        (True, False),
        (True, True),
    ]
    assert [e.artifact_update.artifact.parts[0].text for e in events[1:4]] == ["c0", "c1", "c2"]
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    # The stream ended after the terminal state; the stored task has the assembled artifact.
    task = t.add("get", await binding.call("GetTask", pb.GetTaskRequest(id=task_id)))
    assert [p.text for p in task.artifacts[0].parts] == ["c0", "c1", "c2"]
    t.check_parity()


async def test_stream_message_only(binding, transcript):
    events = transcript.add("stream", await collect(binding, "SendStreamingMessage", send("reply")))
    assert kinds(events) == ["message"]
    assert events[0].message.parts[0].text == "hi there"
    transcript.check_parity()


async def test_stream_ends_on_input_required_and_resumes(binding, transcript):
    t = transcript
    first = t.add("ask", await collect(binding, "SendStreamingMessage", send("ask")))
    assert kinds(first) == ["task", "status_update"]
    assert first[-1].status_update.status.state == pb.TASK_STATE_INPUT_REQUIRED
    task_id = first[0].task.id
    second = t.add("answer", await collect(binding, "SendStreamingMessage", send("red", task_id=task_id)))
    assert kinds(second)[0] == "task" and second[0].task.id == task_id
    assert second[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    t.check_parity()


async def test_stream_error_before_first_event(binding, transcript):
    events, err = await collect_with_error(binding, "SendStreamingMessage", send("refuse"))
    assert events == []
    assert transcript.error("refused", err).code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED
    events, err = await collect_with_error(binding, "SendStreamingMessage", send("x", task_id="nope"))
    assert events == []
    assert transcript.error("unknown task", err).code is ErrorCode.TASK_NOT_FOUND
    transcript.check_parity()


async def test_subscribe_snapshot_first_then_updates_until_terminal(binding, transcript):
    t = transcript
    task = await start_holding(binding)
    stream = binding.open_stream("SubscribeToTask", pb.SubscribeToTaskRequest(id=task.id))
    first = await anext(stream)
    t.add("snapshot", first)
    assert first.WhichOneof("payload") == "task"
    assert first.task.id == task.id and first.task.status.state == pb.TASK_STATE_WORKING
    t.add("cancel", await binding.call("CancelTask", pb.CancelTaskRequest(id=task.id)))
    rest = t.add("after cancel", [e async for e in stream])
    assert kinds(rest) == ["status_update"]
    assert rest[0].status_update.status.state == pb.TASK_STATE_CANCELED
    t.check_parity()


async def test_subscribe_on_terminal_or_unknown_task(binding, transcript):
    t = transcript
    done = (await binding.call("SendMessage", send("echo done"))).task
    events, err = await collect_with_error(binding, "SubscribeToTask", pb.SubscribeToTaskRequest(id=done.id))
    assert events == []
    assert t.error("terminal", err).code is ErrorCode.UNSUPPORTED_OPERATION
    events, err = await collect_with_error(
        binding, "SubscribeToTask", pb.SubscribeToTaskRequest(id="missing")
    )
    assert events == []
    assert t.error("unknown", err).code is ErrorCode.TASK_NOT_FOUND
    t.check_parity()


async def test_two_subscribers_see_the_same_events(binding, transcript):
    t = transcript
    task = await start_holding(binding)
    streams = [
        binding.open_stream("SubscribeToTask", pb.SubscribeToTaskRequest(id=task.id)) for _ in range(2)
    ]
    firsts = [await anext(s) for s in streams]
    await binding.call("CancelTask", pb.CancelTaskRequest(id=task.id))
    tails = [[e async for e in s] for s in streams]
    assert tails[0] == tails[1] and firsts[0] == firsts[1]
    t.add("subscriber", [firsts[0], *tails[0]])
    t.check_parity()


async def test_disconnect_ends_the_subscription_not_the_task(binding, transcript, servers):
    t = transcript
    bus = servers.main.handler.bus
    task = await start_holding(binding)
    key = ("", "", task.id)  # (the bus keys a task by its owner: here the anonymous caller)
    stream = binding.open_stream("SubscribeToTask", pb.SubscribeToTaskRequest(id=task.id))
    t.add("snapshot", await anext(stream))
    assert bus.subscriber_count(key) == 1
    await stream.aclose()  # the client goes away
    for _ in range(50):  # the gateway checks for vanished clients every second
        if bus.subscriber_count(key) == 0:
            break
        await asyncio.sleep(0.1)
    assert bus.subscriber_count(key) == 0
    still = t.add("after disconnect", await binding.call("GetTask", pb.GetTaskRequest(id=task.id)))
    assert still.status.state == pb.TASK_STATE_WORKING
    # A new subscription works and sees the cancel.
    again = binding.open_stream("SubscribeToTask", pb.SubscribeToTaskRequest(id=task.id))
    assert (await anext(again)).task.status.state == pb.TASK_STATE_WORKING
    await binding.call("CancelTask", pb.CancelTaskRequest(id=task.id))
    tail = [e async for e in again]
    assert tail[-1].status_update.status.state == pb.TASK_STATE_CANCELED
    t.check_parity()


async def test_rest_subscribe_with_get(servers):
    """The proto's GET form of SubscribeToTask works like the prose's POST (design.md A1)."""
    from tests.conformance.conftest import _binding

    async for rest in _binding("rest", servers.main):
        task = await start_holding(rest)
        rest.subscribe_verb = "GET"
        stream = rest.open_stream("SubscribeToTask", pb.SubscribeToTaskRequest(id=task.id))
        assert (await anext(stream)).task.id == task.id
        await rest.call("CancelTask", pb.CancelTaskRequest(id=task.id))
        tail = [e async for e in stream]
        assert tail[-1].status_update.status.state == pb.TASK_STATE_CANCELED
        with contextlib.suppress(A2AError):
            await stream.aclose()
