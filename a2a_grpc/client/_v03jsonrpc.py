"""A2A v0.3 over JSON-RPC 2.0 + SSE, for the client (legacy digest §2).

:class:`V03JsonRpcTransport` is the JSON-RPC transport with the v0.3 method
names (``message/send``, ``tasks/get`` ...) and objects (``kind``,
lowercase-dash states, nested push configs): each v1.0 request goes down the
v0.3 table, each ``result`` comes back up it (:mod:`a2a_grpc.client._v03` has
the rules). Errors are the v0.3 ``{code, message, data}`` objects, read by
their code.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message

from a2a_grpc.client._base import CallOptions, response_class
from a2a_grpc.client._http import parse_message
from a2a_grpc.client._jsonrpc import JsonRpcTransport
from a2a_grpc.client._v03 import card_up, legacy_options, method_of, params_down, trim_history, up_answer
from a2a_grpc.dialects._v03 import Method
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb

__all__ = ["V03JsonRpcTransport"]


def result_up(method: Method, m: _descriptor.MethodDescriptor, result: Any) -> _message.Message:
    """The v1.0 response proto of a v0.3 unary ``result``."""
    what = method.name
    if method.rpc == "GetExtendedAgentCard":
        if not isinstance(result, Mapping):
            raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{what}: the card is not a JSON object")
        value: Any = card_up(result, source=what)
    elif method.rpc == "ListTaskPushNotificationConfigs":
        if not isinstance(result, list):
            raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{what}: expected an array of configs")
        value = {"configs": [up_answer(method.result, c, what) for c in result]}
    elif not method.result:
        value = None
    else:
        value = up_answer(method.result, result, what)
    return parse_message(value, response_class(m), what=what)


# ----------------------------------------------------------------- JSON-RPC
class V03JsonRpcTransport(JsonRpcTransport):
    """A2A v0.3 over JSON-RPC 2.0 + SSE (legacy digest §2): the v0.3 method
    names and objects, the same :class:`~a2a_grpc.client._base.Transport` API."""

    _ids = itertools.count(1)

    def __init__(self, url: str, options: CallOptions) -> None:
        super().__init__(url, legacy_options(options))

    def _envelope(self, m: _descriptor.MethodDescriptor, request: _message.Message) -> dict[str, Any]:
        method = method_of(m)
        envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method.name}
        if method.needs_params:
            envelope["params"] = params_down(method, request)
        return envelope

    def _result(self, reply: Any, req_id: int, what: str) -> Any:
        """As for v1.0; a ``…/delete`` answer may leave out its ``null``
        result (the 0.3 SDK server does)."""
        if (
            what == "DeleteTaskPushNotificationConfig"
            and isinstance(reply, Mapping)
            and "result" not in reply
            and reply.get("error") is None
        ):
            reply = {**reply, "result": None}
        return super()._result(reply, req_id, what)

    def decode_result(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, result: Any
    ) -> _message.Message:
        return trim_history(request, result_up(method_of(m), m, result))

    def decode_event(self, m: _descriptor.MethodDescriptor, result: Any) -> pb.StreamResponse:
        event = up_answer("StreamResponse", result, method_of(m).name)
        return parse_message(event, pb.StreamResponse, what=m.name)  # type: ignore[return-value]
