"""The HTTP+JSON ("REST") client binding (spec §11, digest §5).

Routes are not hand-listed: each RPC's ``google.api.http`` rule (and its
``additional_bindings``) is read from the service descriptor, the same
annotations the gateway serves from. A rule is usable when every path variable
it names has a value, and a request with a ``tenant`` only uses rules that carry
it in the path. Path variables are percent-encoded; with ``body: "*"`` the rest
of the request is the ProtoJSON body, otherwise the remaining fields go to the
query string (camelCase names, enums by name, digest §5.3). Requests and
answers use ``application/a2a+json``; ``application/json`` answers are accepted.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from google.api import annotations_pb2, http_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message

from a2a_grpc.client.base import SERVICE, response_class
from a2a_grpc.client.errors import from_http_error
from a2a_grpc.client.http import SSE_TYPE, HttpTransport, decode_json, parse_message, to_json
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb

__all__ = ["RestTransport", "Route", "routes_for"]

A2A_JSON = "application/a2a+json"
_VAR = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)(?:=([^}]*))?\}")

#: Verb to try first where the specification's prose and the proto annotation
#: disagree (digest §5.2, ambiguity A1): SubscribeToTask is POST in the prose
#: and in every official SDK client; the proto's GET is the fallback on 405.
_PREFERRED_VERB = {"SubscribeToTask": "POST"}


@dataclass(frozen=True, slots=True)
class Route:
    """One HTTP rule: verb, path template, body selector and the request
    fields bound by the path."""

    verb: str
    template: str
    body: str
    path_fields: tuple[str, ...]

    def expand(self, request: _message.Message) -> str | None:
        """The path with the request's values filled in, or None when a
        variable has no value."""
        out: list[str] = []
        pos = 0
        for match in _VAR.finditer(self.template):
            value = _field_value(request, match.group(1))
            if not value:
                return None
            safe = "/" if (match.group(2) or "").endswith("**") else ""
            out.append(self.template[pos : match.start()])
            out.append(quote(value, safe=safe))
            pos = match.end()
        out.append(self.template[pos:])
        return "".join(out)


def _field_value(request: _message.Message, path: str) -> str:
    target: Any = request
    for part in path.split("."):
        target = getattr(target, part)
    return str(target)


def _rule_route(rule: http_pb2.HttpRule) -> Route | None:
    kind = rule.WhichOneof("pattern")
    if kind is None:
        return None
    if kind == "custom":
        verb, template = rule.custom.kind.upper(), rule.custom.path
    else:
        verb, template = kind.upper(), getattr(rule, kind)
    fields = tuple(m.group(1) for m in _VAR.finditer(template))
    return Route(verb, template, rule.body, fields)


def routes_for(m: _descriptor.MethodDescriptor) -> list[Route]:
    """Every HTTP rule of a method, primary first, as declared in the proto."""
    opts = m.GetOptions()
    if not opts.HasExtension(annotations_pb2.http):
        return []
    rule = opts.Extensions[annotations_pb2.http]
    out = [r for r in (_rule_route(rule), *(_rule_route(b) for b in rule.additional_bindings)) if r]
    preferred = _PREFERRED_VERB.get(m.name)
    if preferred:
        out.sort(key=lambda r: r.verb != preferred)
    return out


_ROUTES: dict[str, list[Route]] = {m.name: routes_for(m) for m in SERVICE.methods}


def _candidates(m: _descriptor.MethodDescriptor, request: _message.Message) -> list[tuple[Route, str]]:
    """(route, expanded path) pairs usable for ``request``, in trial order."""
    tenant = getattr(request, "tenant", "")
    out = []
    for route in _ROUTES.get(m.name, []):
        if tenant and "tenant" not in route.path_fields:
            continue
        path = route.expand(request)
        if path is not None:
            out.append((route, path))
    return out


def _query(values: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Query parameters from the ProtoJSON of the non-path fields (digest
    §5.3): scalars as text, booleans ``true``/``false``, lists as repeated
    keys; nested objects cannot be sent and raise INVALID_PARAMS."""
    out: list[tuple[str, str]] = []
    for key, value in values.items():
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, bool):
                out.append((key, "true" if item else "false"))
            elif isinstance(item, str | int | float):
                out.append((key, str(item)))
            else:
                raise A2AError(
                    ErrorCode.INVALID_PARAMS, f"{key}: a nested object cannot go in a query string"
                )
    return out


def _strip(body: dict[str, Any], request: _message.Message, fields: Sequence[str]) -> dict[str, Any]:
    desc = request.DESCRIPTOR
    for name in fields:
        field = desc.fields_by_name.get(name.split(".")[0])
        if field is not None:
            body.pop(field.json_name, None)
    return body


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
        base = self.url.rstrip("/")
        last: A2AError | None = None
        for i, (route, path) in enumerate(candidates):
            json_body: Any = None
            params = None
            rest = _strip(to_json(request), request, route.path_fields)
            if route.body == "*":
                json_body = rest
            elif route.body:
                field = request.DESCRIPTOR.fields_by_name[route.body]
                json_body = rest.pop(field.json_name, {})
                params = _query(rest)
            else:
                params = _query(rest)
            accept = (
                f"{SSE_TYPE}, {A2A_JSON}, application/json" if stream else f"{A2A_JSON}, application/json"
            )
            async with self.request(
                route.verb,
                base + path,
                timeout=timeout,
                json_body=json_body,
                params=params or None,
                content_type=A2A_JSON,
                accept=accept,
            ) as resp:
                if resp.status == 405 and i + 1 < len(candidates):
                    last = from_http_error(405, decode_json(await resp.read()))
                    continue
                if not 200 <= resp.status < 300:
                    body = await resp.read()
                    raise from_http_error(
                        resp.status,
                        decode_json(body),
                        fallback_message=body[:200].decode("utf-8", "replace"),
                    )
                if not stream:
                    body = await resp.read()
                    if not body.strip():
                        yield None
                        return
                    decoded = decode_json(body)
                    if decoded is None:
                        raise A2AError(ErrorCode.INVALID_AGENT_RESPONSE, f"{m.name}: the answer is not JSON")
                    yield decoded
                    return
                if not self.is_sse(resp):
                    raise A2AError(
                        ErrorCode.INVALID_AGENT_RESPONSE,
                        f"{m.name}: expected text/event-stream, got {resp.content_type}",
                    )
                async for event in self.events(resp):
                    decoded = decode_json(event.data.encode())
                    if decoded is None:
                        raise A2AError(
                            ErrorCode.INVALID_AGENT_RESPONSE, f"{m.name}: stream event is not JSON"
                        )
                    error = self._stream_error(decoded)
                    if error is not None:
                        raise error
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
