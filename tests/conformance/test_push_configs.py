"""Push notification config CRUD on every binding (spec §3.1.7–3.1.10)."""

from __future__ import annotations

import pytest

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb
from tests.conformance.scenario import start_holding

pytestmark = pytest.mark.asyncio(loop_scope="package")


async def test_push_config_crud(binding, transcript, servers):
    t = transcript
    url = servers.receiver.url
    task = await start_holding(binding)

    created = await binding.call(
        "CreateTaskPushNotificationConfig",
        pb.TaskPushNotificationConfig(
            task_id=task.id,
            url=url,
            token="tok-1",
            authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="secret"),
        ),
    )
    t.add("create", created)
    assert created.id and created.task_id == task.id and created.url == url
    assert created.authentication.scheme == "Bearer"

    named = t.add(
        "create named",
        await binding.call(
            "CreateTaskPushNotificationConfig",
            pb.TaskPushNotificationConfig(task_id=task.id, id="cfg-2", url=url),
        ),
    )
    assert named.id == "cfg-2"

    got = t.add(
        "get",
        await binding.call(
            "GetTaskPushNotificationConfig",
            pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=created.id),
        ),
    )
    # Get and List never answer the credentials (docs/decisions.md).
    assert got.authentication.scheme == "Bearer" and not got.authentication.credentials
    expected = pb.TaskPushNotificationConfig()
    expected.CopyFrom(created)
    expected.authentication.ClearField("credentials")
    assert got == expected

    listed = t.add(
        "list",
        await binding.call(
            "ListTaskPushNotificationConfigs", pb.ListTaskPushNotificationConfigsRequest(task_id=task.id)
        ),
    )
    assert sorted(c.id for c in listed.configs) == sorted([created.id, "cfg-2"])
    assert not any(c.authentication.credentials for c in listed.configs)

    deleted = await binding.call(
        "DeleteTaskPushNotificationConfig",
        pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-2"),
    )
    t.add("delete", deleted)
    with pytest.raises(A2AError) as exc:
        await binding.call(
            "GetTaskPushNotificationConfig",
            pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-2"),
        )
    t.error("get deleted", exc.value)
    assert exc.value.code is ErrorCode.TASK_NOT_FOUND
    # Delete is idempotent.
    t.add(
        "delete again",
        await binding.call(
            "DeleteTaskPushNotificationConfig",
            pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-2"),
        ),
    )
    listed = await binding.call(
        "ListTaskPushNotificationConfigs", pb.ListTaskPushNotificationConfigsRequest(task_id=task.id)
    )
    assert [c.id for c in t.add("list after delete", listed).configs] == [created.id]

    with pytest.raises(A2AError) as exc:
        await binding.call(
            "CreateTaskPushNotificationConfig",
            pb.TaskPushNotificationConfig(task_id=task.id, url="http://10.1.2.3/hook"),
        )
    assert t.error("private address", exc.value).code is ErrorCode.INVALID_PARAMS
    with pytest.raises(A2AError) as exc:
        await binding.call(
            "CreateTaskPushNotificationConfig", pb.TaskPushNotificationConfig(task_id="no-such-task", url=url)
        )
    assert t.error("unknown task", exc.value).code is ErrorCode.TASK_NOT_FOUND
    with pytest.raises(A2AError) as exc:
        await binding.call("CreateTaskPushNotificationConfig", pb.TaskPushNotificationConfig(task_id=task.id))
    assert t.error("no url", exc.value).code is ErrorCode.INVALID_PARAMS

    await binding.call("CancelTask", pb.CancelTaskRequest(id=task.id))
    t.check_parity()
