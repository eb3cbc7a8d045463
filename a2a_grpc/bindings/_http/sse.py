"""Server-Sent Events for the streaming RPCs, on both HTTP bindings.

:func:`stream` drives one servicer async generator (``SendStreamingMessage`` or
``SubscribeToTask``) onto an SSE response (spec §9.4.2, §11.7; design.md):

* the response (status and headers) is prepared only with the first event, so
  an error before it is answered in the binding's normal, non-SSE error form
  with its real HTTP status;
* each event is one ``data:`` line of JSON (the codec escapes U+2028/U+2029,
  and JSON text never contains a raw line break), followed by a blank line;
* a ``: keep-alive`` comment is written after ``keepalive`` seconds of silence;
* a client that disconnects closes the servicer's generator (the subscription
  ends, the task is not touched);
* an error after the first event becomes one final event carrying the error,
  then the stream closes; the normal end of the generator closes it too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from aiohttp import web
from google.rpc import status_pb2

from a2a_grpc.bindings._http.errors import GatewayAbort, status_of
from a2a_grpc.errors import A2AError

__all__ = ["SSE_HEADERS", "stream"]

log = logging.getLogger(__name__)

SSE_HEADERS = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}
#: How often a silent stream checks whether its client is still there.
_POLL_SECONDS = 1.0


def _gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def stream(
    request: web.Request,
    events: AsyncIterator[Any],
    *,
    encode_event: Callable[[Any], str],
    encode_error: Callable[[status_pb2.Status], str],
    error_response: Callable[[status_pb2.Status], web.StreamResponse],
    headers: Callable[[], Mapping[str, str]],
    keepalive: float = 15.0,
    on_disconnect: Callable[[], None] | None = None,
    stopping: asyncio.Event | None = None,
) -> web.StreamResponse:
    """Streams ``events`` as SSE and returns the (prepared) response.

    ``encode_event`` turns one event into JSON text, ``encode_error`` a
    mid-stream ``google.rpc.Status`` into the JSON text of the final event,
    ``error_response`` a status before the first event into a normal response,
    ``headers`` gives the extra response headers (``A2A-Extensions``) once the
    first event is known. When ``stopping`` is set (server shutdown) the
    stream ends as if the generator had finished.
    """
    agen = events.__aiter__()
    try:
        first = await agen.__anext__()
    except StopAsyncIteration:
        first = None
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if not _is_known(exc):
            log.exception("stream failed before its first event")
        return error_response(status_of(exc))

    response = web.StreamResponse(status=200, headers={**SSE_HEADERS, **headers()})
    await response.prepare(request)
    try:
        if first is not None:
            await _write(response, encode_event(first))
            await _pump(agen, request, response, encode_event, encode_error, keepalive, stopping)
        await response.write_eof()
    except ConnectionError:
        # The client went away: end the servicer's generator, which ends its
        # subscription (the task itself is not touched).
        if on_disconnect is not None:
            on_disconnect()
    except asyncio.CancelledError:
        if on_disconnect is not None:
            on_disconnect()
        with contextlib.suppress(BaseException):
            await asyncio.shield(_close(agen))
        raise
    finally:
        await _close(agen)
    return response


class _Watch:
    """The timer of one stream while it waits for its generator: every
    ``min(_POLL_SECONDS, keepalive)`` seconds it checks whether the client
    went away or the server is stopping — then it cancels the waiting task,
    noting why in ``reason`` — and writes a keep-alive comment after
    ``keepalive`` seconds of silence. One timer per stream, not a task and a
    wait per event."""

    __slots__ = (
        "idle_since",
        "keepalive",
        "loop",
        "reason",
        "request",
        "response",
        "stopping",
        "task",
        "timer",
        "waiting",
    )

    def __init__(
        self,
        request: web.Request,
        response: web.StreamResponse,
        keepalive: float,
        stopping: asyncio.Event | None,
    ) -> None:
        self.loop = asyncio.get_running_loop()
        self.task: asyncio.Task[Any] | None = asyncio.current_task()
        self.request, self.response, self.keepalive, self.stopping = request, response, keepalive, stopping
        self.idle_since = self.loop.time()
        self.waiting = False
        self.reason: str | None = None  # "gone" or "stopping", once the task is cancelled for it
        self.timer: asyncio.TimerHandle | None = self.loop.call_later(
            min(_POLL_SECONDS, keepalive), self._tick
        )

    def _tick(self) -> None:
        self.timer = None
        if self.task is None:
            return
        if self.waiting:  # not while the task writes: a write finds a gone client itself
            if _gone(self.request):
                self.reason = "gone"
            elif self.stopping is not None and self.stopping.is_set():
                self.reason = "stopping"
            if self.reason is not None:
                self.task.cancel()
                return
            if self.loop.time() - self.idle_since >= self.keepalive:
                self.idle_since = self.loop.time()
                self.loop.create_task(self.response.write(b": keep-alive\n\n")).add_done_callback(_quiet)
        self.timer = self.loop.call_later(min(_POLL_SECONDS, self.keepalive), self._tick)

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.task = None


def _quiet(write: asyncio.Task[Any]) -> None:
    """Reads a keep-alive write's outcome (a gone client is found by the stream)."""
    if not write.cancelled():
        write.exception()


async def _pump(
    agen: Any,
    request: web.Request,
    response: web.StreamResponse,
    encode_event: Callable[[Any], str],
    encode_error: Callable[[status_pb2.Status], str],
    keepalive: float,
    stopping: asyncio.Event | None,
) -> None:
    """Writes the events after the first until the generator ends, fails
    (one final error event) or the server stops; raises ConnectionError when
    the client went away."""
    watch = _Watch(request, response, keepalive, stopping)
    try:
        while True:
            watch.waiting = True
            try:
                event = await agen.__anext__()
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if watch.reason is None:
                    raise
                _uncancel()
                _stopped(watch.reason)
                return
            except ConnectionError:
                raise
            except Exception as failure:
                if not _is_known(failure):
                    log.error("stream failed", exc_info=failure)
                await _write(response, encode_error(status_of(failure)))
                return
            finally:
                watch.waiting = False
            if watch.reason is not None:  # cancelled, but the generator went on
                _uncancel()
                _stopped(watch.reason)
                return
            await _write(response, encode_event(event))
            watch.idle_since = watch.loop.time()
    finally:
        watch.stop()


def _uncancel() -> None:
    """Takes back the cancellation the stream's own watch requested."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


def _stopped(reason: str) -> None:
    """The end of a stream its watch stopped: ConnectionResetError when the
    client went away, else (the server is stopping) a normal end."""
    if reason == "gone":
        raise ConnectionResetError("client went away")


async def _close(agen: Any) -> None:
    aclose = getattr(agen, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception, StopAsyncIteration):
            await aclose()


async def _write(response: web.StreamResponse, data: str) -> None:
    await response.write(b"data: " + data.encode("utf-8") + b"\n\n")


def _is_known(exc: BaseException) -> bool:
    return isinstance(exc, GatewayAbort | A2AError)
