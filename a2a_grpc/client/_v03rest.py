"""A2A v0.3 over HTTP+JSON, for the client (legacy digest §3).

:class:`V03RestTransport` sends the ProtoJSON of the v0.3 proto messages
(``content`` parts, ``TASK_STATE_*`` names, resource names) with
``Content-Type: application/json`` to the routes of the v0.3 proto's
``google.api.http`` rules (read by :mod:`a2a_grpc.protocol._httprule`, as for v1.0), and
reads answers through the v0.3 proto table (:mod:`a2a_grpc.dialects._v03proto`,
lenient where C13 says: JSON-RPC-style parts and states are accepted too).
Where the proto and practice disagree:

* creating a push config POSTs the whole ``{parent, configId, config}`` to
  ``/v1/tasks/{id}/pushNotificationConfigs`` — the proto's template names a
  ``task/*`` collection no server serves (L-A3), and a2a-python parses the
  request form (L-A2);
* ``TaskSubscription`` is GET (the proto, a2a-python), then POST on 405 (the
  prose, L-A7);
* ``GET /v1/card`` may answer the JSON-RPC-shaped card (a2a-python does):
  read as such when its security schemes are typed by ``type``;
* errors: a ``{"error": {...}}`` Google envelope, a ``{code, message}``
  JSON-RPC error object (a2a-js), or ``{"message"}`` (a2a-python) with the
  HTTP status (no code table in v0.3, §3.1).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import AbstractAsyncContextManager, aclosing
from typing import Any

import aiohttp
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message

from a2a_grpc.client._base import CallOptions, response_class
from a2a_grpc.client._errors import from_http_error, from_jsonrpc_error
from a2a_grpc.client._http import SSE_TYPE, HttpTransport, decode_json, parse_message
from a2a_grpc.client._v03 import (
    card_up,
    check_states,
    legacy_options,
    not_an_answer,
    trim_history,
    with_configuration,
)
from a2a_grpc.client._v03grpc import rpc_of
from a2a_grpc.dialects import _v03proto as v03proto
from a2a_grpc.dialects._v03proto import Rpc
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.gen.a2a.v1 import a2a_pb2 as v03pb
from a2a_grpc.protocol import _httprule as httprule
from a2a_grpc.protocol import protojson
from a2a_grpc.types import pb

__all__ = ["V03RestTransport"]

_SERVICE = v03pb.DESCRIPTOR.services_by_name["A2AService"]
_JSON = "application/json"


def _calls(rpc: Rpc, message: _message.Message) -> list[tuple[str, str, Any, list[tuple[str, str]]]]:
    """(verb, path, JSON body or None, query) of the HTTP requests for the
    v0.3 request ``message``, in trial order."""
    if rpc.name == "CreateTaskPushNotificationConfig":
        task = getattr(message, "parent", "")
        return [("POST", f"/v1/{task}/pushNotificationConfigs", protojson.to_dict(message), [])]
    out = []
    for route in httprule.routes(_SERVICE.methods_by_name[rpc.name]):
        expansion = route.expand(message, protojson.to_dict)
        if expansion is not None:
            out.append((route.http_method, expansion.path, expansion.body, list(expansion.query)))
    if rpc.name == "TaskSubscription":
        out += [("POST", path, {}, query) for verb, path, _, query in out if verb == "GET"]
    if not out:
        raise A2AError(ErrorCode.INVALID_PARAMS, f"{rpc.name}: the request lacks a field its path needs")
    return out


def _error(status: int, body: Any, fallback: str) -> A2AError:
    """The A2AError of a v0.3 HTTP+JSON error answer (see the module docstring)."""
    if isinstance(body, Mapping) and "error" not in body and isinstance(body.get("code"), int):
        return from_jsonrpc_error(body)
    error = from_http_error(status, body, fallback_message=fallback)
    if isinstance(body, Mapping) and isinstance(body.get("message"), str) and "error" not in body:
        return A2AError(error.code, body["message"])
    return error


def _json_shaped_card(raw: Any) -> bool:
    """A card in the v0.3 JSON-RPC shape (security schemes typed by ``type``)."""
    schemes = raw.get("securitySchemes") if isinstance(raw, Mapping) else None
    return isinstance(schemes, Mapping) and any(
        isinstance(v, Mapping) and "type" in v for v in schemes.values()
    )


def _up(rpc: Rpc, m: _descriptor.MethodDescriptor, decoded: Any) -> Any:
    """The v1.0 response message of a decoded v0.3 answer."""
    cls = response_class(m) if rpc.response != "StreamResponse" else pb.StreamResponse
    if not rpc.response:
        return cls()
    try:
        if rpc.name == "GetAgentCard" and _json_shaped_card(decoded):
            value = card_up(decoded, source=rpc.name)
        else:
            value = v03proto.DIALECT.up(rpc.response, decoded, "answer")
    except A2AError as err:
        raise not_an_answer(err, m.name) from None
    return check_states(parse_message(value, cls, what=m.name), rpc.name)


class V03RestTransport(HttpTransport):
    """A2A v0.3 over HTTP+JSON + SSE (routes under ``/v1``)."""

    binding = "rest"

    def __init__(self, url: str, options: CallOptions) -> None:
        super().__init__(url, legacy_options(options))

    def _send(
        self,
        verb: str,
        path: str,
        body: Any,
        query: list[tuple[str, str]],
        timeout: float | None,
        *,
        stream: bool,
    ) -> AbstractAsyncContextManager[aiohttp.ClientResponse]:
        return self.request(
            verb,
            self.url.rstrip("/") + path,
            timeout=timeout,
            json_body=body,
            params=query or None,
            content_type=_JSON,
            accept=f"{SSE_TYPE}, {_JSON}" if stream else _JSON,
        )

    async def _exchange(
        self, rpc: Rpc, request: _message.Message, timeout: float | None, *, stream: bool
    ) -> AsyncGenerator[Any, None]:
        """Decoded JSON: one document for a unary call, one per SSE event;
        the next route is tried only on HTTP 405."""
        calls = _calls(rpc, v03proto.down(rpc.request, with_configuration(request)))
        for i, (verb, path, body, query) in enumerate(calls):
            async with self._send(verb, path, body, query, timeout, stream=stream) as resp:
                if resp.status == 405 and i + 1 < len(calls):
                    continue
                raw = b"" if 200 <= resp.status < 300 and stream else await resp.read()
                if not 200 <= resp.status < 300:
                    text = raw[:200].decode("utf-8", "replace")
                    raise _error(resp.status, decode_json(raw), text)
                if not stream:
                    yield decode_json(raw) if raw.strip() else None
                    return
                async with aclosing(self._events(rpc, resp)) as events:
                    async for decoded in events:
                        yield decoded
                return

    async def _events(self, rpc: Rpc, resp: aiohttp.ClientResponse) -> AsyncGenerator[Any, None]:
        if not self.is_sse(resp):
            raise A2AError(
                ErrorCode.INVALID_AGENT_RESPONSE,
                f"{rpc.name}: expected text/event-stream, got {resp.content_type}",
            )
        async for event in self.events(resp):
            decoded = decode_json(event.data.encode())
            if decoded is None:
                raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{rpc.name}: stream event is not JSON")
            if isinstance(decoded, Mapping) and ("error" in decoded or "code" in decoded):
                raise _error(500, decoded, "the stream failed")
            yield decoded

    async def unary(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, timeout: float | None
    ) -> _message.Message:
        rpc = rpc_of(m)
        async with aclosing(self._exchange(rpc, request, timeout, stream=False)) as answers:
            decoded = await anext(answers)
        return trim_history(request, _up(rpc, m, decoded))

    async def stream(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, timeout: float | None
    ) -> AsyncGenerator[pb.StreamResponse, None]:
        rpc = rpc_of(m)
        async with aclosing(self._exchange(rpc, request, timeout, stream=True)) as events:
            async for decoded in events:
                yield _up(rpc, m, decoded)
