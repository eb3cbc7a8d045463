"""The JSON error form for what aiohttp itself would answer in text/plain.

aiohttp answers a path no route takes, an ``HTTPException`` raised below a
handler, and an exception no binding caught with a text/plain body of its
own. :func:`guarded` wraps each route's handler so that it answers them in the
binding's JSON error form instead, with ``google.rpc.ErrorInfo`` like every
other error: a POST to the JSON-RPC URL gets a JSON-RPC error object (id
null: the request was not read), anything else the HTTP+JSON ``{"error":
{...}}`` body. An HTTP error keeps its status (404/405: METHOD_NOT_FOUND,
413: PAYLOAD_TOO_LARGE, other 4xx: INVALID_REQUEST); any other exception is
logged with its traceback (a server fault) and answered INTERNAL without its
text. :func:`unrouted` is the last route, for paths no other route takes
(404, or 405 where another route takes the path with other methods).

A wrapper per route, not an aiohttp middleware: a middleware costs every
request three more coroutine frames (it, aiohttp's ``current_app`` one, and
the chain built per request), a wrapper one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from google.rpc import status_pb2

from a2a_grpc.bindings._http.body import too_large
from a2a_grpc.bindings._http.jsonrpc import JsonRpcBinding
from a2a_grpc.bindings._http.rest import error_response
from a2a_grpc.errors import A2AError, ErrorCode

__all__ = ["UNROUTED_PATH", "Handler", "guarded", "unrouted"]

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: The path of the :func:`unrouted` route (any path; not ".": /tasks/a%0Ab).
UNROUTED_PATH = "/{tail:[\\s\\S]*}"


def _http_error(request: web.Request, exc: web.HTTPException) -> A2AError:
    if exc.status in (404, 405):
        return A2AError(ErrorCode.METHOD_NOT_FOUND, f"no route for {request.method} {request.rel_url.path!r}")
    if exc.status == 413:
        return too_large(request.app)
    return A2AError(ErrorCode.INVALID_REQUEST, exc.reason)


def _answer(
    request: web.Request, jsonrpc_path: str, status: status_pb2.Status, http_status: int | None
) -> web.Response:
    if request.method == "POST" and request.rel_url.path == jsonrpc_path:
        return JsonRpcBinding.error_response(None, status)
    return error_response(status, http_status=http_status)


def guarded(handler: Handler, jsonrpc_path: str) -> Handler:
    """``handler``, answering in JSON (see the module docstring) what it
    raises; ``jsonrpc_path`` is the JSON-RPC URL, whose POSTs get the
    JSON-RPC form."""

    async def guard(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            err = _http_error(request, exc)
            return _answer(request, jsonrpc_path, err.to_status(), exc.status)
        except A2AError as err:
            return _answer(request, jsonrpc_path, err.to_status(), None)
        except Exception:
            log.exception("%s %s failed", request.method, request.rel_url.path)
            status = A2AError(ErrorCode.INTERNAL, "internal error").to_status()
            return _answer(request, jsonrpc_path, status, None)

    return guard


def unrouted(app: web.Application) -> Handler:
    """The handler of the catch-all route added last to ``app``: raises
    aiohttp's 405 when another route takes the path with other methods, else
    its 404 (wrap it with :func:`guarded`)."""

    async def handle(request: web.Request) -> web.StreamResponse:
        allowed: set[str] = set()
        for resource in app.router.resources():
            match, methods = await resource.resolve(request)
            if match is None:  # the one resource that matches is this route's
                allowed |= methods
        if allowed:
            raise web.HTTPMethodNotAllowed(request.method, allowed)
        raise web.HTTPNotFound()

    return handle
