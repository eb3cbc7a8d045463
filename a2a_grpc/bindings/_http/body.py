"""Request bodies of both HTTP bindings: content type first, then JSON.

Accepted content types are ``application/json`` and ``application/a2a+json``
(optionally with ``charset=utf-8``), spec §7.5 / §11.1. Anything else is
refused with CONTENT_TYPE_NOT_SUPPORTED *before* the body is read; a request
without a body (no Content-Length or Content-Length: 0) is not checked.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import protojson

__all__ = ["JSON_TYPES", "MAX_BODY_KEY", "MAX_MESSAGE_KEY", "check_content_type", "read_json", "too_large"]

#: The application's request body limit in bytes (set by create_app).
MAX_BODY_KEY = web.AppKey("a2a_max_body_bytes", int)
#: The server's request message limit in bytes (``max_message_bytes``), when known.
MAX_MESSAGE_KEY = web.AppKey("a2a_max_message_bytes", int)

JSON_TYPES = frozenset({"application/json", "application/a2a+json"})
#: Content-Type values taken as they are, without parsing them.
_USUAL = frozenset(
    {*JSON_TYPES, *(f"{t}; charset=utf-8" for t in JSON_TYPES), *(f"{t};charset=utf-8" for t in JSON_TYPES)}
)


def check_content_type(request: web.Request) -> None:
    """Raises A2AError(CONTENT_TYPE_NOT_SUPPORTED) unless the request has no
    body or its ``Content-Type`` is JSON."""
    if not request.can_read_body:
        return  # nothing to parse, whatever the label says
    raw = request.headers.get("Content-Type")
    if raw in _USUAL:
        return
    if raw is None or not raw.strip():
        raise A2AError(
            ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
            "a request body needs Content-Type application/json or application/a2a+json",
        )
    mime, *params = (p.strip() for p in raw.split(";"))
    if mime.lower() not in JSON_TYPES:
        raise A2AError(
            ErrorCode.CONTENT_TYPE_NOT_SUPPORTED,
            f"content type {mime!r} is not supported; use application/json or application/a2a+json",
        )
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            raise A2AError(
                ErrorCode.CONTENT_TYPE_NOT_SUPPORTED, f"charset {value.strip()!r} is not supported"
            )


def too_large(app: web.Application) -> A2AError:
    """PAYLOAD_TOO_LARGE for a body over the application's limit, naming the
    body limit and, when known, the request limit it is derived from."""
    body = app.get(MAX_BODY_KEY)
    message = app.get(MAX_MESSAGE_KEY)
    text = f"request body larger than {body} bytes" if body else "request body too large"
    if message:
        text += (
            f" (the request limit is {message} bytes, max_message_bytes;"
            " a JSON body may take 4/3 of it plus 1 MiB, for base64)"
        )
    return A2AError(ErrorCode.PAYLOAD_TOO_LARGE, text, metadata={"limitBytes": str(message or body or "")})


async def read_json(request: web.Request) -> Any:
    """The parsed JSON body, or None when the body is empty. Raises
    A2AError: CONTENT_TYPE_NOT_SUPPORTED, PAYLOAD_TOO_LARGE (a body over the
    limit: HTTP 413 on both bindings, design.md "size limits"), PARSE_ERROR
    (not JSON, or not I-JSON: see :func:`a2a_grpc.protocol.protojson.loads`)."""
    check_content_type(request)
    try:
        data = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise too_large(request.app) from None
    if not data.strip():
        return None
    return protojson.loads(data)
