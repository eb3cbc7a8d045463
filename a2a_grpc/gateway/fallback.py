"""The JSON error form for what aiohttp itself would answer in text/plain.

aiohttp answers a path no route takes (``/tasks/a%0Ab`` once did), an
``HTTPException`` raised below a handler, and an exception no binding caught
with a text/plain body of its own. :func:`json_errors` is the application's
middleware that answers them in the binding's JSON error form instead, with
``google.rpc.ErrorInfo`` like every other error: a POST to the JSON-RPC URL
gets a JSON-RPC error object (id null: the request was not read), anything
else the HTTP+JSON ``{"error": {...}}`` body. An HTTP error keeps its status
(404/405: METHOD_NOT_FOUND, 413: PAYLOAD_TOO_LARGE, other 4xx:
INVALID_REQUEST); any other exception is logged with its traceback (a server
fault) and answered INTERNAL without its text.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware
from google.rpc import status_pb2

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.gateway.body import too_large
from a2a_grpc.gateway.jsonrpc import JsonRpcBinding
from a2a_grpc.gateway.rest import error_response

__all__ = ["json_errors"]

log = logging.getLogger(__name__)

_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _http_error(request: web.Request, exc: web.HTTPException) -> A2AError:
    if exc.status in (404, 405):
        return A2AError(ErrorCode.METHOD_NOT_FOUND, f"no route for {request.method} {request.rel_url.path!r}")
    if exc.status == 413:
        return too_large(request.app)
    return A2AError(ErrorCode.INVALID_REQUEST, exc.reason)


def json_errors(jsonrpc_path: str) -> Middleware:
    """The middleware (see the module docstring); ``jsonrpc_path`` is the
    JSON-RPC URL, whose POSTs get the JSON-RPC form."""

    def answer(request: web.Request, status: status_pb2.Status, http_status: int | None) -> web.Response:
        if request.method == "POST" and request.rel_url.path == jsonrpc_path:
            return JsonRpcBinding.error_response(None, status)
        return error_response(status, http_status=http_status)

    @web.middleware
    async def middleware(request: web.Request, handler: _Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            err = _http_error(request, exc)
            return answer(request, err.to_status(), exc.status)
        except A2AError as err:
            return answer(request, err.to_status(), None)
        except Exception:
            log.exception("%s %s failed", request.method, request.rel_url.path)
            return answer(request, A2AError(ErrorCode.INTERNAL, "internal error").to_status(), None)

    return middleware
