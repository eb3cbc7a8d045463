"""A2A v0.3 over gRPC (``a2a.v1.A2AService``) on a real server (127.0.0.1
sockets): all ten RPCs, the C14 error form, bad input (malformed names,
undecodable bytes: INVALID_ARGUMENT, never UNKNOWN), C2/C8 on streams, one
store with the v1.0 service (``lf.a2a.v1``), and reflection listing both."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from a2a_grpc.gen.a2a.v1 import a2a_pb2 as v03
from a2a_grpc.gen.a2a.v1 import a2a_pb2_grpc as v03_grpc
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb, pb_grpc
from tests.interop.agents import InteropAgent

V1_MD = (("a2a-version", "1.0"),)


@pytest.fixture
async def channel(server: A2AServer) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as ch:
        yield ch


@pytest.fixture
def stub(channel: grpc.aio.Channel) -> v03_grpc.A2AServiceStub:
    return v03_grpc.A2AServiceStub(channel)


def send_request(text: str, *, blocking: bool = True, task_id: str = "") -> v03.SendMessageRequest:
    request = v03.SendMessageRequest()
    request.request.message_id = str(uuid.uuid4())
    request.request.role = v03.ROLE_USER
    request.request.task_id = task_id
    request.request.content.add(text=text)
    request.configuration.blocking = blocking
    return request


async def test_send_get_and_parts(stub: Any) -> None:
    request = send_request("hello")
    part = request.request.content.add()
    part.file.file_with_bytes = b"\xfb\xff"
    part.file.mime_type = "application/octet-stream"
    request.request.content.add().data.data.update({"a": [1, 2]})
    response = await stub.SendMessage(request)
    task = response.task
    assert task.status.state == v03.TASK_STATE_COMPLETED
    assert task.history[0].role == v03.ROLE_USER and task.history[0].content[0].text == "hello"
    echoed = task.artifacts[0].parts
    assert echoed[0].text == "hello"
    assert (
        echoed[1].file.file_with_bytes == b"\xfb\xff"
        and echoed[1].file.mime_type == "application/octet-stream"
    )
    assert dict(echoed[2].data.data) == {"a": [1.0, 2.0]}
    got = await stub.GetTask(v03.GetTaskRequest(name=f"tasks/{task.id}", history_length=1))
    assert got.id == task.id and len(got.history) == 1
    whole = await stub.GetTask(v03.GetTaskRequest(name=f"tasks/{task.id}", history_length=0))
    assert len(whole.history) == len(task.history)  # C7: 0 is "unlimited" in v0.3


async def test_direct_message_reply(stub: Any) -> None:
    response = await stub.SendMessage(send_request("reply"))
    assert response.WhichOneof("payload") == "msg"
    assert response.msg.role == v03.ROLE_AGENT and response.msg.content[0].text == "a direct reply"


async def test_stream_of_a_message_is_that_message_alone(stub: Any) -> None:
    events = [e async for e in stub.SendStreamingMessage(send_request("reply"))]
    assert [e.WhichOneof("payload") for e in events] == ["msg"]  # no closing status update after a Message


async def test_stream_sets_final_once_at_the_end(stub: Any) -> None:
    events = [e async for e in stub.SendStreamingMessage(send_request("stream me"))]
    kinds = [e.WhichOneof("payload") for e in events]
    assert "artifact_update" in kinds
    finals = [e for e in events if e.HasField("status_update") and e.status_update.final]
    assert len(finals) == 1 and events[-1] is finals[0]
    assert events[-1].status_update.status.state == v03.TASK_STATE_COMPLETED


async def test_stream_ends_final_at_input_required(stub: Any) -> None:
    events = [e async for e in stub.SendStreamingMessage(send_request("ask"))]
    last = events[-1].status_update
    assert last.status.state == v03.TASK_STATE_INPUT_REQUIRED and last.final  # C2
    follow = await stub.SendMessage(send_request("the answer", task_id=last.task_id))
    assert follow.task.id == last.task_id and follow.task.status.state == v03.TASK_STATE_COMPLETED


async def test_cancel_and_subscription_follow_to_cancelled(stub: Any) -> None:
    started = await stub.SendMessage(send_request("slow 30", blocking=False))
    name = f"tasks/{started.task.id}"
    events: list[Any] = []

    async def read() -> None:
        async for event in stub.TaskSubscription(v03.TaskSubscriptionRequest(name=name)):
            events.append(event)  # noqa: PERF401 - kept as they arrive

    reader = asyncio.create_task(read())
    await asyncio.sleep(0.3)
    canceled = await stub.CancelTask(v03.CancelTaskRequest(name=name))
    assert canceled.status.state == v03.TASK_STATE_CANCELLED  # S10
    await asyncio.wait_for(reader, 10)
    assert events[0].WhichOneof("payload") == "task"
    assert (
        events[-1].status_update.final and events[-1].status_update.status.state == v03.TASK_STATE_CANCELLED
    )


async def test_subscription_on_a_finished_task_sends_it_and_closes(stub: Any) -> None:
    done = (await stub.SendMessage(send_request("done"))).task
    events = [e async for e in stub.TaskSubscription(v03.TaskSubscriptionRequest(name=f"tasks/{done.id}"))]
    assert len(events) == 1 and events[0].task.id == done.id  # C8 / S19
    assert events[0].task.status.state == v03.TASK_STATE_COMPLETED


async def test_push_config_crud(stub: Any) -> None:
    task = (await stub.SendMessage(send_request("slow 30", blocking=False))).task
    request = v03.CreateTaskPushNotificationConfigRequest(parent=f"tasks/{task.id}", config_id="hook-1")
    request.config.push_notification_config.url = "http://127.0.0.1:9/hook"
    request.config.push_notification_config.token = "tok"
    request.config.push_notification_config.authentication.schemes.append("Bearer")
    created = await stub.CreateTaskPushNotificationConfig(request)
    name = f"tasks/{task.id}/pushNotificationConfigs/hook-1"
    assert created.name == name and created.push_notification_config.id == "hook-1"
    assert list(created.push_notification_config.authentication.schemes) == ["Bearer"]
    got = await stub.GetTaskPushNotificationConfig(v03.GetTaskPushNotificationConfigRequest(name=name))
    assert got.push_notification_config.token == "tok"
    listed = await stub.ListTaskPushNotificationConfig(
        v03.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task.id}")
    )
    assert [c.name for c in listed.configs] == [name]
    await stub.DeleteTaskPushNotificationConfig(v03.DeleteTaskPushNotificationConfigRequest(name=name))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.GetTaskPushNotificationConfig(v03.GetTaskPushNotificationConfigRequest(name=name))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    await stub.CancelTask(v03.CancelTaskRequest(name=f"tasks/{task.id}"))


async def test_agent_card_is_the_public_card_with_v03_endpoints(stub: Any, server: A2AServer) -> None:
    card = await stub.GetAgentCard(v03.GetAgentCardRequest())
    assert card.name == "Interop Agent" and card.protocol_version == "0.3.0"
    assert card.preferred_transport == "JSONRPC" and card.url == f"http://127.0.0.1:{server.http_port}/"
    assert {(i.transport, i.url) for i in card.additional_interfaces} >= {
        ("GRPC", f"127.0.0.1:{server.grpc_port}"),
        ("HTTP+JSON", f"http://127.0.0.1:{server.http_port}"),
    }


async def test_errors_are_plain_status_with_the_v03_type_name(stub: Any) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.GetTask(v03.GetTaskRequest(name="tasks/no-such-task"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert err.value.details().startswith("TaskNotFoundError: ")
    trailing = dict(err.value.trailing_metadata() or ())
    assert "grpc-status-details-bin" not in trailing  # C14: no ErrorInfo
    done = (await stub.SendMessage(send_request("done"))).task
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.CancelTask(v03.CancelTaskRequest(name=f"tasks/{done.id}"))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert err.value.details().startswith("TaskNotCancelableError: ")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in stub.TaskSubscription(v03.TaskSubscriptionRequest(name="tasks/nope")):
            pass
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(
    ("rpc", "message"),
    [
        ("GetTask", v03.GetTaskRequest(name="task/x")),
        ("GetTask", v03.GetTaskRequest()),
        ("CancelTask", v03.CancelTaskRequest(name="tasks/a/b")),
        ("GetTaskPushNotificationConfig", v03.GetTaskPushNotificationConfigRequest(name="tasks/t")),
        ("DeleteTaskPushNotificationConfig", v03.DeleteTaskPushNotificationConfigRequest(name="")),
        ("ListTaskPushNotificationConfig", v03.ListTaskPushNotificationConfigRequest(parent="tasks/")),
        ("CreateTaskPushNotificationConfig", v03.CreateTaskPushNotificationConfigRequest(parent="x")),
        ("SendMessage", v03.SendMessageRequest()),
    ],
)
async def test_bad_requests_are_invalid_argument(stub: Any, rpc: str, message: Any) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await getattr(stub, rpc)(message)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value.details()
    assert err.value.details().startswith("InvalidParamsError: ")


async def test_bad_stream_requests_are_invalid_argument(stub: Any) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in stub.TaskSubscription(v03.TaskSubscriptionRequest(name="nope")):
            pass
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    request = send_request("x")
    request.request.content.add()  # a Part without content
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in stub.SendStreamingMessage(request):
            pass
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_undecodable_bytes_are_invalid_argument(channel: grpc.aio.Channel) -> None:
    call = channel.unary_unary("/a2a.v1.A2AService/GetTask")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call(b"\xff\xff\xff")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.value.details().startswith("InvalidParamsError: ")
    # v1.0 bytes sent to the v0.3 service are decoded with v0.3 descriptors only
    v1_bytes = pb.SendMessageRequest(
        tenant="t"
    ).SerializeToString()  # field 1: a string in v1.0, a Message in v0.3
    send = channel.unary_unary("/a2a.v1.A2AService/SendMessage")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await send(v1_bytes)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_one_store_v03_grpc_and_v1_grpc(stub: Any, channel: grpc.aio.Channel) -> None:
    v1 = pb_grpc.A2AServiceStub(channel)
    task = (await stub.SendMessage(send_request("slow 30", blocking=False))).task
    read = await v1.GetTask(pb.GetTaskRequest(id=task.id), metadata=V1_MD)
    assert read.id == task.id and read.history[0].parts[0].text == "slow 30"
    await v1.CancelTask(pb.CancelTaskRequest(id=task.id), metadata=V1_MD)
    assert (await stub.GetTask(v03.GetTaskRequest(name=f"tasks/{task.id}"))).status.state == (
        v03.TASK_STATE_CANCELLED
    )
    request = pb.SendMessageRequest()
    request.message.message_id, request.message.role = "m1", pb.ROLE_USER
    request.message.parts.add(text="made in v1.0")
    made = (await v1.SendMessage(request, metadata=V1_MD)).task
    got = await stub.GetTask(v03.GetTaskRequest(name=f"tasks/{made.id}"))
    assert got.history[0].content[0].text == "made in v1.0"


async def test_a_version_header_does_not_change_the_dialect(stub: Any) -> None:
    # the service decides the dialect (legacy digest §6.2), whatever A2A-Version says
    for version in ("0.3", "1.0", "2.0"):
        response = await stub.SendMessage(send_request("hi"), metadata=(("a2a-version", version),))
        assert response.task.status.state == v03.TASK_STATE_COMPLETED


async def test_extensions_metadata_is_read_and_echoed() -> None:
    from tests.dialects.test_v03_jsonrpc import ExtensionAgent

    uri = "https://example.com/ext/v1"
    server = A2AServer(ExtensionAgent(), InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=0))
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as ch:
            stub = v03_grpc.A2AServiceStub(ch)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.SendMessage(send_request("hi"))
            call = stub.SendMessage(send_request("hi"), metadata=(("x-a2a-extensions", uri),))
            await call
            echoed = dict(await call.initial_metadata())
    finally:
        await server.stop(0.2)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert err.value.details().startswith("UnsupportedOperationError: ")  # C14: v1.0-only error
    assert uri in err.value.details()
    assert echoed["x-a2a-extensions"] == uri and echoed["a2a-extensions"] == uri


async def test_reflection_lists_both_services(channel: grpc.aio.Channel) -> None:
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    stub = reflection_pb2_grpc.ServerReflectionStub(channel)

    async def requests() -> AsyncIterator[Any]:
        yield reflection_pb2.ServerReflectionRequest(list_services="")
        yield reflection_pb2.ServerReflectionRequest(file_containing_symbol="a2a.v1.A2AService")

    answers = [a async for a in stub.ServerReflectionInfo(requests())]
    names = {s.name for s in answers[0].list_services_response.service}
    assert {"a2a.v1.A2AService", "lf.a2a.v1.A2AService"} <= names
    assert answers[1].HasField("file_descriptor_response")


async def test_auth_runs_on_v03_grpc_and_rest_like_v1(tmp_path: Any) -> None:
    """The interceptor chain runs for v0.3 calls: no key is UNAUTHENTICATED
    (gRPC, with the v0.3 name; REST 401 with the challenge), a key is served,
    and the task belongs to that caller on v1.0 too."""
    import aiohttp

    from a2a_grpc.auth import load_policy
    from a2a_grpc.auth._apikeys import digest, new_secret

    key_id, secret = new_secret()
    path = tmp_path / "auth.toml"
    path.write_text(
        '[schemes.apiKey]\ntype = "apiKey"\nheader = "X-API-Key"\n\n[[schemes.apiKey.keys]]\n'
        f'id = "{key_id}"\nsubject = "alice"\nhash = "{digest(secret)}"\n'
    )
    config = ServerConfig(grpc_port=0, http_port=0, auth=load_policy(path))
    server = A2AServer(InteropAgent(), InMemoryTaskStore(), config)
    await server.start()
    key = (("x-api-key", secret),)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as ch:
            stub = v03_grpc.A2AServiceStub(ch)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.SendMessage(send_request("hi"))
            task = (await stub.SendMessage(send_request("hi"), metadata=key)).task
            v1 = await pb_grpc.A2AServiceStub(ch).GetTask(
                pb.GetTaskRequest(id=task.id), metadata=(*key, *V1_MD)
            )
        base = f"http://127.0.0.1:{server.http_port}"
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{base}/v1/tasks/{task.id}") as resp:
                refused, challenge = resp.status, resp.headers.get("WWW-Authenticate")
            async with session.get(f"{base}/v1/tasks/{task.id}", headers={"X-API-Key": secret}) as resp:
                served = resp.status, await resp.json()
    finally:
        await server.stop(0.2)
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert err.value.details().startswith("UnauthenticatedError: ")
    assert v1.id == task.id
    assert refused == 401 and challenge
    assert served[0] == 200 and served[1]["id"] == task.id


_NEVER = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}


def _sane(request: Any, task_id: str, rng: Any) -> Any:
    """Half the random requests get valid names and a sendable message, so
    the servicer (not only the table) sees random content."""
    if rng.random() < 0.5:
        return request
    fields = request.DESCRIPTOR.fields_by_name
    if "name" in fields:
        config = (
            "pushNotificationConfigs" in request.DESCRIPTOR.name
            or "PushNotification" in request.DESCRIPTOR.name
        )
        request.name = f"tasks/{task_id}/pushNotificationConfigs/c" if config else f"tasks/{task_id}"
    if "parent" in fields:
        request.parent = f"tasks/{task_id}"
    if "request" in fields:  # SendMessageRequest: a message the handler takes
        request.request.message_id = str(uuid.uuid4())
        request.request.role = v03.ROLE_USER
        request.request.ClearField("task_id")
        request.request.ClearField("context_id")
        request.configuration.ClearField("push_notification")
    return request


@pytest.mark.parametrize("rpc", [m.name for m in v03.DESCRIPTOR.services_by_name["A2AService"].methods])
async def test_random_requests_never_unknown_or_internal(stub: Any, rpc: str) -> None:
    """Random v0.3 requests (tests/randmsg.py: odd ids, enums, Structs; half
    with valid names) to each RPC: served, or refused in the v0.3 form with
    a client-error code."""
    import random

    from tests.randmsg import fill

    task_id = (await stub.SendMessage(send_request("done"))).task.id
    method = v03.DESCRIPTOR.services_by_name["A2AService"].methods_by_name[rpc]
    cls = getattr(v03, method.input_type.name)
    rng = random.Random(rpc)
    codes: set[Any] = set()
    for _ in range(30):
        request = _sane(fill(cls(), rng), task_id, rng)
        try:
            if method.server_streaming:
                async for _ in getattr(stub, rpc)(request, timeout=10):
                    pass
            else:
                await getattr(stub, rpc)(request, timeout=10)
            codes.add("OK")
        except grpc.aio.AioRpcError as err:
            assert err.code() not in _NEVER, (err.code(), err.details(), request)
            assert ": " in err.details() and err.details().split(": ")[0].endswith("Error"), err.details()
            codes.add(err.code())
    assert codes, rpc


async def test_buf_curl_reaches_the_v03_service_by_reflection(server: A2AServer) -> None:
    """The README's command: ``buf curl --reflect`` finds ``a2a.v1.A2AService``
    beside ``lf.a2a.v1.A2AService`` and sends a v0.3 SendMessage (ProtoJSON)."""
    import json

    from tests.core.test_cli_and_buf import buf_curl

    base = f"http://127.0.0.1:{server.grpc_port}"
    rc, out, err = await buf_curl("--list-methods", base)
    assert rc == 0, err
    assert (
        "a2a.v1.A2AService/TaskSubscription" in out.split()
        and "lf.a2a.v1.A2AService/SubscribeToTask" in out.split()
    )
    body = {"message": {"messageId": "m2", "role": "ROLE_USER", "content": [{"text": "hello"}]}}
    rc, out, err = await buf_curl("-d", json.dumps(body), f"{base}/a2a.v1.A2AService/SendMessage")
    assert rc == 0, err
    task = json.loads(out)["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED" and task["artifacts"][0]["parts"] == [
        {"text": "hello"}
    ]
