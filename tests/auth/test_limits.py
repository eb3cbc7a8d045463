"""Per-caller limits (issue 11 item 5) on every binding, over real sockets.

Each test starts its own server with an auth file carrying a ``[limits]``
table and keys with their own ``rate`` / ``concurrency``: the rate (a sliding
window, in memory and in Redis shared by two servers), concurrent executions,
the execution time limit (the task ends FAILED saying why), and failed
authentications per peer. A refusal is RESOURCE_EXHAUSTED with RetryInfo and
a ``retry-after`` trailer on gRPC, 429 with ``Retry-After`` on REST, and the
JSON-RPC error object (HTTP 200) with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from google.rpc import error_details_pb2, status_pb2

from a2a_grpc.auth import AuthConfigError, load_policy
from a2a_grpc.auth._apikeys import digest, new_secret
from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb
from tests.auth.wire import BINDINGS, Reply, Wire
from tests.interop.agents import InteropAgent

REDIS = "redis://127.0.0.1:6379/0"


def config_text(limits: dict[str, object], keys: dict[str, dict[str, object]]) -> tuple[str, dict[str, str]]:
    """An auth file with ``keys`` (subject → extra settings) and ``[limits]``."""
    secrets: dict[str, str] = {}
    lines = ["[schemes.apiKey]", 'type = "apiKey"']
    for subject, extra in keys.items():
        key_id, secret = new_secret()
        secrets[subject] = secret
        lines += ["[[schemes.apiKey.keys]]", f'id = "{key_id}"', f'subject = "{subject}"']
        lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
        lines.append(f'hash = "{digest(secret)}"')
    lines.append("[limits]")
    lines += [f"{k} = {json.dumps(v)}" for k, v in limits.items()]
    return "\n".join(lines) + "\n", secrets


@contextlib.asynccontextmanager
async def serving(
    tmp_path: Path, limits: dict[str, object], keys: dict[str, dict[str, object]]
) -> AsyncIterator[tuple[Wire, dict[str, dict[str, str]]]]:
    text, secrets = config_text(limits, keys)
    path = tmp_path / f"auth-{uuid.uuid4().hex[:6]}.toml"
    path.write_text(text)
    server = A2AServer(
        InteropAgent(),
        InMemoryTaskStore(),
        ServerConfig(host="127.0.0.1", grpc_port=0, http_port=0, grace_seconds=0.2, auth=load_policy(path)),
    )
    await server.start()
    wire = Wire(f"http://127.0.0.1:{server.http_port}", f"127.0.0.1:{server.grpc_port}")
    try:
        yield wire, {name: {"X-API-Key": s} for name, s in secrets.items()}
    finally:
        await wire.close()
        await server.stop(0.2)


def error_status(reply: Reply, binding: str) -> tuple[str, dict[str, str], list[dict[str, Any]]]:
    """(reason, ErrorInfo metadata, details as ProtoJSON) of an error reply."""
    if binding == "grpc":
        status = status_pb2.Status.FromString(reply.body.split(b"\n", 1)[1])
        details = [json_format.MessageToDict(d) for d in status.details]
    else:
        data = json.loads(reply.body)["error"]
        details = data.get("details") or data.get("data")
    return details[0]["reason"], details[0].get("metadata", {}), details


def assert_limited(reply: Reply, binding: str, limit: str) -> None:
    """RESOURCE_EXHAUSTED in the binding's form, with RetryInfo and Retry-After."""
    assert not reply.ok
    assert reply.status == {"grpc": "RESOURCE_EXHAUSTED", "jsonrpc": 200, "rest": 429}[binding]
    reason, metadata, details = error_status(reply, binding)
    assert (reason, metadata["limit"]) == ("RESOURCE_EXHAUSTED", limit)
    retry = [d for d in details if d["@type"].endswith("google.rpc.RetryInfo")]
    assert len(retry) == 1 and retry[0]["retryDelay"].endswith("s")
    seconds = int(retry[0]["retryDelay"][:-1])
    assert seconds >= 1
    assert reply.headers["retry-after"] == str(seconds)
    if binding == "jsonrpc":
        assert json.loads(reply.body)["error"]["code"] == -32000


def send(text: str, *, immediately: bool = False) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(
        message=pb.Message(role=pb.ROLE_USER, message_id=str(uuid.uuid4()), parts=[pb.Part(text=text)]),
        configuration=pb.SendMessageConfiguration(return_immediately=immediately),
    )


def task_of(reply: Reply, binding: str) -> pb.Task:
    assert reply.ok, reply.body
    if binding == "grpc":
        return reply.message.task
    data = json.loads(reply.body)
    data = data["result"] if binding == "jsonrpc" else data
    return json_format.ParseDict(data["task"], pb.Task(), ignore_unknown_fields=True)


async def test_the_rate_counts_a_callers_calls_on_every_binding_together(tmp_path):
    async with serving(tmp_path, {"rate": "1000/minute"}, {"tight": {"rate": "6/minute"}, "free": {}}) as (
        wire,
        keys,
    ):
        for binding in BINDINGS:
            for _ in range(2):
                reply = await wire.call(binding, "ListTasks", pb.ListTasksRequest(), keys["tight"])
                assert reply.ok, reply.body
        for binding in BINDINGS:
            reply = await wire.call(binding, "ListTasks", pb.ListTasksRequest(), keys["tight"])
            assert_limited(reply, binding, "rate")
            other = await wire.call(binding, "ListTasks", pb.ListTasksRequest(), keys["free"])
            assert other.ok, other.body  # another caller has its own window


async def test_concurrent_executions_are_limited_per_caller_and_nothing_is_stored(tmp_path):
    async with serving(tmp_path, {"concurrency": 3}, {"solo": {"concurrency": 1}, "free": {}}) as (
        wire,
        keys,
    ):
        first = await wire.call("grpc", "SendMessage", send("slow 30", immediately=True), keys["solo"])
        task_id = task_of(first, "grpc").id
        for binding in BINDINGS:
            rpc = "SendStreamingMessage" if binding == "rest" else "SendMessage"
            assert_limited(await wire.call(binding, rpc, send("hello"), keys["solo"]), binding, "concurrency")
        listed = await wire.call("grpc", "ListTasks", pb.ListTasksRequest(), keys["solo"])
        assert [t.id for t in listed.message.tasks] == [task_id]  # the refused messages stored nothing
        ok = await wire.call("grpc", "SendMessage", send("hello"), keys["free"])
        assert ok.ok, ok.body  # free runs under the default of 3
        canceled = await wire.call("grpc", "CancelTask", pb.CancelTaskRequest(id=task_id), keys["solo"])
        assert canceled.ok, canceled.body
        for _ in range(50):  # the execution ends just after the cancel is answered
            again = await wire.call("jsonrpc", "SendMessage", send("hello"), keys["solo"])
            if again.ok:
                break
            await asyncio.sleep(0.05)
        assert task_of(again, "jsonrpc").status.state == pb.TASK_STATE_COMPLETED


async def test_an_execution_past_its_time_limit_fails_saying_why(tmp_path):
    async with serving(tmp_path, {"execution_timeout": 0.5}, {"alice": {}}) as (wire, keys):
        for binding in BINDINGS:
            reply = await wire.call(binding, "SendMessage", send("slow 30"), keys["alice"])
            task = task_of(reply, binding)
            assert task.status.state == pb.TASK_STATE_FAILED, task
            got = await wire.call("grpc", "GetTask", pb.GetTaskRequest(id=task.id), keys["alice"])
            status = got.message.status
            assert status.state == pb.TASK_STATE_FAILED
            assert "DEADLINE_EXCEEDED" in status.message.parts[0].text
            assert "time limit" in status.message.parts[0].text
        quick = await wire.call("rest", "SendMessage", send("hello"), keys["alice"])
        assert task_of(quick, "rest").status.state == pb.TASK_STATE_COMPLETED


async def test_failed_authentications_are_limited_per_peer(tmp_path):
    async with serving(tmp_path, {"auth_failures": "4/minute"}, {"alice": {}}) as (wire, keys):
        bad = {"X-API-Key": "a2a_000000000000_wrong"}
        for binding in (*BINDINGS, "grpc"):
            reply = await wire.call(binding, "ListTasks", pb.ListTasksRequest(), bad)
            assert error_status(reply, binding)[0] == "UNAUTHENTICATED"
        for binding in BINDINGS:  # the peer is refused now, even with a good key
            reply = await wire.call(binding, "ListTasks", pb.ListTasksRequest(), keys["alice"])
            assert_limited(reply, binding, "authFailures")


async def test_a_rate_in_redis_is_shared_by_two_servers(tmp_path):
    subject = f"shared-{uuid.uuid4().hex[:8]}"  # a fresh window in the shared Redis
    text, secrets = config_text({"rate": "4/minute", "storage": REDIS}, {subject: {}})
    path = tmp_path / "auth.toml"
    path.write_text(text)
    servers = [
        A2AServer(
            InteropAgent(),
            InMemoryTaskStore(),
            ServerConfig(host="127.0.0.1", grpc_port=0, http_port=0, auth=load_policy(path)),
        )
        for _ in range(2)
    ]
    for server in servers:
        await server.start()
    wires = [Wire(f"http://127.0.0.1:{s.http_port}", f"127.0.0.1:{s.grpc_port}") for s in servers]
    key = {"X-API-Key": secrets[subject]}
    try:
        for wire in (*wires, *wires):
            assert (await wire.call("grpc", "ListTasks", pb.ListTasksRequest(), key)).ok
        for wire in wires:
            assert_limited(await wire.call("rest", "ListTasks", pb.ListTasksRequest(), key), "rest", "rate")
    finally:
        for wire in wires:
            await wire.close()
        for server in servers:
            await server.stop(0.2)


@pytest.mark.parametrize(
    ("limits", "keys", "says"),
    [
        ({"rate": "lots"}, {}, "limits.rate"),
        ({"ceiling": 3}, {}, "ceiling"),
        ({"concurrency": 0}, {}, "limits.concurrency"),
        ({"execution_timeout": "1m"}, {}, "limits.execution_timeout"),
        ({"storage": "mongodb://x"}, {}, "limits.storage"),
        ({}, {"a": {"rate": "5/fortnight"}}, "keys[0].rate"),
        ({}, {"a": {"concurrency": -1}}, "keys[0].concurrency"),
    ],
)
def test_bad_limits_stop_the_server_at_start_naming_the_setting(tmp_path, limits, keys, says):
    text, _ = config_text(limits, keys or {"a": {}})
    path = tmp_path / "auth.toml"
    path.write_text(text)
    with pytest.raises(AuthConfigError, match=says.replace("[", r"\[")):
        load_policy(path)


def test_retry_info_round_trips_the_status():
    from a2a_grpc.auth._limits import RateLimited

    err = RateLimited("slow down", 2.2, limit="rate")
    status = err.to_status()
    info = error_details_pb2.RetryInfo()
    assert status.details[1].Unpack(info) and info.retry_delay.seconds == 3
    assert err.trailing_metadata == (("retry-after", "3"),)
