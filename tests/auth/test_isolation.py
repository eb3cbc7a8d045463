"""Tasks belong to their caller (spec §13.1), walked over every RPC and binding.

Alice starts a task and puts a webhook on it. Every other caller — another
API key, a key bound to another tenant, a JWT subject of the OIDC issuer —
gets for each of the RPCs naming that task *exactly* the bytes it gets for a
random id (the ids themselves swapped), and ListTasks shows each caller only
its own tasks.
"""

from __future__ import annotations

import json
import uuid
from typing import TypeVar

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from a2a_grpc.context import Owner
from a2a_grpc.principal import API_KEY_ISSUER, Principal
from a2a_grpc.types import pb
from tests.auth.conftest import AuthServer
from tests.auth.test_wire import every_rpc
from tests.auth.wire import BINDINGS

pytestmark = pytest.mark.asyncio(loop_scope="package")
M = TypeVar("M", bound=Message)


def message_of(reply, binding: str, into: M) -> M:
    """The response message of a successful reply, whatever the binding."""
    assert reply.ok, reply.body
    if binding == "grpc":
        return reply.message
    data = json.loads(reply.body)
    return json_format.ParseDict(
        data["result"] if binding == "jsonrpc" else data, into, ignore_unknown_fields=True
    )


TASK_RPCS = [rpc for rpc in every_rpc("x") if rpc not in ("ListTasks", "GetExtendedAgentCard")]


async def alice_task(srv: AuthServer) -> tuple[str, str]:
    """A WORKING task of alice's with one push config: (task id, config id)."""
    wire, alice = srv.wire, srv.key("alice")
    send = pb.SendMessageRequest(
        message=pb.Message(role=pb.ROLE_USER, message_id=str(uuid.uuid4()), parts=[pb.Part(text="slow 30")]),
        configuration=pb.SendMessageConfiguration(return_immediately=True),
    )
    reply = await wire.call("grpc", "SendMessage", send, alice)
    assert reply.ok, reply.body
    task_id = reply.message.task.id
    config = pb.TaskPushNotificationConfig(task_id=task_id, id="cfg-1", url="http://127.0.0.1:9/hook")
    made = await wire.call("grpc", "CreateTaskPushNotificationConfig", config, alice)
    assert made.ok, made.body
    return task_id, "cfg-1"


def callers(srv: AuthServer) -> dict[str, dict[str, str]]:
    return {
        "erin (another key)": srv.key("erin"),
        "bob (tenant acme)": srv.key("bob"),
        "carol (JWT)": srv.bearer(srv.issuer.mint(scope="a2a")),
        # The same subject name as alice's key, from another issuer: another owner.
        "alice of the IdP": srv.bearer(srv.issuer.mint(scope="a2a", sub="alice")),
    }


@pytest.mark.parametrize("binding", BINDINGS)
async def test_another_callers_task_reads_exactly_like_a_random_id_on_every_rpc(auth_server, binding):
    task_id, config_id = await alice_task(auth_server)
    try:
        for who, headers in callers(auth_server).items():
            random_id = str(uuid.uuid4())
            foreign, unknown = every_rpc(task_id, config_id), every_rpc(random_id, config_id)
            for rpc in TASK_RPCS:
                got = await auth_server.wire.call(binding, rpc, foreign[rpc], headers)
                want = await auth_server.wire.call(binding, rpc, unknown[rpc], headers)
                assert not got.ok, (who, rpc, got.body)
                assert got.status == want.status, (who, rpc)
                assert got.reason() == "TASK_NOT_FOUND", (who, rpc)
                assert got.body.replace(task_id.encode(), b"ID") == want.body.replace(
                    random_id.encode(), b"ID"
                ), (
                    who,
                    rpc,
                )
        # The owner still has it all, untouched: WORKING, with its webhook.
        alice = auth_server.key("alice")
        mine = await auth_server.wire.call(binding, "GetTask", pb.GetTaskRequest(id=task_id), alice)
        assert message_of(mine, binding, pb.Task()).status.state == pb.TASK_STATE_WORKING
        follow = await auth_server.wire.call(
            binding, "SubscribeToTask", pb.SubscribeToTaskRequest(id=task_id), alice
        )
        assert follow.ok, follow.body
        if binding == "grpc":
            assert follow.message.task.id == task_id
        else:
            assert follow.body.startswith(b"data: ") and task_id.encode() in follow.body
        got = await auth_server.wire.call(
            binding,
            "GetTaskPushNotificationConfig",
            pb.GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id),
            alice,
        )
        assert got.ok, got.body
    finally:
        await auth_server.wire.call(
            "grpc", "CancelTask", pb.CancelTaskRequest(id=task_id), auth_server.key("alice")
        )


def listed_ids(reply, binding: str) -> set[str]:
    return {t.id for t in message_of(reply, binding, pb.ListTasksResponse()).tasks}


@pytest.mark.parametrize("binding", BINDINGS)
async def test_list_tasks_shows_only_the_callers_own(auth_server, binding):
    task_id, _ = await alice_task(auth_server)
    try:
        mine = await auth_server.wire.call(
            binding, "ListTasks", pb.ListTasksRequest(page_size=100), auth_server.key("alice")
        )
        assert task_id in listed_ids(mine, binding)
        for who, headers in callers(auth_server).items():
            theirs = await auth_server.wire.call(
                binding, "ListTasks", pb.ListTasksRequest(page_size=100), headers
            )
            assert task_id not in listed_ids(theirs, binding), who
    finally:
        await auth_server.wire.call(
            "grpc", "CancelTask", pb.CancelTaskRequest(id=task_id), auth_server.key("alice")
        )


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_key_bound_to_a_tenant_works_in_that_tenant_only(auth_server, binding):
    wire, bob = auth_server.wire, auth_server.key("bob")
    msg = pb.Message(role=pb.ROLE_USER, message_id=str(uuid.uuid4()), parts=[pb.Part(text="hello")])
    sent = await wire.call(binding, "SendMessage", pb.SendMessageRequest(message=msg), bob)
    assert sent.ok, sent.body
    task_id = message_of(sent, binding, pb.SendMessageResponse()).task.id
    # Named or not, the tenant is acme: the task is found both ways.
    for tenant in ("", "acme"):
        got = await wire.call(binding, "GetTask", pb.GetTaskRequest(id=task_id, tenant=tenant), bob)
        assert got.ok, (tenant, got.body)
    other = await wire.call(binding, "GetTask", pb.GetTaskRequest(id=task_id, tenant="globex"), bob)
    assert not other.ok and other.reason() == "PERMISSION_DENIED"
    assert other.status == {"grpc": "PERMISSION_DENIED", "jsonrpc": 200, "rest": 403}[binding]
    owner = Owner("acme", Principal(API_KEY_ISSUER, "bob", "apiKey").owner)
    stored = await auth_server.server.store.get(task_id, owner)
    assert stored is not None
