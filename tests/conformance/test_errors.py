"""Every error of the table a client can provoke, on every binding, with the
same ErrorInfo reason (spec §5.4; design.md "errors from the one table")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb
from tests.conformance.agents import REQUIRED_EXTENSION
from tests.conformance.clients import collect
from tests.conformance.scenario import message, send

pytestmark = pytest.mark.asyncio(loop_scope="package")

#: Errors no client request can cause on a healthy server without authentication.
UNREACHABLE = {
    ErrorCode.INTERNAL,  # a server fault
    ErrorCode.UNAUTHENTICATED,  # the server runs without authentication
    ErrorCode.PERMISSION_DENIED,
    ErrorCode.RESOURCE_EXHAUSTED,  # a slow subscriber / config limits (tested in the core suite)
    ErrorCode.UNAVAILABLE,  # server shutting down
    ErrorCode.DEADLINE_EXCEEDED,
    # An A2AServer's card claims an extended card only when one is configured
    # (tested in tests/core/test_interceptors.py with a card that claims one).
    ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED,
    # The agent registry's own error (a2agrpc.registry.v1), tested in tests/registry.
    ErrorCode.AGENT_NOT_FOUND,
}
#: Errors that only exist where there is JSON framing (tested in test_malformed).
HTTP_ONLY = {ErrorCode.PARSE_ERROR, ErrorCode.INVALID_REQUEST}


async def _expect(t: Any, label: str, code: ErrorCode, call: Callable[[], Awaitable[Any]]) -> None:
    with pytest.raises(A2AError) as exc:
        await call()
    t.error(label, exc.value)
    assert exc.value.code is code, f"{label}: {exc.value!r}"


async def test_error_table(binding, bare, transcript):
    t = transcript
    done = (await binding.call("SendMessage", send("echo x"))).task
    seen: set[ErrorCode] = set()

    async def expect(label: str, code: ErrorCode, call: Callable[[], Awaitable[Any]]) -> None:
        await _expect(t, label, code, call)
        seen.add(code)

    await expect(
        "get unknown", ErrorCode.TASK_NOT_FOUND, lambda: binding.call("GetTask", pb.GetTaskRequest(id="zz"))
    )
    await expect(
        "message to unknown task",
        ErrorCode.TASK_NOT_FOUND,
        lambda: binding.call("SendMessage", send("hi", task_id="zz")),
    )
    await expect(
        "cancel completed",
        ErrorCode.TASK_NOT_CANCELABLE,
        lambda: binding.call("CancelTask", pb.CancelTaskRequest(id=done.id)),
    )
    await expect(
        "message to terminal task",
        ErrorCode.UNSUPPORTED_OPERATION,
        lambda: binding.call("SendMessage", send("again", task_id=done.id)),
    )
    await expect(
        "agent refuses content",
        ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
        lambda: binding.call("SendMessage", send("refuse")),
    )
    await expect(
        "agent says nothing",
        ErrorCode.INVALID_AGENT_RESPONSE,
        lambda: binding.call("SendMessage", send("silent")),
    )
    await expect(
        "no extended card (capability absent)",
        ErrorCode.UNSUPPORTED_OPERATION,
        lambda: binding.call("GetExtendedAgentCard", pb.GetExtendedAgentCardRequest()),
    )
    await expect(
        "unsupported version",
        ErrorCode.VERSION_NOT_SUPPORTED,
        lambda: binding.call("GetTask", pb.GetTaskRequest(id=done.id), headers={"A2A-Version": "9.9"}),
    )
    await expect(
        "no parts",
        ErrorCode.INVALID_PARAMS,
        lambda: binding.call(
            "SendMessage", pb.SendMessageRequest(message=pb.Message(message_id="m", role=pb.ROLE_USER))
        ),
    )
    await expect(
        "negative historyLength",
        ErrorCode.INVALID_PARAMS,
        lambda: binding.call("GetTask", pb.GetTaskRequest(id=done.id, history_length=-1)),
    )
    await expect(
        "no message id",
        ErrorCode.INVALID_PARAMS,
        lambda: binding.call("SendMessage", pb.SendMessageRequest(message=message("x", message_id=""))),
    )
    await expect("unknown method", ErrorCode.METHOD_NOT_FOUND, lambda: _unknown_method(binding))
    # Over max_message_bytes (16 MiB) but within what each transport reads:
    # the same error everywhere (tests/conformance/test_size_limits.py has the wire forms).
    await expect(
        "request too large",
        ErrorCode.PAYLOAD_TOO_LARGE,
        lambda: binding.call("SendMessage", send("echo " + "x" * (16 << 20))),
    )

    # The bare agent: strict versions, a required extension, no streaming/push/extended card.
    ext = {"A2A-Extensions": REQUIRED_EXTENSION}
    await expect(
        "missing version (strict)",
        ErrorCode.VERSION_NOT_SUPPORTED,
        # ListTasks: GET /tasks/{id} without the header is the tutorial's route (docs/dialects.md)
        lambda: bare.call("ListTasks", pb.ListTasksRequest(), headers={"A2A-Version": None, **ext}),
    )
    await expect(
        "required extension missing",
        ErrorCode.EXTENSION_SUPPORT_REQUIRED,
        lambda: bare.call("SendMessage", send("hi")),
    )
    await expect(
        "push not supported",
        ErrorCode.PUSH_NOTIFICATION_NOT_SUPPORTED,
        lambda: bare.call(
            "ListTaskPushNotificationConfigs",
            pb.ListTaskPushNotificationConfigsRequest(task_id="x"),
            headers=ext,
        ),
    )
    await expect(
        "no streaming",
        ErrorCode.UNSUPPORTED_OPERATION,
        lambda: collect(bare, "SendStreamingMessage", send("hi"), headers=ext),
    )
    await expect(
        "no extended card (capability false)",
        ErrorCode.UNSUPPORTED_OPERATION,
        lambda: bare.call("GetExtendedAgentCard", pb.GetExtendedAgentCardRequest(), headers=ext),
    )
    ok = await bare.call("SendMessage", send("hi"), headers=ext)
    assert ok.task.status.state == pb.TASK_STATE_COMPLETED
    assert bare.last_extensions == REQUIRED_EXTENSION

    assert seen == set(ErrorCode) - UNREACHABLE - HTTP_ONLY
    t.check_parity()


async def _unknown_method(binding: Any) -> None:
    if binding.name == "grpc":
        await binding.unknown_method()
    elif binding.name == "jsonrpc":
        envelope = {"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod", "params": {}}
        async with binding.session.post(binding.url, json=envelope, headers={"A2A-Version": "1.0"}) as resp:
            body = await resp.json()
        raise binding._error(body)
    else:
        async with binding.session.get(
            binding.base + "/no/such/route", headers={"A2A-Version": "1.0"}
        ) as resp:
            assert resp.status == 404
            raise await binding._error(resp)
