from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_status import rpc_status

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb
from tests.core.helpers import VERSION_MD


def msg(text: str, **kw: str) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(
        message=pb.Message(message_id="m-" + text[:8], role=pb.ROLE_USER, parts=[pb.Part(text=text)], **kw)
    )


def error_of(exc: grpc.aio.AioRpcError) -> A2AError:
    status = rpc_status.from_call(exc)
    assert status is not None
    return A2AError.from_status(status)


async def test_echo_lifecycle(stub) -> None:
    resp = await stub.SendMessage(msg("echo hello"), metadata=VERSION_MD)
    task = resp.task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "hello"
    got = await stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=VERSION_MD)
    assert got == task


async def test_unknown_task(stub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.GetTask(pb.GetTaskRequest(id="nope"), metadata=VERSION_MD)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    assert error_of(info.value).code is ErrorCode.TASK_NOT_FOUND


async def test_stream_and_cancel(stub) -> None:
    call = stub.SendStreamingMessage(msg("slow 30"), metadata=VERSION_MD)
    events = []
    async for ev in call:
        events.append(ev)
        if ev.WhichOneof("payload") == "status_update":
            break
    task_id = events[0].task.id
    sub = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id), metadata=VERSION_MD)
    first = await sub.read()
    assert first.task.id == task_id
    canceled = await stub.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=VERSION_MD)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    rest = []
    while (ev := await sub.read()) is not grpc.aio.EOF:
        rest.append(ev)
    assert rest[-1].status_update.status.state == pb.TASK_STATE_CANCELED
    call.cancel()


async def test_busy_and_multiturn(stub) -> None:
    first = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
    assert first.status.state == pb.TASK_STATE_INPUT_REQUIRED
    second = (await stub.SendMessage(msg("more", task_id=first.id), metadata=VERSION_MD)).task
    assert second.status.state == pb.TASK_STATE_COMPLETED
    assert second.context_id == first.context_id
    slow = (
        await stub.SendMessage(
            pb.SendMessageRequest(
                message=msg("slow 5").message,
                configuration=pb.SendMessageConfiguration(return_immediately=True),
            ),
            metadata=VERSION_MD,
        )
    ).task
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.SendMessage(msg("x", task_id=slow.id), metadata=VERSION_MD)
    assert error_of(info.value).code is ErrorCode.UNSUPPORTED_OPERATION
    await stub.CancelTask(pb.CancelTaskRequest(id=slow.id), metadata=VERSION_MD)


async def test_invalid_agent_and_refuse(stub) -> None:
    t = (await stub.SendMessage(msg("bad-end"), metadata=VERSION_MD)).task
    assert t.status.state == pb.TASK_STATE_FAILED
    assert "INVALID_AGENT_RESPONSE" in t.status.message.parts[0].text
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.SendMessage(msg("refuse"), metadata=VERSION_MD)
    assert error_of(info.value).code is ErrorCode.CONTENT_TYPE_NOT_SUPPORTED
    r = await stub.SendMessage(msg("reply"), metadata=VERSION_MD)
    assert r.message.parts[0].text == "hi there"
    listed = await stub.ListTasks(pb.ListTasksRequest(), metadata=VERSION_MD)
    assert listed.total_size == 1


async def test_validation(stub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.SendMessage(pb.SendMessageRequest(message=pb.Message(message_id="x")), metadata=VERSION_MD)
    err = error_of(info.value)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert {v.field for v in err.field_violations} >= {"message.role", "message.parts"}
    await asyncio.sleep(0)
