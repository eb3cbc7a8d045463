"""The same bad request gets the same error whatever the RPC and the binding
(design.md: one interceptor order for every RPC — version, extensions,
validation, capability gate, then the operation).

Every RPC is sent the same defect, alone and combined with the later ones, to
the bare server (strict versions, a required extension, no streaming, no push,
``extendedAgentCard: false``); the earliest failing step decides the
ErrorInfo reason, identical on every RPC and on grpc, jsonrpc and rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.errors import A2AError
from a2a_grpc.types import pb
from tests.conformance.agents import REQUIRED_EXTENSION
from tests.conformance.clients import SERVICE, Binding, collect_with_error
from tests.conformance.scenario import send

pytestmark = pytest.mark.asyncio(loop_scope="package")

#: One request per RPC, each valid on its own ("t1" is a task that does not exist).
REQUESTS: dict[str, ProtoMessage] = {
    "SendMessage": send("hi"),
    "SendStreamingMessage": send("hi"),
    "GetTask": pb.GetTaskRequest(id="t1"),
    "ListTasks": pb.ListTasksRequest(),
    "CancelTask": pb.CancelTaskRequest(id="t1"),
    "SubscribeToTask": pb.SubscribeToTaskRequest(id="t1"),
    "CreateTaskPushNotificationConfig": pb.TaskPushNotificationConfig(
        task_id="t1", url="https://example.com/h"
    ),
    "GetTaskPushNotificationConfig": pb.GetTaskPushNotificationConfigRequest(task_id="t1", id="c1"),
    "ListTaskPushNotificationConfigs": pb.ListTaskPushNotificationConfigsRequest(task_id="t1"),
    "GetExtendedAgentCard": pb.GetExtendedAgentCardRequest(),
    "DeleteTaskPushNotificationConfig": pb.DeleteTaskPushNotificationConfigRequest(task_id="t1", id="c1"),
}

#: What the capability gate answers on the bare server, by RPC (the table in
#: a2a_grpc.core._interceptors.REQUIRED_CAPABILITY); the other RPCs reach their operation.
MISSING_CAPABILITY = {
    "SendStreamingMessage": "UNSUPPORTED_OPERATION",
    "SubscribeToTask": "UNSUPPORTED_OPERATION",
    "CreateTaskPushNotificationConfig": "PUSH_NOTIFICATION_NOT_SUPPORTED",
    "GetTaskPushNotificationConfig": "PUSH_NOTIFICATION_NOT_SUPPORTED",
    "ListTaskPushNotificationConfigs": "PUSH_NOTIFICATION_NOT_SUPPORTED",
    "DeleteTaskPushNotificationConfig": "PUSH_NOTIFICATION_NOT_SUPPORTED",
    "GetExtendedAgentCard": "UNSUPPORTED_OPERATION",
}

BAD_VERSION = {"A2A-Version": "9.9"}
NO_VERSION = {"A2A-Version": None}
WITH_EXTENSION = {"A2A-Extensions": REQUIRED_EXTENSION}

#: (label, headers, invalid request?, the reason every RPC must answer).
CASES: list[tuple[str, Mapping[str, str | None], bool, str]] = [
    ("bad version", {**BAD_VERSION, **WITH_EXTENSION}, False, "VERSION_NOT_SUPPORTED"),
    ("bad version, extension missing", BAD_VERSION, False, "VERSION_NOT_SUPPORTED"),
    ("bad version, extension missing, invalid", BAD_VERSION, True, "VERSION_NOT_SUPPORTED"),
    ("no version (strict), invalid", {**NO_VERSION, **WITH_EXTENSION}, True, "VERSION_NOT_SUPPORTED"),
    ("extension missing", {}, False, "EXTENSION_SUPPORT_REQUIRED"),
    ("extension missing, invalid", {}, True, "EXTENSION_SUPPORT_REQUIRED"),
    ("invalid", WITH_EXTENSION, True, "INVALID_PARAMS"),
]


def _invalid(request: ProtoMessage) -> ProtoMessage:
    """``request`` with the same defect whatever its type: a tenant longer
    than the 256 characters an id may have."""
    out = type(request)()
    out.CopyFrom(request)
    out.tenant = "x" * 300  # type: ignore[attr-defined]
    return out


async def _reason(
    binding: Binding, rpc: str, request: ProtoMessage, headers: Mapping[str, str | None]
) -> str:
    """The ErrorInfo reason the call ends with, or "ok"."""
    err: A2AError | None
    if SERVICE.methods_by_name[rpc].server_streaming:
        _events, err = await collect_with_error(binding, rpc, request, headers=headers)
    else:
        try:
            await binding.call(rpc, request, headers=headers)
        except A2AError as exc:
            err = exc
        else:
            err = None
    return err.code.reason if err is not None else "ok"


async def test_the_same_bad_request_gets_the_same_error_on_every_rpc(bare: Binding, transcript: Any) -> None:
    assert set(REQUESTS) == {m.name for m in SERVICE.methods}
    for label, headers, invalid, want in CASES:
        got = {
            rpc: await _reason(bare, rpc, _invalid(req) if invalid else req, headers)
            for rpc, req in REQUESTS.items()
        }
        transcript.note(label, sorted(got.items()))
        assert got == dict.fromkeys(REQUESTS, want), label
    transcript.check_parity()


async def test_a_missing_capability_is_refused_after_every_other_check(
    bare: Binding, transcript: Any
) -> None:
    """Valid version, extension and request: the capability gate answers
    from its table; the RPCs that need no capability reach their operation."""
    got = {rpc: await _reason(bare, rpc, req, WITH_EXTENSION) for rpc, req in REQUESTS.items()}
    transcript.note("valid request", sorted(got.items()))
    for rpc, reason in MISSING_CAPABILITY.items():
        assert got[rpc] == reason, rpc
    assert {rpc: got[rpc] for rpc in REQUESTS if rpc not in MISSING_CAPABILITY} == {
        "SendMessage": "ok",
        "GetTask": "TASK_NOT_FOUND",
        "ListTasks": "ok",
        "CancelTask": "TASK_NOT_FOUND",
    }
    transcript.check_parity()
