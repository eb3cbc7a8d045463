"""The ErrorCode table (spec §5.4 v1.0.1, digest §4.4) and A2AError's rich
status round trip."""

from __future__ import annotations

import re

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from a2a_grpc.errors import DOMAIN, A2AError, ErrorCode, FieldViolation

# The A2A-specific rows exactly as the spec's v1.0.1 table gives them.
SPEC_TABLE = {
    "TASK_NOT_FOUND": (-32001, grpc.StatusCode.NOT_FOUND, 404),
    "TASK_NOT_CANCELABLE": (-32002, grpc.StatusCode.FAILED_PRECONDITION, 400),
    "PUSH_NOTIFICATION_NOT_SUPPORTED": (-32003, grpc.StatusCode.FAILED_PRECONDITION, 400),
    "UNSUPPORTED_OPERATION": (-32004, grpc.StatusCode.FAILED_PRECONDITION, 400),
    "CONTENT_TYPE_NOT_SUPPORTED": (-32005, grpc.StatusCode.INVALID_ARGUMENT, 400),
    "INVALID_AGENT_RESPONSE": (-32006, grpc.StatusCode.INTERNAL, 500),
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": (-32007, grpc.StatusCode.FAILED_PRECONDITION, 400),
    "EXTENSION_SUPPORT_REQUIRED": (-32008, grpc.StatusCode.FAILED_PRECONDITION, 400),
    "VERSION_NOT_SUPPORTED": (-32009, grpc.StatusCode.FAILED_PRECONDITION, 400),
    # JSON-RPC 2.0 standard codes.
    "PARSE_ERROR": (-32700, grpc.StatusCode.INVALID_ARGUMENT, 400),
    "INVALID_REQUEST": (-32600, grpc.StatusCode.INVALID_ARGUMENT, 400),
    "METHOD_NOT_FOUND": (-32601, grpc.StatusCode.UNIMPLEMENTED, 404),
    "INVALID_PARAMS": (-32602, grpc.StatusCode.INVALID_ARGUMENT, 400),
    "INTERNAL": (-32603, grpc.StatusCode.INTERNAL, 500),
}


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.name)
def test_every_member_is_complete(code: ErrorCode) -> None:
    assert code.reason == code.name
    assert re.fullmatch(r"[A-Z]+(_[A-Z]+)*", code.reason)
    assert isinstance(code.grpc_code, grpc.StatusCode)
    assert code.grpc_code not in (grpc.StatusCode.OK, grpc.StatusCode.UNKNOWN)
    assert 400 <= code.http_status <= 599
    assert -32768 <= code.jsonrpc_code <= -32000
    assert code.default_message
    assert ErrorCode.from_reason(code.reason) is code


def test_spec_rows() -> None:
    for reason, (jsonrpc, grpc_code, http) in SPEC_TABLE.items():
        code = ErrorCode[reason]
        assert (code.jsonrpc_code, code.grpc_code, code.http_status) == (jsonrpc, grpc_code, http), reason


def test_reasons_and_a2a_codes_unique() -> None:
    reasons = [c.reason for c in ErrorCode]
    assert len(reasons) == len(set(reasons))
    # PAYLOAD_TOO_LARGE shares INVALID_REQUEST's -32600 (the request as a
    # whole is refused); ErrorInfo.reason tells them apart, as for -32000.
    shared = {ErrorCode.PAYLOAD_TOO_LARGE}
    specific = [c.jsonrpc_code for c in ErrorCode if c.jsonrpc_code != -32000 and c not in shared]
    assert len(specific) == len(set(specific))
    # Every JSON-RPC code maps back to its own member (except the shared ones).
    for c in ErrorCode:
        if c.jsonrpc_code != -32000 and c not in shared:
            assert ErrorCode.from_jsonrpc_code(c.jsonrpc_code) is c
    assert ErrorCode.from_jsonrpc_code(-32600) is ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.name)
def test_status_round_trip(code: ErrorCode) -> None:
    err = A2AError(
        code, "something happened", metadata={"taskId": "t1", "timestamp": "2026-01-01T00:00:00.000Z"}
    )
    status = err.to_status()
    assert status.code == code.grpc_code.value[0]
    assert status.message == "something happened"
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert (info.reason, info.domain) == (code.reason, DOMAIN)
    assert dict(info.metadata) == {"taskId": "t1", "timestamp": "2026-01-01T00:00:00.000Z"}
    # Through the wire bytes, as the grpc-status-details-bin trailer carries it.
    back = A2AError.from_status(status_pb2.Status.FromString(status.SerializeToString()))
    assert back.code is code
    assert back.message == err.message
    assert back.metadata == err.metadata
    assert back.field_violations == ()


def test_bad_request_round_trip() -> None:
    err = A2AError.invalid_params(
        FieldViolation("message.parts", "is required and must not be empty"),
        FieldViolation("message.role", "is required"),
    )
    assert err.code is ErrorCode.INVALID_PARAMS
    assert "message.parts" in err.message
    status = err.to_status()
    assert len(status.details) == 2
    bad = error_details_pb2.BadRequest()
    assert status.details[1].Unpack(bad)
    assert [v.field for v in bad.field_violations] == ["message.parts", "message.role"]
    back = A2AError.from_status(status)
    assert back.code is ErrorCode.INVALID_PARAMS
    assert back.field_violations == err.field_violations


def test_from_status_without_error_info_falls_back_to_code() -> None:
    st = status_pb2.Status(code=grpc.StatusCode.NOT_FOUND.value[0], message="gone")
    assert A2AError.from_status(st).code is ErrorCode.TASK_NOT_FOUND
    st = status_pb2.Status(code=grpc.StatusCode.DATA_LOSS.value[0], message="?")
    assert A2AError.from_status(st).code is ErrorCode.INTERNAL


def test_from_status_ignores_foreign_domain() -> None:
    info = error_details_pb2.ErrorInfo(reason="TASK_NOT_FOUND", domain="example.com")
    st = status_pb2.Status(code=grpc.StatusCode.FAILED_PRECONDITION.value[0], message="x")
    st.details.add().Pack(info)
    assert A2AError.from_status(st).code is ErrorCode.UNSUPPORTED_OPERATION
