"""Task lifecycle rules (spec-digest §9, design.md decisions) over gRPC, on
both stores."""

from __future__ import annotations

import asyncio

import pytest

from a2a_grpc.errors import ErrorCode
from a2a_grpc.types import pb
from tests.core.agents import SECRET, ScriptedAgent
from tests.core.helpers import VERSION_MD, msg, raises, read_all, state_of, total


async def get(stub, task_id: str) -> pb.Task:
    return await stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=VERSION_MD)


async def wait_state(stub, task_id: str, state: int) -> pb.Task:
    for _ in range(200):
        task = await get(stub, task_id)
        if task.status.state == state:
            return task
        await asyncio.sleep(0.01)
    raise AssertionError(f"task {task_id} never reached {pb.TaskState.Name(state)}: {task.status}")


# --- identifiers -------------------------------------------------------------


async def test_context_id_generated_and_kept(stub) -> None:
    a = (await stub.SendMessage(msg("echo a"), metadata=VERSION_MD)).task
    b = (await stub.SendMessage(msg("echo b"), metadata=VERSION_MD)).task
    assert a.context_id and b.context_id and a.context_id != b.context_id
    assert a.id != b.id
    c = (await stub.SendMessage(msg("echo c", context_id=a.context_id), metadata=VERSION_MD)).task
    assert c.context_id == a.context_id and c.id not in (a.id, b.id)
    own = (await stub.SendMessage(msg("echo d", context_id="client-ctx-1"), metadata=VERSION_MD)).task
    assert own.context_id == "client-ctx-1"


async def test_context_inferred_from_task(stub) -> None:
    first = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
    second = (await stub.SendMessage(msg("fine", task_id=first.id), metadata=VERSION_MD)).task
    assert second.id == first.id and second.context_id == first.context_id
    assert all(m.context_id == first.context_id and m.task_id == first.id for m in second.history)


async def test_context_mismatch_rejected_nothing_stored(stub, agent: ScriptedAgent) -> None:
    first = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
    runs = len(agent.seen)
    with raises(ErrorCode.INVALID_PARAMS) as r:
        await stub.SendMessage(msg("fine", task_id=first.id, context_id="another"), metadata=VERSION_MD)
    assert "message.context_id" in r.violations
    assert len(agent.seen) == runs
    assert await get(stub, first.id) == first
    assert await total(stub) == 1


async def test_follow_up_refused_before_first_event(stub) -> None:
    """An agent error before its first event on an existing task fails the
    request and leaves the task exactly as it was (the message is not added)."""
    task = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
    with raises(ErrorCode.CONTENT_TYPE_NOT_SUPPORTED):
        await stub.SendMessage(msg("refuse", task_id=task.id), metadata=VERSION_MD)
    assert await get(stub, task.id) == task
    done = (await stub.SendMessage(msg("fine", task_id=task.id), metadata=VERSION_MD)).task
    assert done.status.state == pb.TASK_STATE_COMPLETED


async def test_unknown_task_id(stub, agent: ScriptedAgent) -> None:
    with raises(ErrorCode.TASK_NOT_FOUND) as r:
        await stub.SendMessage(msg("hello", task_id="client-made-id"), metadata=VERSION_MD)
    assert r.error is not None and r.error.metadata["taskId"] == "client-made-id"
    assert agent.seen == []
    assert await total(stub) == 0


@pytest.mark.parametrize(
    "cmd,state", [("echo x", pb.TASK_STATE_COMPLETED), ("reject", pb.TASK_STATE_REJECTED)]
)
async def test_message_to_terminal_task(stub, cmd: str, state: int) -> None:
    done = (await stub.SendMessage(msg(cmd), metadata=VERSION_MD)).task
    assert done.status.state == state
    with raises(ErrorCode.UNSUPPORTED_OPERATION):
        await stub.SendMessage(msg("again", task_id=done.id), metadata=VERSION_MD)
    assert await get(stub, done.id) == done


async def test_message_to_busy_task(stub, agent: ScriptedAgent) -> None:
    task = (await stub.SendMessage(msg("gate busy", return_immediately=True), metadata=VERSION_MD)).task
    await agent.started("busy").wait()
    before = await get(stub, task.id)
    with raises(ErrorCode.UNSUPPORTED_OPERATION) as r:
        await stub.SendMessage(msg("second", task_id=task.id), metadata=VERSION_MD)
    assert "busy" in r.details
    with raises(ErrorCode.UNSUPPORTED_OPERATION):
        await read_all(stub.SendStreamingMessage(msg("third", task_id=task.id), metadata=VERSION_MD))
    assert await get(stub, task.id) == before
    assert len(agent.seen) == 1
    agent.gate("busy").set()
    done = await wait_state(stub, task.id, pb.TASK_STATE_COMPLETED)
    assert [m.parts[0].text for m in done.history if m.role == pb.ROLE_USER] == ["gate busy"]


# --- artifacts -----------------------------------------------------------------


async def test_artifact_chunks_assembled(stub) -> None:
    task = (await stub.SendMessage(msg("chunks 4"), metadata=VERSION_MD)).task
    got = await get(stub, task.id)
    assert len(got.artifacts) == 1
    assert got.artifacts[0].artifact_id == "a1"
    assert [p.text for p in got.artifacts[0].parts] == ["c0", "c1", "c2", "c3"]


async def test_append_on_unknown_artifact_creates_it(stub) -> None:
    task = (await stub.SendMessage(msg("orphan-append"), metadata=VERSION_MD)).task
    got = await get(stub, task.id)
    assert [(a.artifact_id, [p.text for p in a.parts]) for a in got.artifacts] == [("never-sent", ["tail"])]


async def test_non_append_replaces_artifact(stub) -> None:
    task = (await stub.SendMessage(msg("replace"), metadata=VERSION_MD)).task
    assert [(a.artifact_id, a.parts[0].text) for a in task.artifacts] == [("r", "second")]


# --- invalid agents -------------------------------------------------------------


def failure_text(task: pb.Task) -> str:
    assert task.status.state == pb.TASK_STATE_FAILED
    return "".join(p.text for p in task.status.message.parts)


@pytest.mark.parametrize(
    "cmd",
    [
        "bad-end",
        "bad other-task",
        "bad other-context",
        "bad unspecified",
        "bad no-artifact-id",
        "bad empty-artifact",
        "bad message",
        "bad not-an-event",
    ],
)
async def test_invalid_sequence_fails_task(stub, cmd: str) -> None:
    task = (await stub.SendMessage(msg(cmd), metadata=VERSION_MD)).task
    assert failure_text(task).startswith("INVALID_AGENT_RESPONSE")
    assert await get(stub, task.id) == task


@pytest.mark.parametrize("kind", ["other-task", "other-context", "not-an-event"])
async def test_unattributable_first_event_is_an_error(stub, kind: str) -> None:
    """A first event that is not about this task cannot start one: the request
    fails with INVALID_AGENT_RESPONSE and nothing is stored."""
    with raises(ErrorCode.INVALID_AGENT_RESPONSE):
        await stub.SendMessage(msg(f"bad-first {kind}"), metadata=VERSION_MD)
    assert await total(stub) == 0


@pytest.mark.parametrize("kind", ["unspecified", "no-artifact-id", "empty-artifact"])
async def test_malformed_first_event_fails_task(stub, kind: str) -> None:
    """A first event about this task that is malformed: the task exists and
    is FAILED with INVALID_AGENT_RESPONSE."""
    task = (await stub.SendMessage(msg(f"bad-first {kind}"), metadata=VERSION_MD)).task
    assert failure_text(task).startswith("INVALID_AGENT_RESPONSE")
    assert await total(stub) == 1


async def test_agent_without_events(stub) -> None:
    with raises(ErrorCode.INVALID_AGENT_RESPONSE):
        await stub.SendMessage(msg("empty"), metadata=VERSION_MD)
    assert await total(stub) == 0


async def test_agent_exception_fails_task_without_leaking(stub) -> None:
    task = (await stub.SendMessage(msg("boom"), metadata=VERSION_MD)).task
    text = failure_text(task)
    assert text.startswith("INTERNAL")
    assert SECRET not in text and "Traceback" not in text and "postgres" not in text
    with raises(ErrorCode.INTERNAL) as r:
        await stub.SendMessage(msg("boom-first"), metadata=VERSION_MD)
    assert SECRET not in r.details and "Traceback" not in r.details
    streamed = await read_all(stub.SendStreamingMessage(msg("boom"), metadata=VERSION_MD))
    assert state_of(streamed[-1]) == pb.TASK_STATE_FAILED
    assert all(SECRET not in str(e) for e in streamed)


async def test_terminal_is_final(stub, server) -> None:
    events = await read_all(stub.SendStreamingMessage(msg("bad-terminal"), metadata=VERSION_MD))
    assert [state_of(e) for e in events] == [pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_COMPLETED]
    await asyncio.sleep(0.05)
    got = await get(stub, events[0].task.id)
    assert got.status.state == pb.TASK_STATE_COMPLETED
    # The store itself refuses a stale write (compare-and-swap).
    from a2a_grpc.context import Owner
    from a2a_grpc.core.ports import TaskWrite, VersionConflictError

    stored = await server.store.get(got.id, Owner())
    assert stored is not None
    stale = pb.Task()
    stale.CopyFrom(stored.task)
    stale.status.state = pb.TASK_STATE_WORKING
    with pytest.raises(VersionConflictError):
        await server.store.update(TaskWrite(stale, Owner(), stored.version - 1))
    assert (await get(stub, got.id)).status.state == pb.TASK_STATE_COMPLETED


# --- cancel ------------------------------------------------------------------------


async def test_cancel_running_execution(stub, agent: ScriptedAgent) -> None:
    task = (await stub.SendMessage(msg("slow 30", return_immediately=True), metadata=VERSION_MD)).task
    await wait_state(stub, task.id, pb.TASK_STATE_WORKING)
    canceled = await stub.CancelTask(pb.CancelTaskRequest(id=task.id), metadata=VERSION_MD)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    assert task.id in agent.cancelled
    assert await get(stub, task.id) == canceled
    again = await stub.CancelTask(pb.CancelTaskRequest(id=task.id), metadata=VERSION_MD)
    assert again == canceled
    with raises(ErrorCode.UNSUPPORTED_OPERATION):
        await stub.SendMessage(msg("more", task_id=task.id), metadata=VERSION_MD)


async def test_cancel_blocking_caller_gets_canceled_task(server, stub, agent: ScriptedAgent) -> None:
    from tests.core.helpers import connect

    pending = asyncio.ensure_future(stub.SendMessage(msg("gate blocked"), metadata=VERSION_MD))
    await agent.started("blocked").wait()
    task_id = agent.seen[-1].task_id
    async with connect(server) as other:
        await other.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=VERSION_MD)
    resp = await asyncio.wait_for(pending, 5)
    assert resp.task.status.state == pb.TASK_STATE_CANCELED


async def test_cancel_interrupted_task(stub, agent: ScriptedAgent) -> None:
    task = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
    canceled = await stub.CancelTask(pb.CancelTaskRequest(id=task.id), metadata=VERSION_MD)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    assert canceled.history == task.history


async def test_cancel_terminal_and_unknown(stub) -> None:
    done = (await stub.SendMessage(msg("echo x"), metadata=VERSION_MD)).task
    with raises(ErrorCode.TASK_NOT_CANCELABLE) as r:
        await stub.CancelTask(pb.CancelTaskRequest(id=done.id), metadata=VERSION_MD)
    assert r.error is not None and r.error.metadata == {"taskId": done.id}
    assert await get(stub, done.id) == done
    with raises(ErrorCode.TASK_NOT_FOUND):
        await stub.CancelTask(pb.CancelTaskRequest(id="nope"), metadata=VERSION_MD)


async def test_cancel_ends_streams(server, stub, agent: ScriptedAgent) -> None:
    call = stub.SendStreamingMessage(msg("gate cs"), metadata=VERSION_MD)
    first = await call.read()
    await agent.started("cs").wait()
    sub = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=first.task.id), metadata=VERSION_MD)
    await sub.read()
    await stub.CancelTask(pb.CancelTaskRequest(id=first.task.id), metadata=VERSION_MD)
    s_events, c_events = await asyncio.wait_for(asyncio.gather(read_all(sub), read_all(call)), 5)
    assert state_of(s_events[-1]) == pb.TASK_STATE_CANCELED
    assert state_of(c_events[-1]) == pb.TASK_STATE_CANCELED
