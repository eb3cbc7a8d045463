"""Every row of the ErrorCode table in the REST and JSON-RPC error forms,
both as pure functions and end to end through the gateway."""

from __future__ import annotations

import pytest

from a2a_grpc.bindings._http.errors import jsonrpc_error, rest_error
from a2a_grpc.errors import DOMAIN, GRPC_CODE_NAMES, A2AError, ErrorCode, FieldViolation

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.name)
def test_rest_form_of_every_error(code):
    status = A2AError(code, "boom", metadata={"taskId": "t1"}).to_status()
    http, body = rest_error(status)
    assert http == code.http_status
    assert body == {
        "error": {
            "code": code.http_status,
            "status": code.grpc_code.name,
            "message": "boom",
            "details": [
                {"@type": ERROR_INFO, "reason": code.reason, "domain": DOMAIN, "metadata": {"taskId": "t1"}}
            ],
        }
    }


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.name)
def test_jsonrpc_form_of_every_error(code):
    status = A2AError(code, "boom").to_status()
    assert jsonrpc_error(status) == {
        "code": code.jsonrpc_code,
        "message": "boom",
        "data": [{"@type": ERROR_INFO, "reason": code.reason, "domain": DOMAIN}],
    }


def test_bad_request_detail_follows_error_info():
    err = A2AError.invalid_params(FieldViolation("message.parts", "must not be empty"))
    _, body = rest_error(err.to_status())
    assert [d["@type"] for d in body["error"]["details"]] == [ERROR_INFO, BAD_REQUEST]
    assert body["error"]["details"][1]["fieldViolations"] == [
        {"field": "message.parts", "description": "must not be empty"}
    ]
    assert jsonrpc_error(err.to_status())["data"][1]["@type"] == BAD_REQUEST


def test_unknown_detail_types_are_kept_opaque():
    status = A2AError(ErrorCode.INTERNAL).to_status()
    extra = status.details.add()
    extra.type_url = "type.googleapis.com/example.Unknown"
    extra.value = b"\x01\x02"
    _, body = rest_error(status)
    assert body["error"]["details"][-1] == {"@type": "type.googleapis.com/example.Unknown", "value": "AQI="}


def test_status_names_are_grpc_names():
    assert GRPC_CODE_NAMES[5] == "NOT_FOUND"


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda c: c.name)
async def test_every_error_through_both_bindings(gw, code):
    """The servicer aborts exactly as A2AServicer does; both bindings answer
    the table's form with ErrorInfo."""
    # A2A-Version 1.0: without it GET /tasks/{id} is the tutorial's route (docs/dialects.md)
    async with gw.session.get(f"{gw.base}/tasks/err-{code.name}", headers={"A2A-Version": "1.0"}) as resp:
        assert resp.status == code.http_status
        assert resp.headers["Content-Type"].startswith("application/a2a+json")
        body = await resp.json(content_type=None)
    assert body["error"]["code"] == code.http_status
    assert body["error"]["status"] == code.grpc_code.name
    assert body["error"]["message"] == f"failed: err-{code.name}"
    assert body["error"]["details"][0]["reason"] == code.reason

    envelope = {"jsonrpc": "2.0", "id": 9, "method": "GetTask", "params": {"id": f"err-{code.name}"}}
    async with gw.session.post(gw.base + "/", json=envelope) as resp:
        # HTTP 200 but for UNAUTHENTICATED (401) and a payload too large (413), design.md "JSON-RPC errors".
        assert resp.status == {ErrorCode.UNAUTHENTICATED: 401, ErrorCode.PAYLOAD_TOO_LARGE: 413}.get(
            code, 200
        )
        assert resp.headers["Content-Type"].startswith("application/json")
        body = await resp.json()
    assert body["id"] == 9 and "result" not in body
    assert body["error"]["code"] == code.jsonrpc_code
    assert body["error"]["data"][0] == {"@type": ERROR_INFO, "reason": code.reason, "domain": DOMAIN}


async def test_unexpected_exceptions_are_internal_without_leaking(gw):
    async with gw.session.get(f"{gw.base}/tasks/crash") as resp:
        assert resp.status == 500
        body = await resp.json(content_type=None)
    assert body["error"]["details"][0]["reason"] == "INTERNAL"
    assert "secret" not in str(body)
    envelope = {"jsonrpc": "2.0", "id": "c", "method": "GetTask", "params": {"id": "crash"}}
    async with gw.session.post(gw.base + "/", json=envelope) as resp:
        body = await resp.json()
    assert body["error"]["code"] == -32603 and "secret" not in str(body)
