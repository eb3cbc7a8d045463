"""The JSON-RPC 2.0 client binding (spec §9, digest §4).

Every call is a POST of ``{"jsonrpc": "2.0", "id", "method", "params"}`` to the
interface URL; ``method`` is the gRPC RPC name and ``params`` / ``result`` are
the ProtoJSON of the request / response messages. Streaming methods answer
``text/event-stream`` whose events each hold one JSON-RPC response.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message

from a2a_grpc.client._base import response_class
from a2a_grpc.client._errors import from_http_error, from_jsonrpc_error
from a2a_grpc.client._http import SSE_TYPE, HttpTransport, decode_json, parse_message, to_json
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb

__all__ = ["JsonRpcTransport"]


class JsonRpcTransport(HttpTransport):
    """A2A over JSON-RPC 2.0 + SSE. Request ids are increasing integers."""

    binding = "jsonrpc"
    _ids = itertools.count(1)

    def _envelope(self, m: _descriptor.MethodDescriptor, request: _message.Message) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": next(self._ids), "method": m.name, "params": to_json(request)}

    def _result(self, reply: Any, req_id: int, what: str) -> Any:
        """The ``result`` of one JSON-RPC response; raises its ``error``."""
        if not isinstance(reply, Mapping) or reply.get("jsonrpc") != "2.0":
            raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{what}: not a JSON-RPC 2.0 response")
        if "error" in reply and reply["error"] is not None:
            raise from_jsonrpc_error(reply["error"])
        if "result" not in reply:
            raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{what}: JSON-RPC response without result")
        if reply.get("id") not in (req_id, str(req_id)):
            raise A2AError(
                ErrorCode.INVALID_AGENT_RESPONSE,
                f"{what}: response id {reply.get('id')!r} does not match request id {req_id}",
            )
        return reply["result"]

    @staticmethod
    def _http_failure(status: int, body: bytes) -> A2AError:
        """A non-200 answer: a JSON-RPC error object if the body holds one,
        else the Google error envelope / bare HTTP status."""
        decoded = decode_json(body)
        if isinstance(decoded, Mapping) and isinstance(decoded.get("error"), Mapping):
            err = decoded["error"]
            if "data" in err or (isinstance(err.get("code"), int) and err["code"] < 0):
                return from_jsonrpc_error(err)
        return from_http_error(status, decoded, fallback_message=body[:200].decode("utf-8", "replace"))

    async def unary(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, timeout: float | None
    ) -> _message.Message:
        envelope = self._envelope(m, request)
        async with self.request("POST", self.url, timeout=timeout, json_body=envelope) as resp:
            body = await resp.read()
            if resp.status != 200:
                raise self._http_failure(resp.status, body)
        reply = decode_json(body)
        if reply is None:
            raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{m.name}: the answer is not JSON")
        return self.decode_result(m, request, self._result(reply, envelope["id"], m.name))

    def decode_result(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, result: Any
    ) -> _message.Message:
        """The response proto of a unary call's ``result`` (ProtoJSON of it)."""
        return parse_message(result, response_class(m), what=m.name)

    def decode_event(self, m: _descriptor.MethodDescriptor, result: Any) -> pb.StreamResponse:
        """The StreamResponse of one stream event's ``result``."""
        return parse_message(result, pb.StreamResponse, what=m.name)  # type: ignore[return-value]

    async def stream(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, timeout: float | None
    ) -> AsyncGenerator[pb.StreamResponse, None]:
        envelope = self._envelope(m, request)
        accept = f"{SSE_TYPE}, application/json"
        async with self.request("POST", self.url, timeout=timeout, json_body=envelope, accept=accept) as resp:
            if resp.status != 200:
                raise self._http_failure(resp.status, await resp.read())
            if not self.is_sse(resp):
                # An error found before the stream started is a plain JSON-RPC response.
                reply = decode_json(await resp.read())
                result = self._result(reply, envelope["id"], m.name)
                raise A2AError(
                    ErrorCode.INVALID_AGENT_RESPONSE,
                    f"{m.name}: expected an event stream, got a single result {json.dumps(result)[:200]}",
                )
            async for event in self.events(resp):
                reply = decode_json(event.data.encode())
                if reply is None:
                    raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{m.name}: stream event is not JSON")
                yield self.decode_event(m, self._result(reply, envelope["id"], m.name))
