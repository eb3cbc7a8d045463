"""Invalid input gets the same error on every binding (spec §5.7, §9.5, §11.6;
design.md "the same bad request gets the same error").

Each case is written once as the JSON a client sends — JSON-RPC ``params``, the
HTTP+JSON body or query — and, where gRPC can express the same mistake, as the
nearest proto request: an enum name the server does not know reaches gRPC as
an unknown number (what a client built from a newer proto sends). Every
binding must answer InvalidParamsError naming the same fields; the JSON-only
mistakes (wrong JSON types, numbers beyond int32) are compared between
JSON-RPC, REST and REST over the gRPC loopback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb
from tests.conformance.clients import Binding, _headers
from tests.conformance.conftest import Transcript

ASYNC = pytest.mark.asyncio(loop_scope="package")


@dataclass(frozen=True)
class Case:
    label: str
    rpc: str
    #: What a JSON client sends: JSON-RPC params, and the REST body or query.
    params: dict[str, Any]
    #: The field violations every binding must name.
    fields: tuple[str, ...]
    #: The nearest gRPC request, or None when gRPC cannot express the mistake.
    grpc: Any = None


MESSAGE = {"messageId": "m-invalid", "role": "ROLE_USER", "parts": [{"text": "echo x"}]}


def _message(**fields: Any) -> dict[str, Any]:
    return {"message": {**MESSAGE, **fields}}


def _pb_message(**fields: Any) -> pb.SendMessageRequest:
    msg = pb.Message(message_id="m-invalid", role=pb.ROLE_USER)
    msg.parts.add(text="echo x")
    for name, value in fields.items():
        setattr(msg, name, value)
    return pb.SendMessageRequest(message=msg)


ENUMS = [
    Case(
        "ListTasks status: unknown name",
        "ListTasks",
        {"status": "TASK_STATE_RUNNING"},
        ("status",),
        pb.ListTasksRequest(status=99),  # type: ignore[arg-type]
    ),
    Case(
        "ListTasks status: unknown number",
        "ListTasks",
        {"status": 99},
        ("status",),
        pb.ListTasksRequest(status=99),  # type: ignore[arg-type]
    ),
    Case(
        "message role: unknown name",
        "SendMessage",
        _message(role="ROLE_ROBOT"),
        ("message.role",),
        _pb_message(role=42),
    ),
    Case(
        "message role: unknown number",
        "SendMessage",
        _message(role=42),
        ("message.role",),
        _pb_message(role=42),
    ),
]

RANGES = [
    Case(
        "ListTasks negative historyLength",
        "ListTasks",
        {"historyLength": -1},
        ("history_length",),
        pb.ListTasksRequest(history_length=-1),
    ),
    Case(
        "ListTasks negative pageSize",
        "ListTasks",
        {"pageSize": -5},
        ("page_size",),
        pb.ListTasksRequest(page_size=-5),
    ),
    Case(
        "SendMessage negative historyLength",
        "SendMessage",
        {**_message(), "configuration": {"historyLength": -2}},
        ("configuration.history_length",),
        pb.SendMessageRequest(
            message=_pb_message().message, configuration=pb.SendMessageConfiguration(history_length=-2)
        ),
    ),
    Case("ListTasks pageSize beyond int32", "ListTasks", {"pageSize": 2**31}, ("page_size",)),
    Case(
        "ListTasks historyLength below int32",
        "ListTasks",
        {"historyLength": -(2**31) - 1},
        ("history_length",),
    ),
    Case("ListTasks pageSize not whole", "ListTasks", {"pageSize": 1.5}, ("page_size",)),
]

TYPES = [
    Case("string for an int", "ListTasks", {"pageSize": "ten"}, ("page_size",)),
    Case("bool for an int", "ListTasks", {"pageSize": True}, ("page_size",)),
    Case("string for a bool", "ListTasks", {"includeArtifacts": "yes"}, ("include_artifacts",)),
    Case("text for a timestamp", "ListTasks", {"statusTimestampAfter": "yesterday"}, ("status_timestamp_after",)),
    Case("object for a string", "SendMessage", _message(messageId={"a": 1}), ("message.message_id",)),
    Case("number for a string", "SendMessage", _message(contextId=5), ("message.context_id",)),
    Case("array for a message", "SendMessage", {"message": [MESSAGE]}, ("message",)),
    Case("string for a message", "SendMessage", {**_message(), "configuration": "fast"}, ("configuration",)),
    Case("object for a list", "SendMessage", _message(parts={"text": "x"}), ("message.parts",)),
    Case("string for an int in a body", "SendMessage", {**_message(), "configuration": {"historyLength": "ten"}},
         ("configuration.history_length",)),
]  # fmt: skip


def _query(params: dict[str, Any]) -> list[tuple[str, str]]:
    """The JSON members as URL query parameters (how REST sends a GET's fields)."""
    return [(k, ("true" if v else "false") if isinstance(v, bool) else str(v)) for k, v in params.items()]


async def _send(b: Binding, case: Case) -> Any:
    """Sends ``case`` on ``b``; returns the A2AError it answered (or its result)."""
    if b.name == "grpc":
        assert case.grpc is not None
        return await b.call(case.rpc, case.grpc)
    if b.name == "jsonrpc":
        envelope = {"jsonrpc": "2.0", "id": 1, "method": case.rpc, "params": case.params}
        async with b.session.post(b.url, json=envelope, headers=_headers(None)) as resp:
            assert resp.status == 200
            body = await resp.json()
        if "error" in body:
            raise b._error(body)
        return body["result"]
    if case.rpc == "ListTasks":
        request = b.session.get(f"{b.base}/tasks", params=_query(case.params), headers=_headers(None))
    else:
        assert case.rpc == "SendMessage"
        headers = {**_headers(None), "Content-Type": "application/a2a+json"}
        request = b.session.post(f"{b.base}/message:send", data=json.dumps(case.params), headers=headers)
    async with request as resp:
        if resp.status != 200:
            raise await b._error(resp)
        return await resp.json(content_type=None)


async def _check(b: Binding, case: Case, scenario: str) -> None:
    t = Transcript(f"{scenario}[{case.label}]", b.name)
    with pytest.raises(A2AError) as exc:
        answer = await _send(b, case)
        pytest.fail(f"{case.label}: accepted on {b.name}: {answer}")
    err = t.error(case.label, exc.value)
    assert err.code is ErrorCode.INVALID_PARAMS, f"{case.label} on {b.name}: {err!r}"
    assert tuple(v.field for v in err.field_violations) == case.fields, f"{b.name}: {err.field_violations}"
    t.check_parity()


@ASYNC
@pytest.mark.parametrize("case", ENUMS + [c for c in RANGES if c.grpc is not None], ids=lambda c: c.label)
async def test_every_binding_refuses(binding: Binding, case: Case) -> None:
    """Unknown enum values and out-of-range numbers: identical on all bindings."""
    await _check(binding, case, "test_every_binding_refuses")


@ASYNC
@pytest.mark.parametrize("case", TYPES + [c for c in RANGES if c.grpc is None], ids=lambda c: c.label)
async def test_json_bindings_refuse(binding: Binding, case: Case) -> None:
    """Wrong JSON types and numbers beyond int32 (gRPC's wire cannot carry
    them): identical on JSON-RPC, REST and REST over the loopback."""
    if binding.name == "grpc":
        pytest.skip("a JSON-only mistake: the proto request cannot carry it")
    await _check(binding, case, "test_json_bindings_refuse")


def test_case_labels_are_distinct() -> None:
    # Transcripts are compared by label: two cases under one label would be compared with each other.
    labels = [c.label for c in ENUMS + RANGES + TYPES]
    assert len(labels) == len(set(labels))
