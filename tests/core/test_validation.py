"""Bad input over gRPC: INVALID_ARGUMENT with google.rpc.BadRequest field
violations, never UNKNOWN, nothing stored (spec §5.7; issue 2 item 12)."""

from __future__ import annotations

import grpc
import pytest

from a2a_grpc.errors import ErrorCode
from a2a_grpc.types import pb
from tests.core.helpers import VERSION_MD, RecordingPush, connect, msg, raises, read_all, total


def message(**kw: object) -> pb.Message:
    base: dict[str, object] = {"message_id": "m1", "role": pb.ROLE_USER, "parts": [pb.Part(text="echo hi")]}
    base.update(kw)
    return pb.Message(**base)  # type: ignore[arg-type]


BAD_SENDS = [
    ("no message", pb.SendMessageRequest(), {"message"}),
    ("no parts", pb.SendMessageRequest(message=message(parts=[])), {"message.parts"}),
    ("no message id", pb.SendMessageRequest(message=message(message_id="")), {"message.message_id"}),
    ("no role", pb.SendMessageRequest(message=message(role=pb.ROLE_UNSPECIFIED)), {"message.role"}),
    (
        "empty part",
        pb.SendMessageRequest(message=message(parts=[pb.Part(text="x"), pb.Part()])),
        {"message.parts[1]"},
    ),
    ("unknown role", pb.SendMessageRequest(message=message(role=99)), {"message.role"}),
    ("task id with /", pb.SendMessageRequest(message=message(task_id="a/b")), {"message.task_id"}),
    ("context id with :", pb.SendMessageRequest(message=message(context_id="c:1")), {"message.context_id"}),
    ("tenant with /", pb.SendMessageRequest(message=message(), tenant="t/1"), {"tenant"}),
    (
        "negative history",
        pb.SendMessageRequest(
            message=message(), configuration=pb.SendMessageConfiguration(history_length=-1)
        ),
        {"configuration.history_length"},
    ),
    (
        "several at once",
        pb.SendMessageRequest(message=pb.Message(parts=[pb.Part()])),
        {"message.message_id", "message.role", "message.parts[0]"},
    ),
]


@pytest.mark.parametrize("name,req,fields", BAD_SENDS, ids=[b[0] for b in BAD_SENDS])
async def test_bad_send_message(stub, agent, name: str, req: pb.SendMessageRequest, fields: set[str]) -> None:
    with raises(ErrorCode.INVALID_PARAMS) as r:
        await stub.SendMessage(req, metadata=VERSION_MD)
    assert r.code == grpc.StatusCode.INVALID_ARGUMENT
    assert fields <= set(r.violations), r.violations
    assert all(r.violations[f] for f in fields)
    with raises(ErrorCode.INVALID_PARAMS):
        await read_all(stub.SendStreamingMessage(req, metadata=VERSION_MD))
    assert agent.seen == []
    assert await total(stub) == 0


@pytest.mark.parametrize(
    "rpc,req,fields",
    [
        ("GetTask", pb.GetTaskRequest(), {"id"}),
        ("GetTask", pb.GetTaskRequest(id="a/b"), {"id"}),
        ("GetTask", pb.GetTaskRequest(id="x\n"), {"id"}),
        ("GetTask", pb.GetTaskRequest(id="x" * 300), {"id"}),
        ("CancelTask", pb.CancelTaskRequest(), {"id"}),
        ("CancelTask", pb.CancelTaskRequest(id="a:b"), {"id"}),
        ("ListTasks", pb.ListTasksRequest(status=42), {"status"}),  # type: ignore[arg-type]
        ("ListTasks", pb.ListTasksRequest(context_id="c/1"), {"context_id"}),
        ("ListTasks", pb.ListTasksRequest(page_size=-5), {"page_size"}),
    ],
)
async def test_bad_unary_requests(stub, rpc: str, req: object, fields: set[str]) -> None:
    with raises(ErrorCode.INVALID_PARAMS) as r:
        await getattr(stub, rpc)(req, metadata=VERSION_MD)
    assert fields <= set(r.violations), r.violations


async def test_bad_subscribe(stub) -> None:
    for req, field in ((pb.SubscribeToTaskRequest(), "id"), (pb.SubscribeToTaskRequest(id="a/b"), "id")):
        with raises(ErrorCode.INVALID_PARAMS) as r:
            await read_all(stub.SubscribeToTask(req, metadata=VERSION_MD))
        assert field in r.violations


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_bad_push_requests(make_server) -> None:
    srv = await make_server(push=RecordingPush())
    async with connect(srv) as stub:
        cases = [
            ("CreateTaskPushNotificationConfig", pb.TaskPushNotificationConfig(task_id="t"), {"url"}),
            (
                "CreateTaskPushNotificationConfig",
                pb.TaskPushNotificationConfig(
                    task_id="t", url="https://x.example", authentication=pb.AuthenticationInfo()
                ),
                {"authentication.scheme"},
            ),
            ("GetTaskPushNotificationConfig", pb.GetTaskPushNotificationConfigRequest(), {"task_id", "id"}),
            (
                "DeleteTaskPushNotificationConfig",
                pb.DeleteTaskPushNotificationConfigRequest(),
                {"task_id", "id"},
            ),
            ("ListTaskPushNotificationConfigs", pb.ListTaskPushNotificationConfigsRequest(), {"task_id"}),
            (
                "ListTaskPushNotificationConfigs",
                pb.ListTaskPushNotificationConfigsRequest(task_id="t", page_size=-1),
                {"page_size"},
            ),
        ]
        for rpc, req, fields in cases:
            with raises(ErrorCode.INVALID_PARAMS) as r:
                await getattr(stub, rpc)(req, metadata=VERSION_MD)
            assert fields <= set(r.violations), (rpc, r.violations)


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_oversize_message(make_server) -> None:
    srv = await make_server(max_message_bytes=4096)
    async with connect(srv) as stub:
        big = msg("echo " + "x" * 8000)
        with raises(ErrorCode.PAYLOAD_TOO_LARGE) as r:
            await stub.SendMessage(big, metadata=VERSION_MD)
        assert r.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "the limit is 4096 bytes" in r.details, r.details
        assert r.error.metadata == {"limitBytes": "4096"}
        with raises(ErrorCode.PAYLOAD_TOO_LARGE):
            await read_all(stub.SendStreamingMessage(big, metadata=VERSION_MD))
        # Far beyond the limit gRPC itself refuses the frame: RESOURCE_EXHAUSTED
        # (the transport cap is 2 x limit + 1 MiB), still never UNKNOWN.
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.SendMessage(msg("echo " + "x" * (2 * 1024 * 1024)), metadata=VERSION_MD)
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        ok = await stub.SendMessage(msg("echo small"), metadata=VERSION_MD)
        assert ok.task.status.state == pb.TASK_STATE_COMPLETED
        assert await total(stub) == 1


async def test_unknown_method_is_unimplemented(server) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        call = channel.unary_unary("/lf.a2a.v1.A2AService/NoSuchMethod")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call(b"")
        assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED


@pytest.mark.parametrize("store_kind", ["memory"])
@pytest.mark.parametrize("rpc", ["GetTask", "SendMessage", "SendStreamingMessage", "SubscribeToTask"])
async def test_undecodable_bytes(server, rpc: str) -> None:
    """Bytes that are not the request message: INVALID_ARGUMENT with a field
    violation, never UNKNOWN."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        path = f"/lf.a2a.v1.A2AService/{rpc}"
        streaming = rpc in ("SendStreamingMessage", "SubscribeToTask")
        call = channel.unary_stream(path) if streaming else channel.unary_unary(path)
        with raises(ErrorCode.INVALID_PARAMS) as r:
            result = call(b"\xff\xff\xff\xff", metadata=VERSION_MD)
            if streaming:
                await read_all(result)
            else:
                await result
        assert "protobuf binary form" in r.violations[""]
