"""Concurrency: cancels racing each other and completion, concurrent
follow-ups, slow subscribers (spec §3.5.2; design.md: one execution per task,
terminal is final, compare-and-swap updates)."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from a2a_grpc.core._handler import HandlerConfig
from a2a_grpc.errors import ErrorCode
from a2a_grpc.types import pb
from tests.core.agents import ScriptedAgent
from tests.core.helpers import VERSION_MD, connect, error_of, msg, raises, read_all, state_of


async def test_two_concurrent_cancels(stub, agent: ScriptedAgent) -> None:
    task = (await stub.SendMessage(msg("gate cc", return_immediately=True), metadata=VERSION_MD)).task
    await agent.started("cc").wait()
    results = await asyncio.gather(
        *(stub.CancelTask(pb.CancelTaskRequest(id=task.id), metadata=VERSION_MD) for _ in range(3))
    )
    assert all(r.status.state == pb.TASK_STATE_CANCELED for r in results)
    assert results[0] == results[1] == results[2]
    got = await stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=VERSION_MD)
    assert got == results[0]
    assert task.id in agent.cancelled


async def test_cancel_racing_completion(server, stub, agent: ScriptedAgent) -> None:
    """Whichever wins, the answer and the stored task agree, and the task
    ends in exactly one terminal state."""
    outcomes = set()
    for i in range(6):
        name = f"race{i}"
        call = stub.SendStreamingMessage(msg(f"gate {name}"), metadata=VERSION_MD)
        first = await call.read()
        await agent.started(name).wait()
        task_id = first.task.id

        async def cancel(task_id: str = task_id) -> pb.Task | grpc.aio.AioRpcError:
            try:
                return await stub.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=VERSION_MD)
            except grpc.aio.AioRpcError as exc:
                return exc

        async def complete(i: int = i, name: str = name) -> None:
            if i % 2:
                await asyncio.sleep(0)
            agent.gate(name).set()

        result, _ = await asyncio.gather(cancel(), complete())
        stream = await asyncio.wait_for(read_all(call), 5)
        final = await stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=VERSION_MD)
        if isinstance(result, grpc.aio.AioRpcError):
            assert error_of(result).code is ErrorCode.TASK_NOT_CANCELABLE
            assert final.status.state == pb.TASK_STATE_COMPLETED
        else:
            assert result.status.state == pb.TASK_STATE_CANCELED
            assert final == result
        assert state_of(stream[-1]) == final.status.state
        terminal = [e for e in stream if state_of(e) in (pb.TASK_STATE_COMPLETED, pb.TASK_STATE_CANCELED)]
        assert len(terminal) == 1
        outcomes.add(final.status.state)
    assert outcomes <= {pb.TASK_STATE_COMPLETED, pb.TASK_STATE_CANCELED}


async def test_concurrent_follow_ups_one_wins(stub, agent: ScriptedAgent) -> None:
    task = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task

    async def follow(i: int) -> pb.SendMessageResponse | grpc.aio.AioRpcError:
        try:
            return await stub.SendMessage(msg(f"answer {i}", task_id=task.id), metadata=VERSION_MD)
        except grpc.aio.AioRpcError as exc:
            return exc

    results = await asyncio.gather(*(follow(i) for i in range(6)))
    ok = [r for r in results if not isinstance(r, grpc.aio.AioRpcError)]
    errors = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert len(ok) == 1
    assert all(error_of(e).code is ErrorCode.UNSUPPORTED_OPERATION for e in errors)
    done = ok[0].task
    assert done.status.state == pb.TASK_STATE_COMPLETED
    user_msgs = [m for m in done.history if m.role == pb.ROLE_USER]
    assert len(user_msgs) == 2  # "ask" and the one accepted answer
    assert len(agent.seen) == 2


async def test_slow_subscriber_is_closed(make_server, agent: ScriptedAgent) -> None:
    """A subscriber that stops reading falls behind a tiny buffer and is
    closed with RESOURCE_EXHAUSTED; the other subscriber and the execution go
    on unaffected."""
    server = await make_server(agent, handler=HandlerConfig(subscriber_buffer=4))
    n = 80
    async with connect(server) as fast_stub, connect(server) as slow_stub:
        req = msg(f"many {n} 262144 big lockstep", return_immediately=True)
        task = (await fast_stub.SendMessage(req, metadata=VERSION_MD)).task
        await agent.started("big").wait()
        fast = fast_stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD)
        slow = slow_stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD)
        assert (await fast.read()).task.id == task.id
        assert (await slow.read()).task.id == task.id
        # 80 updates of 256 KiB: far more than HTTP/2 flow control lets the
        # unread stream absorb, so the slow subscriber's buffer overflows.
        agent.gate("big").set()
        events = []
        while (ev := await asyncio.wait_for(fast.read(), 10)) is not grpc.aio.EOF:
            events.append(ev)
            agent.gate("big-step").set()  # the fast reader keeps pace, lock-step
        assert len(events) == n + 1
        assert state_of(events[-1]) == pb.TASK_STATE_COMPLETED
        assert [int(e.artifact_update.artifact.parts[0].text[:8]) for e in events[:-1]] == list(range(n))
        done = await fast_stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=VERSION_MD)
        assert done.status.state == pb.TASK_STATE_COMPLETED
        # The slow one gets what it held, in order, then RESOURCE_EXHAUSTED.
        got: list[pb.StreamResponse] = []
        with raises(ErrorCode.RESOURCE_EXHAUSTED) as r:
            while (ev := await slow.read()) is not grpc.aio.EOF:
                got.append(ev)
        assert "fell more than 4 events behind" in r.details
        assert 0 < len(got) < n, len(got)
        assert [int(e.artifact_update.artifact.parts[0].text[:8]) for e in got] == list(range(len(got)))


async def test_cancel_racing_follow_up(stub, agent: ScriptedAgent) -> None:
    """Cancel and a follow-up message race on an interrupted task: the
    answers agree with the task's final state whichever wins."""
    for i in range(6):
        task = (await stub.SendMessage(msg("ask", message_id=f"ask-{i}"), metadata=VERSION_MD)).task

        async def cancel(task_id: str = task.id) -> pb.Task | grpc.aio.AioRpcError:
            try:
                return await stub.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=VERSION_MD)
            except grpc.aio.AioRpcError as exc:
                return exc

        async def follow(task_id: str = task.id) -> pb.SendMessageResponse | grpc.aio.AioRpcError:
            try:
                return await stub.SendMessage(msg("fine", task_id=task_id), metadata=VERSION_MD)
            except grpc.aio.AioRpcError as exc:
                return exc

        pair = (cancel(), follow()) if i % 2 else (follow(), cancel())
        results = await asyncio.gather(*pair)
        c, f = (results[0], results[1]) if i % 2 else (results[1], results[0])
        final = await stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=VERSION_MD)
        assert final.status.state in (pb.TASK_STATE_CANCELED, pb.TASK_STATE_COMPLETED)
        if final.status.state == pb.TASK_STATE_CANCELED:
            assert isinstance(c, pb.Task) and c == final
            if isinstance(f, grpc.aio.AioRpcError):
                assert error_of(f).code is ErrorCode.UNSUPPORTED_OPERATION
            else:  # the follow-up's execution was the one canceled
                assert f.task.status.state == pb.TASK_STATE_CANCELED
        else:
            assert isinstance(c, grpc.aio.AioRpcError)
            assert error_of(c).code is ErrorCode.TASK_NOT_CANCELABLE
            assert isinstance(f, pb.SendMessageResponse) and f.task == final


async def test_subscribe_while_events_flow(server, stub, agent: ScriptedAgent) -> None:
    """Subscribing in the middle of a burst: the snapshot plus the events
    after it add up to exactly the final task (none missed, none repeated)."""
    n = 150
    task = (
        await stub.SendMessage(msg(f"many {n} 16 burst", return_immediately=True), metadata=VERSION_MD)
    ).task
    await agent.started("burst").wait()
    agent.gate("burst").set()
    await asyncio.sleep(0)
    subs = [
        stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD) for _ in range(3)
    ]
    for sub in subs:
        try:
            first = await sub.read()
        except grpc.aio.AioRpcError as exc:  # the burst already ended
            assert error_of(exc).code is ErrorCode.UNSUPPORTED_OPERATION
            continue
        arts = first.task.artifacts
        start = int(arts[0].parts[0].text[:8]) + 1 if arts else 0
        rest = await read_all(sub)
        indexes = [
            int(e.artifact_update.artifact.parts[0].text[:8]) for e in rest if e.HasField("artifact_update")
        ]
        assert indexes == list(range(start, n)), (start, indexes[:5])
        assert state_of(rest[-1]) == pb.TASK_STATE_COMPLETED


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_cancel_before_execution_task_runs(server, stub, agent: ScriptedAgent) -> None:
    """Regression: CancelTask reaching an execution whose asyncio task has
    been created but has not run yet. (Cancelling such a task skips its body,
    finally included: the task stayed busy forever and the message's caller
    hung.) The first step of an execution runs in ``start`` itself; here it
    waits (``gate``), so the rest runs in a task that has not run when the
    cancel comes: the cancel must still reach the agent at its wait. Driven in
    process so the interleaving is exact: with the memory store nothing
    below yields to the event loop."""
    from a2a_grpc.context import CallContext

    handler = server.handler
    call = CallContext(method="/lf.a2a.v1.A2AService/SendMessage", protocol_version="1.0")
    ex = await handler._start(msg("gate g"), call, stream=False)
    current = ex.progress.current
    task = current.task if current is not None else None
    assert task is not None and task.status.state == pb.TASK_STATE_WORKING
    assert ex.progress.started and ex.runner is not None and not ex.runner.done()
    # Awaited directly: wait_for would wrap it in a task and let the runner start.
    canceled = await handler.cancel_task(pb.CancelTaskRequest(id=task.id), call)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    await asyncio.wait_for(ex.signals.until_settled(), 5)
    assert task.id in agent.cancelled  # the agent saw the cancel at its wait
    assert handler.executions.get(ex.key) is None
    got = await stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=VERSION_MD)
    assert got == canceled
    assert [m.parts[0].text for m in got.history if m.role == pb.ROLE_USER] == ["gate g"]


async def test_slow_subscriber_is_closed_by_bytes(make_server, agent: ScriptedAgent) -> None:
    """The buffer is bounded in bytes too (issue 10): with room for 1,024
    events but 1 MiB, a stalled subscriber of 256 KiB updates is closed
    after a handful of them, while the reader that keeps up gets them all."""
    server = await make_server(agent, handler=HandlerConfig(subscriber_buffer_bytes=1024 * 1024))
    n = 80
    async with connect(server) as fast_stub, connect(server) as slow_stub:
        req = msg(f"many {n} 262144 big lockstep", return_immediately=True)
        task = (await fast_stub.SendMessage(req, metadata=VERSION_MD)).task
        await agent.started("big").wait()
        fast = fast_stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD)
        slow = slow_stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD)
        assert (await fast.read()).task.id == task.id
        assert (await slow.read()).task.id == task.id
        agent.gate("big").set()
        events = []
        while (ev := await asyncio.wait_for(fast.read(), 10)) is not grpc.aio.EOF:
            events.append(ev)
            agent.gate("big-step").set()
        assert len(events) == n + 1
        got: list[pb.StreamResponse] = []
        with raises(ErrorCode.RESOURCE_EXHAUSTED) as r:
            while (ev := await slow.read()) is not grpc.aio.EOF:
                got.append(ev)
        assert f"fell more than {1024 * 1024} bytes behind" in r.details
        assert 0 < len(got) < n, len(got)
        assert [int(e.artifact_update.artifact.parts[0].text[:8]) for e in got] == list(range(len(got)))
