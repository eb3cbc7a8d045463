"""SendMessage and GetTask over gRPC (spec §3.1.1, §3.1.3, §3.2.2, §3.2.4;
digest §9)."""

from __future__ import annotations

import asyncio

import pytest

from a2a_grpc.errors import ErrorCode
from a2a_grpc.server import A2AServer
from a2a_grpc.types import pb
from tests.core.agents import ScriptedAgent
from tests.core.helpers import VERSION_MD, msg, raises, read_all


async def test_blocking_waits_for_terminal(stub, agent: ScriptedAgent) -> None:
    resp = await stub.SendMessage(msg("slow 0.2"), metadata=VERSION_MD)
    task = resp.task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert task.id and task.context_id
    # The user message, then the WORKING status message ("working").
    assert [m.role for m in task.history] == [pb.ROLE_USER, pb.ROLE_AGENT]
    assert task.history[0].task_id == task.id and task.history[0].context_id == task.context_id


async def test_blocking_returns_on_interrupted(stub) -> None:
    for cmd, state in (("ask", pb.TASK_STATE_INPUT_REQUIRED), ("auth", pb.TASK_STATE_AUTH_REQUIRED)):
        task = (await stub.SendMessage(msg(cmd), metadata=VERSION_MD)).task
        assert task.status.state == state
        assert task.status.message.parts[0].text


async def test_blocking_returns_all_artifacts(stub) -> None:
    task = (await stub.SendMessage(msg("chunks 3"), metadata=VERSION_MD)).task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert [p.text for p in task.artifacts[0].parts] == ["c0", "c1", "c2"]


async def test_return_immediately(stub, agent: ScriptedAgent) -> None:
    resp = await stub.SendMessage(msg("gate ri", return_immediately=True), metadata=VERSION_MD)
    task = resp.task
    assert task.status.state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
    await agent.started("ri").wait()
    got = await stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=VERSION_MD)
    assert got.status.state == pb.TASK_STATE_WORKING
    agent.gate("ri").set()
    for _ in range(100):
        got = await stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=VERSION_MD)
        if got.status.state == pb.TASK_STATE_COMPLETED:
            break
        await asyncio.sleep(0.02)
    assert got.status.state == pb.TASK_STATE_COMPLETED
    assert got.artifacts[0].parts[0].text == "opened ri"


@pytest.mark.parametrize("length,expect", [(None, 3), (0, 0), (1, 1), (2, 2), (50, 3)])
async def test_history_length(stub, length: int | None, expect: int) -> None:
    first = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
    kw = {} if length is None else {"history_length": length}
    task = (await stub.SendMessage(msg("more", task_id=first.id, **kw), metadata=VERSION_MD)).task
    assert len(task.history) == expect
    texts = [m.parts[0].text for m in task.history]
    full = ["ask", "what else?", "more"]
    assert texts == full[len(full) - expect :]
    got = await stub.GetTask(
        pb.GetTaskRequest(id=task.id, **({} if length is None else {"history_length": length})),
        metadata=VERSION_MD,
    )
    assert [m.parts[0].text for m in got.history] == texts


async def test_accepted_output_modes_and_references_reach_agent(stub, agent: ScriptedAgent) -> None:
    ref1 = (await stub.SendMessage(msg("echo one"), metadata=VERSION_MD)).task
    ref2 = (await stub.SendMessage(msg("echo two"), metadata=VERSION_MD)).task
    req = msg(
        "echo three",
        references=[ref1.id, "no-such-task", ref2.id, ref1.id],
        accepted_output_modes=["text/markdown", "application/json"],
    )
    await stub.SendMessage(req, metadata=VERSION_MD)
    ctx = agent.seen[-1]
    assert list(ctx.accepted_output_modes) == ["text/markdown", "application/json"]
    assert ctx.accepts("text/markdown") and not ctx.accepts("image/png")
    assert [t.id for t in ctx.related_tasks] == [ref1.id, ref2.id]
    assert ctx.related_tasks[0].artifacts[0].parts[0].text == "one"
    assert ctx.call.method == "/lf.a2a.v1.A2AService/SendMessage"
    assert ctx.call.protocol_version == "1.0"


async def test_direct_message_reply(stub) -> None:
    resp = await stub.SendMessage(msg("reply", context_id="ctx-reply"), metadata=VERSION_MD)
    assert resp.WhichOneof("payload") == "message"
    assert resp.message.role == pb.ROLE_AGENT
    assert resp.message.context_id == "ctx-reply"
    assert not resp.message.task_id
    assert (await stub.ListTasks(pb.ListTasksRequest(), metadata=VERSION_MD)).total_size == 0


async def test_get_task_unknown_and_history(stub) -> None:
    with raises(ErrorCode.TASK_NOT_FOUND) as r:
        await stub.GetTask(pb.GetTaskRequest(id="nope"), metadata=VERSION_MD)
    assert r.error is not None and r.error.metadata == {"taskId": "nope"}
    with raises(ErrorCode.INVALID_PARAMS) as r:
        await stub.GetTask(pb.GetTaskRequest(id="x", history_length=-1), metadata=VERSION_MD)
    assert "history_length" in r.violations


async def test_tasks_are_per_tenant(stub) -> None:
    task = (await stub.SendMessage(msg("echo mine"), metadata=VERSION_MD)).task
    with raises(ErrorCode.TASK_NOT_FOUND):
        await stub.GetTask(pb.GetTaskRequest(id=task.id, tenant="other"), metadata=VERSION_MD)
    assert (await stub.ListTasks(pb.ListTasksRequest(tenant="other"), metadata=VERSION_MD)).total_size == 0
    with raises(ErrorCode.TASK_NOT_FOUND):
        await stub.CancelTask(pb.CancelTaskRequest(id=task.id, tenant="other"), metadata=VERSION_MD)
    with raises(ErrorCode.TASK_NOT_FOUND):
        await read_all(
            stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id, tenant="other"), metadata=VERSION_MD)
        )
    req = msg("more", task_id=task.id)
    req.tenant = "other"
    with raises(ErrorCode.TASK_NOT_FOUND):
        await stub.SendMessage(req, metadata=VERSION_MD)
    assert await stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=VERSION_MD) == task


async def test_response_is_a_snapshot(server: A2AServer, stub) -> None:
    """Mutating what the handler returned (in process) or a response never
    changes the stored task (design.md: stores copy in and out)."""
    from a2a_grpc.context import CallContext

    call = CallContext(method="/lf.a2a.v1.A2AService/GetTask", protocol_version="1.0")
    task = (await stub.SendMessage(msg("echo snap"), metadata=VERSION_MD)).task
    got = await server.handler.get_task(pb.GetTaskRequest(id=task.id), call)
    got.status.state = pb.TASK_STATE_FAILED
    got.artifacts[0].parts[0].text = "tampered"
    del got.history[:]
    listed = await server.handler.list_tasks(pb.ListTasksRequest(include_artifacts=True), call)
    listed.tasks[0].artifacts.add().artifact_id = "injected"
    again = await stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=VERSION_MD)
    assert again == task


async def test_timestamps_are_utc_milliseconds(stub) -> None:
    """Status timestamps carry millisecond precision (spec §5.6.1) and are
    close to now."""
    import time

    task = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
    ts = task.status.timestamp
    assert ts.nanos % 1_000_000 == 0
    assert abs(ts.seconds - time.time()) < 60
    assert ts.ToJsonString().endswith("Z")


async def test_many_concurrent_streams(stub) -> None:
    """30 streams at once (SQLite has one writer at a time): every stream
    sees its own task's events, complete and in order."""

    async def one(i: int) -> list[pb.StreamResponse]:
        return await read_all(
            stub.SendStreamingMessage(msg("chunks 5", message_id=f"c-{i}"), metadata=VERSION_MD)
        )

    streams = await asyncio.gather(*(one(i) for i in range(30)))
    ids = set()
    for events in streams:
        task_id = events[0].task.id
        ids.add(task_id)
        assert [e.artifact_update.artifact.parts[0].text for e in events[1:6]] == [f"c{i}" for i in range(5)]
        assert all(e.artifact_update.task_id == task_id for e in events[1:6])
        assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    assert len(ids) == 30
    listed = await stub.ListTasks(
        pb.ListTasksRequest(page_size=100, include_artifacts=True), metadata=VERSION_MD
    )
    assert listed.total_size == 30
    assert all([p.text for p in t.artifacts[0].parts] == [f"c{i}" for i in range(5)] for t in listed.tasks)
