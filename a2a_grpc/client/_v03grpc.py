"""A2A v0.3 over gRPC, for the client (legacy digest §4).

:class:`V03GrpcTransport` calls ``a2a.v1.A2AService`` (the v0.3 proto,
``proto/a2a/v1/a2a.proto``) with the same
:class:`~a2a_grpc.client._base.Transport` API as the v1.0 one: each v1.0
request becomes its v0.3 message and each v0.3 answer the v1.0 one through the
v0.3 proto table (:mod:`a2a_grpc.dialects._v03proto`; v0.3 bytes are never read
with v1.0 descriptors, §4.5). RPC names differ where S1 says
(``TaskSubscription``, ``ListTaskPushNotificationConfig``, ``GetAgentCard``);
``ListTasks`` has none (UNSUPPORTED_OPERATION). A failed call is read from its
status: the v0.3 error type named at the start of its message
(``"TaskNotFoundError: …"``, C14), else its gRPC code. What the v0.3 proto has
no slot for (part metadata and file names, ``referenceTaskIds``) is not sent
(C5); a task without a state is refused (C9); the history is trimmed here
(C7).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any

import grpc
from google.protobuf import descriptor as _descriptor
from google.protobuf import empty_pb2
from google.protobuf import message as _message

from a2a_grpc.client._base import CallOptions
from a2a_grpc.client._grpc import GrpcTransport
from a2a_grpc.client._v03 import check_states, legacy_options, not_an_answer, trim_history, with_configuration
from a2a_grpc.dialects import _v03proto as v03proto
from a2a_grpc.dialects._v03proto import RPCS, Rpc
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.gen.a2a.v1 import a2a_pb2 as v03pb
from a2a_grpc.gen.a2a.v1 import a2a_pb2_grpc as v03pb_grpc
from a2a_grpc.types import pb

__all__ = ["SERVICE_NAME", "V03GrpcTransport", "rpc_of"]

#: The full name of the v0.3 service.
SERVICE_NAME = v03pb.DESCRIPTOR.services_by_name["A2AService"].full_name
_BY_V1: Mapping[str, Rpc] = {r.v1: r for r in RPCS.values()}


def rpc_of(m: _descriptor.MethodDescriptor) -> Rpc:
    """The v0.3 RPC of a v1.0 RPC; UNSUPPORTED_OPERATION for ``ListTasks`` (C12)."""
    rpc = _BY_V1.get(m.name)
    if rpc is None:
        raise A2AError(
            ErrorCode.UNSUPPORTED_OPERATION, f"{m.name} has no A2A 0.3 counterpart; the agent speaks A2A 0.3"
        )
    return rpc


def _request(rpc: Rpc, request: _message.Message) -> Any:
    """The v0.3 request message; a v1.0 request v0.3 cannot carry (a config
    without a task id ...) is INVALID_PARAMS."""
    return v03proto.down(rpc.request, with_configuration(request))


def _answer(rpc: Rpc, m: _descriptor.MethodDescriptor, answer: Any) -> Any:
    """The v1.0 message of a v0.3 answer; one that does not fit is
    INVALID_AGENT_RESPONSE."""
    if not rpc.response:
        return empty_pb2.Empty()
    try:
        return check_states(v03proto.up(rpc.response, answer), rpc.name)
    except A2AError as err:
        raise not_an_answer(err, m.name) from None


class V03GrpcTransport(GrpcTransport):
    """A2A v0.3 over gRPC (service ``a2a.v1.A2AService``)."""

    service_name = SERVICE_NAME
    stub_class = v03pb_grpc.A2AServiceStub

    def __init__(self, url: str, options: CallOptions, *, max_message_bytes: int = 16 * 1024 * 1024) -> None:
        super().__init__(url, legacy_options(options), max_message_bytes=max_message_bytes)

    def _error(self, err: grpc.aio.AioRpcError) -> A2AError:
        """The v0.3 status (C14); a transport failure as for v1.0."""
        code = err.code()
        if code in (
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.DEADLINE_EXCEEDED,
            grpc.StatusCode.CANCELLED,
        ):
            return super()._error(err)
        return v03proto.error_of(code, err.details() or "")

    async def unary(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, timeout: float | None
    ) -> _message.Message:
        rpc = rpc_of(m)
        call = getattr(self._get_stub(), rpc.name)
        try:
            answer = await call(_request(rpc, request), **self._call_kwargs(timeout))
        except grpc.aio.AioRpcError as err:
            raise self._error(err) from None
        return trim_history(request, _answer(rpc, m, answer))

    async def stream(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, timeout: float | None
    ) -> AsyncGenerator[pb.StreamResponse, None]:
        rpc = rpc_of(m)
        call = getattr(self._get_stub(), rpc.name)(_request(rpc, request), **self._call_kwargs(timeout))
        try:
            async for event in call:
                yield _answer(rpc, m, event)
        except grpc.aio.AioRpcError as err:
            raise self._error(err) from None
        finally:
            call.cancel()
