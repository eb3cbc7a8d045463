"""The HTTP+JSON ("REST") client binding (spec §11, digest §5).

Routes are not hand-listed: each RPC's ``google.api.http`` rule (and its
``additional_bindings``) is read by :mod:`a2a_grpc.protocol._httprule`, the same reader
whose route table the gateway serves. A route is usable when every path
variable it names has a value that fits, and a request with a ``tenant`` only
uses routes that carry it in the path, tried in
:func:`~a2a_grpc.protocol._httprule.client_order` (a route taking the whole
request as body first). :meth:`~a2a_grpc.protocol._httprule.Route.expand`
percent-encodes the path variables; with ``body: "*"`` the rest of the request
is the ProtoJSON body, otherwise the remaining fields go to the query string
(camelCase names, enums by name, digest §5.3). Requests and answers use
``application/a2a+json``; ``application/json`` answers are accepted.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator, Mapping
from contextlib import AbstractAsyncContextManager, aclosing
from typing import Any

import aiohttp
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message

from a2a_grpc.client._base import response_class
from a2a_grpc.client._errors import from_http_error
from a2a_grpc.client._http import SSE_TYPE, HttpTransport, decode_json, parse_message, to_json
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import _httprule as httprule
from a2a_grpc.types import pb

__all__ = ["RestTransport", "routes_for"]

A2A_JSON = "application/a2a+json"


@functools.cache
def routes_for(m: _descriptor.MethodDescriptor) -> tuple[httprule.Route, ...]:
    """Every route of a method in trial order (:func:`~a2a_grpc.protocol._httprule.client_order`:
    the ones taking the whole request as body first, so SubscribeToTask's
    POST before its GET: docs/decisions.md, "SubscribeToTask over REST")."""
    return httprule.client_order(m)


def _candidates(m: _descriptor.MethodDescriptor, request: _message.Message) -> list[httprule.Expansion]:
    """The HTTP requests usable for ``request``, in trial order. Raises
    A2AError(INVALID_PARAMS) for a field that cannot go in a query string."""
    tenant = getattr(request, "tenant", "")
    out = []
    for route in routes_for(m):
        if tenant and "tenant" not in route.field_paths:
            continue
        expansion = route.expand(request, to_json)
        if expansion is not None:
            out.append(expansion)
    return out


async def _raise_for_status(resp: aiohttp.ClientResponse) -> None:
    """Raises the A2AError of a non-2xx answer (its error body, else its text)."""
    if not 200 <= resp.status < 300:
        body = await resp.read()
        raise from_http_error(
            resp.status, decode_json(body), fallback_message=body[:200].decode("utf-8", "replace")
        )


async def _answer(m: _descriptor.MethodDescriptor, resp: aiohttp.ClientResponse) -> Any:
    """The decoded JSON of a unary answer; None for an empty body."""
    body = await resp.read()
    if not body.strip():
        return None
    decoded = decode_json(body)
    if decoded is None:
        raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{m.name}: the answer is not JSON")
    return decoded


class RestTransport(HttpTransport):
    """A2A over HTTP+JSON + SSE."""

    binding = "rest"

    def _stream_error(self, decoded: Any) -> A2AError | None:
        """A mid-stream error event (``{"error": {...}}``, Google error
        envelope with the HTTP status in ``code``) — not specified by A2A but
        the natural form (digest §4.6)."""
        if isinstance(decoded, Mapping) and isinstance(decoded.get("error"), Mapping):
            status = decoded["error"].get("code")
            return from_http_error(status if isinstance(status, int) else 500, decoded)
        return None

    def _send(
        self, call: httprule.Expansion, timeout: float | None, *, stream: bool
    ) -> AbstractAsyncContextManager[aiohttp.ClientResponse]:
        """The HTTP exchange of one expanded route."""
        accept = f"{SSE_TYPE}, {A2A_JSON}, application/json" if stream else f"{A2A_JSON}, application/json"
        return self.request(
            call.route.http_method,
            self.url.rstrip("/") + call.path,
            timeout=timeout,
            json_body=call.body,
            params=list(call.query) or None,
            content_type=A2A_JSON,
            accept=accept,
        )

    async def _events(
        self, m: _descriptor.MethodDescriptor, resp: aiohttp.ClientResponse
    ) -> AsyncGenerator[Any, None]:
        """The decoded JSON of each SSE event; an error event is raised."""
        if not self.is_sse(resp):
            raise A2AError(
                ErrorCode.INVALID_AGENT_RESPONSE,
                f"{m.name}: expected text/event-stream, got {resp.content_type}",
            )
        async for event in self.events(resp):
            decoded = decode_json(event.data.encode())
            if decoded is None:
                raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{m.name}: stream event is not JSON")
            error = self._stream_error(decoded)
            if error is not None:
                raise error
            yield decoded

    async def _exchange(
        self,
        m: _descriptor.MethodDescriptor,
        request: _message.Message,
        timeout: float | None,
        *,
        stream: bool,
    ) -> AsyncGenerator[Any, None]:
        """Tries the usable routes in order, moving on only on HTTP 405;
        yields decoded JSON documents: one for a unary call, one per SSE
        event for a stream."""
        candidates = _candidates(m, request)
        if not candidates:
            raise A2AError(ErrorCode.INVALID_PARAMS, f"{m.name}: the request lacks a field its path needs")
        last: A2AError | None = None
        for i, call in enumerate(candidates):
            async with self._send(call, timeout, stream=stream) as resp:
                if resp.status == 405 and i + 1 < len(candidates):
                    last = from_http_error(405, decode_json(await resp.read()))
                    continue
                await _raise_for_status(resp)
                if not stream:
                    yield await _answer(m, resp)
                    return
                async with aclosing(self._events(m, resp)) as events:
                    async for decoded in events:
                        yield decoded
                return
        assert last is not None
        raise last

    async def unary(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, timeout: float | None
    ) -> _message.Message:
        async with aclosing(self._exchange(m, request, timeout, stream=False)) as answers:
            decoded = await anext(answers)
        return parse_message(decoded, response_class(m), what=m.name)

    async def stream(
        self, m: _descriptor.MethodDescriptor, request: _message.Message, timeout: float | None
    ) -> AsyncGenerator[pb.StreamResponse, None]:
        async with aclosing(self._exchange(m, request, timeout, stream=True)) as events:
            async for decoded in events:
                yield parse_message(decoded, pb.StreamResponse, what=m.name)  # type: ignore[misc]
