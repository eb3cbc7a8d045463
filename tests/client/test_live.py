"""A2AClient against a real A2AServer over gRPC, JSON-RPC and HTTP+JSON: the
same calls give the same protos and the same ErrorCodes on every binding."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from a2a_grpc.client import A2AClient, StreamTruncatedError
from a2a_grpc.core._executor import data_part, file_part
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.client.agents import FINDINGS, ScriptAgent
from tests.client.conftest import BINDING_NAMES, base_url
from tests.ports import free_port


async def test_send_message_returns_the_completed_task(client: A2AClient) -> None:
    resp = await client.send_message("echo hello", context_id="ctx-1")
    task = resp.task
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert task.context_id == "ctx-1"
    assert [p.text for p in task.artifacts[0].parts] == ["hello"]
    assert task.history[0].role == pb.ROLE_USER


async def test_send_parts_round_trip(client: A2AClient) -> None:
    parts = [
        pb.Part(text="echo x"),
        file_part(b"\x00\x01diff", filename="a.diff", media_type="text/x-diff"),
        data_part({"k": [1, "two"]}),
    ]
    task = (await client.send_message(parts)).task
    echoed = task.artifacts[0].parts
    assert echoed[1].raw == b"\x00\x01diff" and echoed[1].media_type == "text/x-diff"
    assert echoed[2].data.struct_value["k"][1] == "two"


async def test_direct_message_reply(client: A2AClient) -> None:
    resp = await client.send_message("reply")
    assert resp.WhichOneof("payload") == "message"
    assert resp.message.parts[0].text == "hi there"
    events = [e async for e in client.send_streaming_message("reply")]
    assert [e.WhichOneof("payload") for e in events] == ["message"]


async def test_streaming_send_ends_at_terminal_state(client: A2AClient) -> None:
    events = [e async for e in client.send_streaming_message("review")]
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task"
    assert "artifact_update" in kinds
    assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    artifact = next(e.artifact_update.artifact for e in events if e.HasField("artifact_update"))
    assert artifact.name == "review-findings"
    assert artifact.parts[0].data.struct_value["findings"][0]["rule"] == FINDINGS["findings"][0]["rule"]


async def test_input_required_round_trip(client: A2AClient) -> None:
    events = [e async for e in client.send_streaming_message("ask")]
    assert events[-1].status_update.status.state == pb.TASK_STATE_INPUT_REQUIRED
    task_id = events[0].task.id
    done = (await client.send_message("app/db.py", task_id=task_id)).task
    assert done.id == task_id and done.status.state == pb.TASK_STATE_COMPLETED
    assert done.artifacts[-1].parts[0].text == "got: app/db.py"


async def test_get_and_list(client: A2AClient) -> None:
    first = (await client.send_message("echo one", context_id="ctx-list")).task
    await client.send_message("echo two", context_id="ctx-list")
    await client.send_message("echo other", context_id="ctx-else")
    got = await client.get_task(first.id, history_length=0)
    assert got.id == first.id and len(got.history) == 0
    assert len((await client.get_task(first.id)).history) >= 1
    page = await client.list_tasks(context_id="ctx-list", status="completed", page_size=1)
    assert len(page.tasks) == 1 and page.total_size == 2 and page.next_page_token
    rest = await client.list_tasks(
        context_id="ctx-list", status="TASK_STATE_COMPLETED", page_size=1, page_token=page.next_page_token
    )
    assert {page.tasks[0].id, rest.tasks[0].id} == {
        t.id for t in (await client.list_tasks(context_id="ctx-list")).tasks
    }
    assert (await client.list_tasks(status=pb.TASK_STATE_WORKING)).tasks == []
    recent = await client.list_tasks(
        context_id="ctx-list", status_timestamp_after=datetime(2000, 1, 1, tzinfo=UTC)
    )
    assert len(recent.tasks) == 2
    future = await client.list_tasks(
        context_id="ctx-list", status_timestamp_after=datetime(2100, 1, 1, tzinfo=UTC)
    )
    assert future.tasks == []
    with_artifacts = await client.list_tasks(context_id="ctx-list", include_artifacts=True, history_length=0)
    assert all(t.artifacts and not t.history for t in with_artifacts.tasks)


async def test_cancel_and_subscribe(client: A2AClient) -> None:
    cfg = pb.SendMessageConfiguration(return_immediately=True)
    task = (await client.send_message("slow 30", configuration=cfg)).task
    assert task.status.state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)

    async def follow() -> list[pb.StreamResponse]:
        return [e async for e in client.subscribe_to_task(task.id)]

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0.3)
    canceled = await client.cancel_task(task.id)
    events = await asyncio.wait_for(follower, 10)
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    assert events[0].task.id == task.id
    assert events[-1].status_update.status.state == pb.TASK_STATE_CANCELED


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda c: c.get_task("missing"), ErrorCode.TASK_NOT_FOUND),
        (lambda c: c.cancel_task("missing"), ErrorCode.TASK_NOT_FOUND),
        (lambda c: c.send_message("hi", task_id="missing"), ErrorCode.TASK_NOT_FOUND),
        (lambda c: c.get_task("x", history_length=-1), ErrorCode.INVALID_PARAMS),
        (lambda c: c.list_tasks(page_token="garbage"), ErrorCode.INVALID_PARAMS),
        (lambda c: c.get_extended_agent_card(), ErrorCode.UNSUPPORTED_OPERATION),
        (lambda c: c.list_task_push_notification_configs("t"), ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED),
        (lambda c: c.send_message(pb.Message(parts=[])), ErrorCode.INVALID_PARAMS),
    ],
    ids=["get", "cancel", "send-unknown-task", "history", "page-token", "extended", "push", "empty-parts"],
)
async def test_errors_have_the_same_code_on_every_binding(client: A2AClient, call, code: ErrorCode) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(A2AError) as info:
        await call(client)
    assert info.value.code is code
    assert info.value.message


async def test_terminal_task_errors(client: A2AClient) -> None:
    task = (await client.send_message("echo done")).task
    with pytest.raises(A2AError) as info:
        await client.cancel_task(task.id)
    assert info.value.code is ErrorCode.TASK_NOT_CANCELABLE
    with pytest.raises(A2AError) as info:
        async for _ in client.subscribe_to_task(task.id):
            pass
    assert info.value.code is ErrorCode.UNSUPPORTED_OPERATION


async def test_unknown_task_stream_error(client: A2AClient) -> None:
    with pytest.raises(A2AError) as info:
        async for _ in client.subscribe_to_task("missing"):
            pass
    assert info.value.code is ErrorCode.TASK_NOT_FOUND
    assert not isinstance(info.value, StreamTruncatedError)


async def test_per_call_timeout_is_deadline_exceeded(client: A2AClient) -> None:
    with pytest.raises(A2AError) as info:
        await client.send_message("slow 5", timeout=0.3)
    assert info.value.code is ErrorCode.DEADLINE_EXCEEDED


@pytest.mark.parametrize("binding", BINDING_NAMES)
async def test_push_config_crud(push_server: A2AServer, binding: str) -> None:
    async with await A2AClient.connect(base_url(push_server), bindings=[binding]) as client:
        assert client.card is not None and client.card.capabilities.push_notifications
        task = (await client.send_message("ask")).task
        hook = f"http://127.0.0.1:{free_port()}/hook"
        created = await client.create_task_push_notification_config(
            pb.TaskPushNotificationConfig(
                task_id=task.id,
                url=hook,
                token="tok",
                authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="secret"),
            )
        )
        assert created.id and created.url == hook and created.task_id == task.id
        got = await client.get_task_push_notification_config(task.id, created.id)
        assert got.url == hook and got.token == "tok"
        listed = await client.list_task_push_notification_configs(task.id)
        assert [c.id for c in listed.configs] == [created.id]
        await client.delete_task_push_notification_config(task.id, created.id)
        assert not (await client.list_task_push_notification_configs(task.id)).configs
        with pytest.raises(A2AError) as info:
            await client.get_task_push_notification_config(task.id, created.id)
        assert info.value.code is ErrorCode.TASK_NOT_FOUND
        with pytest.raises(A2AError) as info:
            await client.create_task_push_notification_config(
                pb.TaskPushNotificationConfig(task_id=task.id, url="ftp://127.0.0.1/x")
            )
        assert info.value.code is ErrorCode.INVALID_PARAMS
        card = await client.get_extended_agent_card()
        assert card.name == "Script Agent (extended)" and client.card is card


async def test_fallback_when_the_first_interface_is_unreachable() -> None:
    cfg = ServerConfig(grpc_port=0, http_port=0, public_grpc=f"127.0.0.1:{free_port()}")
    async with A2AServer(ScriptAgent(), InMemoryTaskStore(), cfg) as srv:
        assert srv.card.supported_interfaces[0].protocol_binding == "GRPC"
        async with await A2AClient.connect(base_url(srv), connect_timeout=0.5) as client:
            assert client.binding == "jsonrpc"
            assert (
                await client.send_message("echo via fallback")
            ).task.status.state == pb.TASK_STATE_COMPLETED
        with pytest.raises(A2AError) as info:
            await A2AClient.connect(base_url(srv), bindings=["grpc"], connect_timeout=0.3)
        assert info.value.code is ErrorCode.UNAVAILABLE
        assert "GRPC" in info.value.message


async def test_grpc_only_agent_refuses_http_bindings(server: A2AServer) -> None:
    client = await A2AClient.connect(base_url(server), bindings=["grpc"])
    await client.close()
    card = pb.AgentCard()
    card.CopyFrom(server.card)
    del card.supported_interfaces[1:]
    with pytest.raises(A2AError) as info:
        await A2AClient.from_card(card, bindings=["rest"])
    assert info.value.code is ErrorCode.UNSUPPORTED_OPERATION
    card.supported_interfaces[0].protocol_version = "0.2"  # neither 1.0 nor 0.3
    with pytest.raises(A2AError) as info:
        await A2AClient.from_card(card, bindings=["grpc"])
    assert info.value.code is ErrorCode.VERSION_NOT_SUPPORTED


@pytest.mark.parametrize("binding", BINDING_NAMES)
async def test_for_interface_skips_the_card(server: A2AServer, binding: str) -> None:
    iface = next(
        i
        for i in server.card.supported_interfaces
        if i.protocol_binding == {"grpc": "GRPC", "jsonrpc": "JSONRPC", "rest": "HTTP+JSON"}[binding]
    )
    async with A2AClient.for_interface(iface.url, binding) as client:
        assert client.card is None
        assert (await client.send_message("echo direct")).task.artifacts[0].parts[0].text == "direct"


async def test_unreachable_and_missing_cards() -> None:
    with pytest.raises(A2AError) as info:
        await A2AClient.connect(f"http://127.0.0.1:{free_port()}")
    assert info.value.code is ErrorCode.UNAVAILABLE
    async with A2AClient.for_interface(f"127.0.0.1:{free_port()}", "grpc", timeout=2) as client:
        with pytest.raises(A2AError) as info:
            await client.get_task("x")
        assert info.value.code is ErrorCode.UNAVAILABLE
    async with A2AClient.for_interface(f"http://127.0.0.1:{free_port()}", "rest") as client:
        with pytest.raises(A2AError) as info:
            await client.get_task("x")
        assert info.value.code is ErrorCode.UNAVAILABLE


@pytest.mark.parametrize("binding", BINDING_NAMES)
async def test_interface_tenant_is_copied_into_every_request(server: A2AServer, binding: str) -> None:
    card = pb.AgentCard()
    card.CopyFrom(server.card)
    for iface in card.supported_interfaces:
        iface.tenant = "acme"
    async with await A2AClient.from_card(card, bindings=[binding]) as tenant_client:
        task = (await tenant_client.send_message("echo scoped")).task
        assert (await tenant_client.get_task(task.id)).id == task.id
        assert [t.id for t in (await tenant_client.list_tasks()).tasks] == [task.id]
    async with await A2AClient.connect(base_url(server), bindings=[binding]) as plain:
        with pytest.raises(A2AError) as info:
            await plain.get_task(task.id)
        assert info.value.code is ErrorCode.TASK_NOT_FOUND
