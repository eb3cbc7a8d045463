"""Push notification config RPCs over gRPC (spec §3.1.7–3.1.10, §3.3.4):
CRUD on a server with push enabled, PUSH_NOTIFICATION_NOT_SUPPORTED without.
Delivery itself is tested in tests/push/."""

from __future__ import annotations

import pytest

from a2a_grpc.core._handler import HandlerConfig
from a2a_grpc.errors import ErrorCode
from a2a_grpc.types import pb
from tests.core.helpers import VERSION_MD, RecordingPush, connect, msg, raises


async def test_crud(make_server, push_sink: RecordingPush) -> None:
    srv = await make_server(push=push_sink)
    assert srv.card.capabilities.push_notifications
    async with connect(srv) as stub:
        task = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
        created = await stub.CreateTaskPushNotificationConfig(
            pb.TaskPushNotificationConfig(
                task_id=task.id,
                url="https://hooks.example.com/a2a",
                token="tok-1",
                authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="abc"),
            ),
            metadata=VERSION_MD,
        )
        assert created.id and created.task_id == task.id and created.token == "tok-1"
        assert push_sink.checked[-1].url == "https://hooks.example.com/a2a"
        got = await stub.GetTaskPushNotificationConfig(
            pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id), metadata=VERSION_MD
        )
        # Get and List never answer the credentials (docs/decisions.md); the
        # scheme stays and delivery still uses them.
        assert got.authentication.scheme == "Bearer" and not got.authentication.credentials
        created.authentication.ClearField("credentials")
        assert got == created
        second = await stub.CreateTaskPushNotificationConfig(
            pb.TaskPushNotificationConfig(task_id=task.id, id="cfg-2", url="https://hooks.example.com/two"),
            metadata=VERSION_MD,
        )
        assert second.id == "cfg-2"
        # Same id again replaces it.
        replaced = await stub.CreateTaskPushNotificationConfig(
            pb.TaskPushNotificationConfig(task_id=task.id, id="cfg-2", url="https://hooks.example.com/2b"),
            metadata=VERSION_MD,
        )
        listed = await stub.ListTaskPushNotificationConfigs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id), metadata=VERSION_MD
        )
        assert [c.id for c in listed.configs] == [created.id, "cfg-2"]
        assert listed.configs[1] == replaced and listed.next_page_token == ""
        # Pagination one by one.
        page1 = await stub.ListTaskPushNotificationConfigs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id, page_size=1), metadata=VERSION_MD
        )
        assert [c.id for c in page1.configs] == [created.id] and page1.next_page_token
        page2 = await stub.ListTaskPushNotificationConfigs(
            pb.ListTaskPushNotificationConfigsRequest(
                task_id=task.id, page_size=1, page_token=page1.next_page_token
            ),
            metadata=VERSION_MD,
        )
        assert [c.id for c in page2.configs] == ["cfg-2"] and page2.next_page_token == ""
        # Delete, then it is gone; deleting again is idempotent.
        for _ in range(2):
            await stub.DeleteTaskPushNotificationConfig(
                pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=created.id),
                metadata=VERSION_MD,
            )
        with raises(ErrorCode.TASK_NOT_FOUND):
            await stub.GetTaskPushNotificationConfig(
                pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id), metadata=VERSION_MD
            )
        listed = await stub.ListTaskPushNotificationConfigs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id), metadata=VERSION_MD
        )
        assert [c.id for c in listed.configs] == ["cfg-2"]


async def test_errors(make_server, push_sink: RecordingPush) -> None:
    srv = await make_server(push=push_sink, handler=HandlerConfig(push_max_configs_per_task=2))
    async with connect(srv) as stub:
        task = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
        with raises(ErrorCode.TASK_NOT_FOUND):
            await stub.CreateTaskPushNotificationConfig(
                pb.TaskPushNotificationConfig(task_id="nope", url="https://h.example"), metadata=VERSION_MD
            )
        with raises(ErrorCode.TASK_NOT_FOUND):
            await stub.ListTaskPushNotificationConfigs(
                pb.ListTaskPushNotificationConfigsRequest(task_id="nope"), metadata=VERSION_MD
            )
        with raises(ErrorCode.TASK_NOT_FOUND):
            await stub.DeleteTaskPushNotificationConfig(
                pb.DeleteTaskPushNotificationConfigRequest(task_id="nope", id="x"), metadata=VERSION_MD
            )
        with raises(ErrorCode.INVALID_PARAMS) as r:
            await stub.CreateTaskPushNotificationConfig(
                pb.TaskPushNotificationConfig(task_id=task.id, url="https://blocked.example"),
                metadata=VERSION_MD,
            )
        assert "url" in r.violations
        with raises(ErrorCode.INVALID_PARAMS) as r:
            await stub.ListTaskPushNotificationConfigs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=task.id, page_token="%%%"),
                metadata=VERSION_MD,
            )
        for i in range(2):
            await stub.CreateTaskPushNotificationConfig(
                pb.TaskPushNotificationConfig(task_id=task.id, url=f"https://h.example/{i}"),
                metadata=VERSION_MD,
            )
        with raises(ErrorCode.RESOURCE_EXHAUSTED):
            await stub.CreateTaskPushNotificationConfig(
                pb.TaskPushNotificationConfig(task_id=task.id, url="https://h.example/3"), metadata=VERSION_MD
            )
        listed = await stub.ListTaskPushNotificationConfigs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id), metadata=VERSION_MD
        )
        assert len(listed.configs) == 2


async def test_config_with_send_message(make_server, push_sink: RecordingPush) -> None:
    srv = await make_server(push=push_sink)
    async with connect(srv) as stub:
        req = msg("echo pushed")
        req.configuration.task_push_notification_config.CopyFrom(
            pb.TaskPushNotificationConfig(url="https://hooks.example.com/with-send", token="t")
        )
        task = (await stub.SendMessage(req, metadata=VERSION_MD)).task
        listed = await stub.ListTaskPushNotificationConfigs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id), metadata=VERSION_MD
        )
        assert [(c.task_id, c.url) for c in listed.configs] == [
            (task.id, "https://hooks.example.com/with-send")
        ]
        assert push_sink.wakes > 0
        assert await srv.store.outbox_count("pending") > 0
        bad = msg("echo blocked")
        bad.configuration.task_push_notification_config.CopyFrom(
            pb.TaskPushNotificationConfig(url="https://blocked.example/")
        )
        with raises(ErrorCode.INVALID_PARAMS) as refused:
            await stub.SendMessage(bad, metadata=VERSION_MD)
        assert set(refused.violations) == {"configuration.task_push_notification_config.url"}
        assert (await stub.ListTasks(pb.ListTasksRequest(), metadata=VERSION_MD)).total_size == 1


@pytest.mark.parametrize("store_kind", ["memory"])
async def test_not_supported_when_disabled(stub) -> None:
    task = (await stub.SendMessage(msg("ask"), metadata=VERSION_MD)).task
    calls = [
        stub.CreateTaskPushNotificationConfig(
            pb.TaskPushNotificationConfig(task_id=task.id, url="https://h.example"), metadata=VERSION_MD
        ),
        stub.GetTaskPushNotificationConfig(
            pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id="x"), metadata=VERSION_MD
        ),
        stub.ListTaskPushNotificationConfigs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id), metadata=VERSION_MD
        ),
        stub.DeleteTaskPushNotificationConfig(
            pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="x"), metadata=VERSION_MD
        ),
    ]
    for call in calls:
        with raises(ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED):
            await call
    req = msg("echo x")
    req.configuration.task_push_notification_config.CopyFrom(
        pb.TaskPushNotificationConfig(url="https://h.example")
    )
    with raises(ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED):
        await stub.SendMessage(req, metadata=VERSION_MD)
    assert (await stub.ListTasks(pb.ListTasksRequest(), metadata=VERSION_MD)).total_size == 1
