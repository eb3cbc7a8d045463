"""Connection hygiene on the HTTP port, and quiet logs for malformed requests.

:class:`GuardedSite` listens like aiohttp's ``TCPSite`` and counts the open
connections (:class:`~a2a_grpc.bindings._connlimits.ConnectionLimits`):

- up to ``max_connections`` are served normally;
- the next :data:`~a2a_grpc.bindings._connlimits.HTTP_RESERVE` are *reserve*
  connections: they serve one request, only ``GET`` of the Agent Card (the
  HTTP health check), answer anything else 503 UNAVAILABLE with
  ``Retry-After``, close after it, and must send it within
  :data:`RESERVE_HEADER_SECONDS` — so a flood of idle sockets cannot hold the
  reserve for longer than that;
- beyond that a new connection is answered that 503 at once and closed,
  without reading it, so the descriptor is free again immediately.

A connection must send its first request head within
``header_timeout_seconds`` (slowloris); between requests aiohttp's keep-alive
timeout (``idle_timeout_seconds``) closes connections with no request in
flight, including ones stuck halfway through a request head.

:class:`ClientErrorLogger` replaces aiohttp's request-handler logger: a
malformed HTTP request (a client's fault) is one WARNING line without a
traceback, at most :data:`CLIENT_ERRORS_PER_MINUTE` a minute (then a count of
the suppressed ones); everything else keeps its traceback.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import ssl
import time
import weakref
from typing import Any, cast

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestHandler

from a2a_grpc.bindings._connlimits import HTTP_RESERVE, ConnectionLimits, bind_error
from a2a_grpc.bindings._http.app import CARD_PATHS

__all__ = [
    "CLIENT_ERRORS_PER_MINUTE",
    "RESERVE_HEADER_SECONDS",
    "ClientErrorLogger",
    "GuardedSite",
]

#: How long a reserve connection may take to send its one request head.
RESERVE_HEADER_SECONDS = 1.0
#: Malformed-request warnings logged per minute at most.
CLIENT_ERRORS_PER_MINUTE = 10


def _busy_body(cap: int) -> bytes:
    error = {
        "error": {
            "code": 503,
            "status": "UNAVAILABLE",
            "message": f"the server is at its connection limit ({cap}); retry later",
            "details": [],
        }
    }
    return json.dumps(error).encode()


def _busy_response(cap: int) -> bytes:
    body = _busy_body(cap)
    head = (
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Content-Type: application/json\r\n"
        "Retry-After: 1\r\n"
        "Connection: close\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class _Refusal(asyncio.Protocol):
    """A connection beyond the cap and its reserve: 503, then closed."""

    def __init__(self, response: bytes) -> None:
        self._response = response

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.WriteTransport subclasses.
        writer = cast(asyncio.WriteTransport, transport)
        writer.write(self._response)
        writer.close()


class _GuardedHandler(RequestHandler):
    """aiohttp's request handler, counted by its :class:`_Guard`, with the
    first-request-head deadline; a *reserve* connection serves one request,
    only ``GET`` of the Agent Card (anything else: 503), then closes.
    ``grpc_peer`` caches the caller's address for
    :meth:`a2a_grpc.bindings._http.context.GatewayContext.peer`."""

    __slots__ = ("__weakref__", "_guard", "_header_timer", "grpc_peer", "reserve")

    def __init__(self, guard: _Guard, *args: Any, reserve: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._guard = guard
        self._header_timer: asyncio.TimerHandle | None = None
        self.reserve = reserve
        self.grpc_peer: str | None = None
        if reserve:
            self._request_handler = functools.partial(_serve_reserve, self._request_handler, guard.cap)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        timeout = self._guard.limits.header_timeout_seconds
        if self.reserve:
            timeout = min(timeout, RESERVE_HEADER_SECONDS) if timeout > 0 else RESERVE_HEADER_SECONDS
        if timeout > 0:
            self._header_timer = asyncio.get_running_loop().call_later(timeout, self.force_close)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._header_timer is not None and self._messages:  # a request head is read: deadline met
            self._header_timer.cancel()
            self._header_timer = None

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        self._guard.live.discard(self)
        super().connection_lost(exc)


async def _serve_reserve(handler: Any, cap: int, request: web.BaseRequest) -> web.StreamResponse:
    """A reserve connection's one request: ``GET`` of the Agent Card, else
    503 UNAVAILABLE with ``Retry-After``; the connection closes after it."""
    if request.method == "GET" and request.path in CARD_PATHS:
        response = await handler(request)
    else:
        response = web.Response(
            status=503, body=_busy_body(cap), content_type="application/json", headers={"Retry-After": "1"}
        )
    response.force_close()
    return response


class _Guard:
    """The protocol factory of a :class:`GuardedSite`: counts connections and
    picks normal, reserve or refusal for each new one."""

    def __init__(self, server: web.Server, limits: ConnectionLimits, handler_args: dict[str, Any]) -> None:
        self.server = server
        self.limits = limits
        self.cap = limits.per_port()
        self.handler_args = handler_args
        self.live: weakref.WeakSet[_GuardedHandler] = weakref.WeakSet()
        self._refusal = _busy_response(self.cap)
        self.refused = 0

    def __call__(self) -> asyncio.BaseProtocol:
        open_now = len(self.live)
        if open_now >= self.cap + HTTP_RESERVE:
            self.refused += 1
            return _Refusal(self._refusal)
        handler = _GuardedHandler(
            self,
            self.server,
            loop=asyncio.get_running_loop(),
            reserve=open_now >= self.cap,
            **self.handler_args,
        )
        self.live.add(handler)
        return handler


class GuardedSite(web.BaseSite):
    """A TCP site for ``runner`` on ``host``:``port`` enforcing ``limits``.
    ``handler_args`` are the keyword arguments aiohttp's request handler
    takes (those given to the runner). Raises OSError when the port cannot be
    bound (one line naming it)."""

    __slots__ = ("_guard", "_handshake_timeout", "_host", "_port", "_reuse_port", "_tls")

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str,
        port: int,
        limits: ConnectionLimits,
        handler_args: dict[str, Any],
        *,
        ssl_context: ssl.SSLContext | None = None,
        reuse_port: bool = False,
    ) -> None:
        super().__init__(runner)
        self._reuse_port = reuse_port
        assert runner.server is not None
        self._host, self._port = host, port
        self._guard = _Guard(runner.server, limits, handler_args)
        self._tls = ssl_context
        self._handshake_timeout = limits.header_timeout_seconds or None

    @property
    def name(self) -> str:
        return f"{'https' if self._tls else 'http'}://{self._host}:{self._port}"

    @property
    def open_connections(self) -> int:
        """Connections open now (normal and reserve)."""
        return len(self._guard.live)

    @property
    def refused_connections(self) -> int:
        """Connections refused at once since start (beyond cap and reserve)."""
        return self._guard.refused

    @property
    def port(self) -> int:
        """The bound port (the requested one before start)."""
        sockets = getattr(self._server, "sockets", None) or []
        return int(sockets[0].getsockname()[1]) if sockets else self._port

    async def start(self) -> None:
        """Binds and starts accepting; OSError("HTTP port N on H is already
        in use") when the port is taken."""
        await super().start()
        loop = asyncio.get_running_loop()
        try:
            self._server = await loop.create_server(
                self._guard,
                self._host,
                self._port,
                backlog=self._backlog,
                ssl=self._tls,
                reuse_port=self._reuse_port or None,
                # The TLS handshake is bounded like a request head (slowloris).
                ssl_handshake_timeout=self._handshake_timeout if self._tls else None,
            )
        except OSError as exc:
            raise bind_error("HTTP", self._host, self._port, exc) from None


class ClientErrorLogger(logging.LoggerAdapter[logging.Logger]):
    """aiohttp's ``aiohttp.server`` logger, quiet about clients' mistakes:
    an ``exception()`` whose cause is a malformed request (aiohttp's
    ``HttpProcessingError``: bad request line, header too long, bad chunk…)
    becomes a one-line WARNING, rate-limited; others are logged as they are."""

    def __init__(self, logger: logging.Logger | None = None) -> None:
        super().__init__(logger or logging.getLogger("aiohttp.server"), {})
        self._window = 0.0
        self._count = 0
        self._suppressed = 0

    def exception(self, msg: object, *args: object, exc_info: Any = True, **kwargs: Any) -> None:
        if isinstance(exc_info, HttpProcessingError):
            self._client_error(msg, args, exc_info)
            return
        super().exception(msg, *args, exc_info=exc_info, **kwargs)

    def _client_error(self, msg: object, args: tuple[object, ...], exc: HttpProcessingError) -> None:
        now = time.monotonic()
        if now - self._window >= 60.0:
            if self._suppressed:
                self.logger.warning("%d more malformed HTTP requests in the last minute", self._suppressed)
            self._window, self._count, self._suppressed = now, 0, 0
        if self._count >= CLIENT_ERRORS_PER_MINUTE:
            self._suppressed += 1
            return
        self._count += 1
        text = str(msg) % args if args else str(msg)
        reason = (exc.message or type(exc).__name__).splitlines()[0][:200]
        self.logger.warning("%s: malformed HTTP request (%s %s)", text, exc.code, reason)
