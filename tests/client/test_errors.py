"""Every ErrorCode decodes to itself from each binding's wire form: by
ErrorInfo.reason first, then by the numeric code (digest §4.4-4.5, §5.4, §6)."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import json_format
from google.rpc import status_pb2

from a2a_grpc.client._errors import from_http_error, from_jsonrpc_error
from a2a_grpc.errors import GRPC_CODE_NAMES, A2AError, ErrorCode, FieldViolation


def _details_json(err: A2AError) -> list[dict]:
    status = json_format.MessageToDict(err.to_status())
    return status["details"]


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.name)
def test_rest_error_body_round_trips_by_reason(code: ErrorCode) -> None:
    err = A2AError(code, "boom", metadata={"taskId": "t1"})
    body = {
        "error": {
            "code": code.http_status,
            "status": GRPC_CODE_NAMES[code.grpc_code.value[0]],
            "message": "boom",
            "details": _details_json(err),
        }
    }
    out = from_http_error(code.http_status, body)
    assert (out.code, out.message, out.metadata) == (code, "boom", {"taskId": "t1"})


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.name)
def test_jsonrpc_error_round_trips_by_reason(code: ErrorCode) -> None:
    err = A2AError(code, "boom")
    out = from_jsonrpc_error({"code": code.jsonrpc_code, "message": "boom", "data": _details_json(err)})
    assert (out.code, out.message) == (code, "boom")


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.name)
def test_grpc_status_round_trips_by_reason(code: ErrorCode) -> None:
    status = A2AError(code, "boom").to_status()
    out = A2AError.from_status(status_pb2.Status.FromString(status.SerializeToString()))
    assert out.code is code


def test_reason_beats_the_numeric_code() -> None:
    # Several A2A errors share HTTP 400 / FAILED_PRECONDITION: only the reason tells them apart.
    err = A2AError(ErrorCode.VERSION_NOT_SUPPORTED)
    out = from_http_error(400, {"error": {"code": 400, "message": "m", "details": _details_json(err)}})
    assert out.code is ErrorCode.VERSION_NOT_SUPPORTED
    out = from_jsonrpc_error({"code": -32603, "message": "m", "data": _details_json(err)})
    assert out.code is ErrorCode.VERSION_NOT_SUPPORTED


def test_fallback_to_numeric_codes_without_error_info() -> None:
    assert from_jsonrpc_error({"code": -32001, "message": "x"}).code is ErrorCode.TASK_NOT_FOUND
    assert from_jsonrpc_error({"code": -32601, "message": "x"}).code is ErrorCode.METHOD_NOT_FOUND
    assert from_jsonrpc_error({"code": 12345, "message": "x"}).code is ErrorCode.INTERNAL
    assert from_http_error(404, None).code is ErrorCode.TASK_NOT_FOUND
    assert from_http_error(503, "not json").code is ErrorCode.UNAVAILABLE
    assert from_http_error(418, {"error": {"message": "teapot"}}).message == "teapot"
    assert ErrorCode.from_grpc_code(grpc.StatusCode.DEADLINE_EXCEEDED) is ErrorCode.DEADLINE_EXCEEDED


def test_foreign_or_unknown_reasons_are_ignored() -> None:
    data = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "TASK_NOT_FOUND",
            "domain": "other.org",
        },
        {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "NOPE", "domain": "a2a-protocol.org"},
        {"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": "x"},
        "garbage",
    ]
    assert (
        from_jsonrpc_error({"code": -32002, "message": "x", "data": data}).code
        is ErrorCode.TASK_NOT_CANCELABLE
    )


def test_field_violations_survive() -> None:
    err = A2AError.invalid_params(FieldViolation("message.parts", "must not be empty"))
    out = from_jsonrpc_error({"code": -32602, "message": err.message, "data": _details_json(err)})
    assert out.field_violations == (FieldViolation("message.parts", "must not be empty"),)


def test_a_single_data_object_is_accepted() -> None:
    info = _details_json(A2AError(ErrorCode.TASK_NOT_CANCELABLE))[0]
    assert (
        from_jsonrpc_error({"code": -32000, "message": "x", "data": info}).code
        is ErrorCode.TASK_NOT_CANCELABLE
    )


def test_malformed_jsonrpc_error() -> None:
    assert from_jsonrpc_error("oops").code is ErrorCode.INVALID_AGENT_RESPONSE
