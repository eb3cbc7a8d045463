"""The audit log of one scripted session (issue 11 item 6), over real sockets.

An anonymous call, a caller without the scope, then alice on all three
bindings: a task that asks for input, a webhook on it, the answer that
completes it (with an artifact), the webhook removed, a second task canceled,
the extended card read. The JSON lines must be exactly that story — who, on
behalf of whom, over which binding and RPC — and hold no secret.
"""

from __future__ import annotations

import json

from a2a_grpc.auth import load_policy
from a2a_grpc.auth._audit import open_audit_log
from a2a_grpc.push import PushDispatcher
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.auth.test_limits import config_text, send, task_of
from tests.auth.wire import Wire
from tests.interop.agents import InteropAgent


async def test_the_audit_sequence_of_one_scripted_session(tmp_path):
    text, secrets = config_text({}, {"alice": {"scopes": ["a2a"]}, "dora": {"scopes": []}})
    text = text.replace("[limits]\n", '[[requirements]]\napiKey = ["a2a"]\n')
    path = tmp_path / "auth.toml"
    path.write_text(text)
    log_path = tmp_path / "audit.jsonl"
    store = InMemoryTaskStore()
    extended = pb.AgentCard()
    extended.CopyFrom(InteropAgent.card)
    server = A2AServer(
        InteropAgent(),
        store,
        ServerConfig(
            host="127.0.0.1",
            grpc_port=0,
            http_port=0,
            grace_seconds=0.2,
            auth=load_policy(path),
            audit=open_audit_log(str(log_path)),
        ),
        push=PushDispatcher(store, allow=["127.0.0.1"], max_attempts=1, timeout_seconds=1),
        extended_card=extended,
    )
    await server.start()
    wire = Wire(f"http://127.0.0.1:{server.http_port}", f"127.0.0.1:{server.grpc_port}")
    alice = {"X-API-Key": secrets["alice"]}
    try:
        assert not (await wire.call("grpc", "ListTasks", pb.ListTasksRequest())).ok
        assert not (
            await wire.call("rest", "ListTasks", pb.ListTasksRequest(), {"X-API-Key": secrets["dora"]})
        ).ok
        asked = task_of(await wire.call("jsonrpc", "SendMessage", send("ask"), alice), "jsonrpc")
        hook = pb.TaskPushNotificationConfig(task_id=asked.id, id="hook-1", url="http://127.0.0.1:9/hook")
        assert (await wire.call("rest", "CreateTaskPushNotificationConfig", hook, alice)).ok
        answer = send("hello")
        answer.message.task_id = asked.id
        done = task_of(await wire.call("grpc", "SendMessage", answer, alice), "grpc")
        assert done.status.state == pb.TASK_STATE_COMPLETED
        delete = pb.DeleteTaskPushNotificationConfigRequest(task_id=asked.id, id="hook-1")
        assert (await wire.call("grpc", "DeleteTaskPushNotificationConfig", delete, alice)).ok
        slow = task_of(
            await wire.call("rest", "SendMessage", send("slow 30", immediately=True), alice), "rest"
        )
        assert (await wire.call("jsonrpc", "CancelTask", pb.CancelTaskRequest(id=slow.id), alice)).ok
        assert (await wire.call("grpc", "GetExtendedAgentCard", pb.GetExtendedAgentCardRequest(), alice)).ok
    finally:
        await wire.close()
        await server.stop(0.2)

    text = log_path.read_text()
    for secret in secrets.values():
        assert secret not in text and secret.split("_")[2] not in text
    records = [json.loads(line) for line in text.splitlines()]
    owner = "urn:a2a-grpc:api-key#alice"
    got = [
        (r["event"], r["actor"], r.get("onBehalfOf"), r["binding"], r["rpc"], r.get("taskId"), r.get("state"))
        for r in records
    ]
    a, s = asked.id, slow.id
    assert got == [
        ("auth.failed", "anonymous", None, "grpc", "ListTasks", None, None),
        ("authz.denied", "anonymous", None, "rest", "ListTasks", None, None),
        ("task.created", "agent", owner, "jsonrpc", "SendMessage", a, "submitted"),
        ("task.state", "agent", owner, "jsonrpc", "SendMessage", a, "input_required"),
        ("push_config.created", owner, None, "rest", "CreateTaskPushNotificationConfig", a, None),
        ("task.state", "agent", owner, "grpc", "SendMessage", a, "working"),
        ("task.artifact", "agent", owner, "grpc", "SendMessage", a, None),
        ("task.state", "agent", owner, "grpc", "SendMessage", a, "completed"),
        ("push_config.deleted", owner, None, "grpc", "DeleteTaskPushNotificationConfig", a, None),
        ("task.created", "agent", owner, "rest", "SendMessage", s, "submitted"),
        ("task.state", "agent", owner, "rest", "SendMessage", s, "working"),
        ("task.state", "agent", owner, "rest", "SendMessage", s, "canceled"),
        ("task.cancel_requested", owner, None, "jsonrpc", "CancelTask", s, None),
        ("extended_card.read", owner, None, "grpc", "GetExtendedAgentCard", None, None),
    ]
    assert all(r["peer"].startswith("ipv4:127.0.0.1:") and "time" in r for r in records)
    assert records[1]["reason"] == "PERMISSION_DENIED" and records[0]["reason"] == "UNAUTHENTICATED"
    assert records[4]["configId"] == "hook-1"
    assert records[6]["artifactId"] == done.artifacts[0].artifact_id
    assert records[3]["previousState"] == "submitted" and records[11]["previousState"] == "working"
