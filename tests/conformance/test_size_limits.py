"""One size limit, one error (design.md "size limits"): PAYLOAD_TOO_LARGE is
gRPC RESOURCE_EXHAUSTED, HTTP 413 on REST, and HTTP 413 with a -32600 error
object on JSON-RPC, each naming the configured limit (max_message_bytes,
16 MiB here) — never 429, which clients retry."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import grpc
import pytest
from google.protobuf import json_format
from google.rpc import error_details_pb2, status_pb2

from a2a_grpc.types import pb, pb_grpc
from tests.conformance.scenario import send

pytestmark = pytest.mark.asyncio(loop_scope="package")

LIMIT = 16 * 1024 * 1024
A2A = {"A2A-Version": "1.0", "Content-Type": "application/json"}


def _reason_of_details(details: list[dict[str, Any]]) -> str:
    return next(d["reason"] for d in details if d["@type"].endswith("google.rpc.ErrorInfo"))


async def _grpc(server: Any, request: pb.SendMessageRequest) -> tuple[grpc.StatusCode, str, str | None]:
    options = [("grpc.max_send_message_length", 64 << 20)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}", options=options) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await pb_grpc.A2AServiceStub(channel).SendMessage(request, metadata=(("a2a-version", "1.0"),))
    err = info.value
    reason = None
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            for detail in status_pb2.Status.FromString(value).details:
                e = error_details_pb2.ErrorInfo()
                if detail.Unpack(e):
                    reason = e.reason
    return err.code(), err.details() or "", reason


async def _http(server: Any, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{server.http_port}{path}"
        async with session.post(url, data=body, headers=A2A) as resp:
            assert resp.content_type.startswith("application/")
            return resp.status, await resp.json(content_type=None)


async def test_over_the_request_limit_is_one_error_everywhere(servers):
    server = servers.main
    request = send("echo " + "x" * LIMIT)
    code, text, reason = await _grpc(server, request)
    assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "PAYLOAD_TOO_LARGE")
    assert f"the limit is {LIMIT} bytes" in text

    params = json_format.MessageToDict(request)  # the same request, as JSON
    status, body = await _http(server, "/message:send", json.dumps(params).encode())
    assert status == 413
    assert body["error"]["code"] == 413 and body["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert _reason_of_details(body["error"]["details"]) == "PAYLOAD_TOO_LARGE"
    assert body["error"]["message"] == text  # the very same error

    envelope = {"jsonrpc": "2.0", "id": "big-1", "method": "SendMessage", "params": params}
    status, body = await _http(server, "/", json.dumps(envelope).encode())
    assert status == 413
    assert body["id"] == "big-1" and body["error"]["code"] == -32600
    assert _reason_of_details(body["error"]["data"]) == "PAYLOAD_TOO_LARGE"
    assert body["error"]["message"] == text


async def test_over_what_the_transport_reads(servers):
    """Bodies past the HTTP body limit (4/3 of the request limit plus 1 MiB,
    for base64) are refused before they are read whole: 413 on both HTTP
    bindings (JSON-RPC id null: the request was never read) quoting the
    configured limit; gRPC messages past its transport cap get grpc-core's
    own RESOURCE_EXHAUSTED."""
    server = servers.main
    body_limit = LIMIT * 4 // 3 + (1 << 20)
    huge = b'{"message": {"messageId": "m", "parts": [{"text": "' + b"x" * body_limit + b'"}]}}'
    for path in ("/message:send", "/"):
        status, body = await _http(server, path, huge)
        assert status == 413, path
        err = body["error"]
        if path == "/":
            assert body["id"] is None and err["code"] == -32600
            details = err["data"]
        else:
            assert err["status"] == "RESOURCE_EXHAUSTED"
            details = err["details"]
        assert _reason_of_details(details) == "PAYLOAD_TOO_LARGE"
        assert f"larger than {body_limit} bytes" in err["message"]
        assert f"the request limit is {LIMIT} bytes" in err["message"]
    code, _, _ = await _grpc(server, send("echo " + "x" * (2 * LIMIT + (2 << 20))))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
