"""GatewayContext: the servicer's RpcContext over an aiohttp request."""

from __future__ import annotations

import grpc
import pytest
from aiohttp.test_utils import make_mocked_request

from a2a_grpc.bindings._http.context import GatewayAbort, GatewayContext
from a2a_grpc.bindings._http.errors import error_code
from a2a_grpc.bindings._servicer import abort
from a2a_grpc.context import CallContext, RpcContext
from a2a_grpc.errors import A2AError, ErrorCode


def _ctx(path: str = "/tasks/t", headers: dict[str, str] | None = None) -> GatewayContext:
    return GatewayContext(make_mocked_request("GET", path, headers=headers or {}))


def test_is_an_rpc_context():
    assert isinstance(_ctx(), RpcContext)


def test_metadata_is_lower_cased_headers_plus_query_version():
    ctx = _ctx("/tasks/t?A2A-Version=1.0", {"A2A-Extensions": "urn:a", "X-Thing": "v"})
    md = dict(ctx.invocation_metadata())
    assert md["a2a-extensions"] == "urn:a" and md["x-thing"] == "v" and md["a2a-version"] == "1.0"
    call = CallContext.from_metadata("/lf.a2a.v1.A2AService/GetTask", ctx.invocation_metadata())
    assert call.protocol_version == "1.0" and call.requested_extensions == frozenset({"urn:a"})
    # The header wins over the query parameter.
    ctx = _ctx("/tasks/t?a2a-version=0.3", {"A2A-Version": "1.0"})
    assert [v for k, v in ctx.invocation_metadata() if k == "a2a-version"] == ["1.0"]


async def test_abort_carries_the_rich_status():
    ctx = _ctx()
    err = A2AError(ErrorCode.TASK_NOT_FOUND, "task t not found", metadata={"taskId": "t"})
    with pytest.raises(GatewayAbort) as exc:
        await abort(ctx, err)  # exactly what A2AServicer does
    assert exc.value.status == err.to_status()


async def test_abort_without_details_gets_error_info_from_the_code():
    ctx = _ctx()
    with pytest.raises(GatewayAbort) as exc:
        await ctx.abort(grpc.StatusCode.UNAVAILABLE, "draining", trailing_metadata=(("retry-after", "1"),))
    status = exc.value.status
    assert status.code == grpc.StatusCode.UNAVAILABLE.value[0] and status.message == "draining"
    assert error_code(status) is ErrorCode.UNAVAILABLE
    assert ("retry-after", "1") in ctx.trailing_metadata


async def test_response_headers_from_metadata():
    ctx = _ctx()
    await ctx.send_initial_metadata((("a2a-extensions", "urn:a,urn:b"), ("x-private", "no")))
    ctx.set_trailing_metadata((("a2a-extensions", "urn:c"), ("grpc-status-details-bin", b"\x00")))
    assert ctx.response_headers() == {"A2A-Extensions": "urn:a,urn:b, urn:c"}
    assert ctx.time_remaining() is None
    assert isinstance(ctx.peer(), str)
