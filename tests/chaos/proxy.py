"""A small TCP proxy of our own, for network faults between one replica and
PostgreSQL, and the background event loop it (and the webhook receiver) run on.

Each replica of a chaos run connects to PostgreSQL through its own
:class:`Proxy` port. The mode can be changed at run time, from any thread:

- ``pass``: bytes go through as they come;
- ``blackhole``: connections are accepted and nothing is answered or
  forwarded, either way: what is sent meanwhile is lost, the connections stay
  open (a middlebox dropping every packet, toxiproxy's ``timeout`` toxic); a
  connection opened meanwhile reaches PostgreSQL once the mode changes, its
  first bytes lost;
- ``stall``: nothing is forwarded until the mode changes, then everything
  held goes through, in order (a short partition under TCP: the lost packets
  are retransmitted once it heals);
- ``delay``: every chunk is forwarded ``delay`` seconds after it arrived (added
  latency, not a throughput cap: chunks in flight overlap);
- ``refuse``: the listening socket is closed (a connect gets ECONNREFUSED)
  and every open connection is reset: the database is down.

:class:`Background` runs an asyncio loop in a daemon thread, so that the
proxies and the receiver answer at once even while the harness's own loop
is busy with the workload.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["MODES", "Background", "Proxy"]

T = TypeVar("T")
MODES = ("pass", "blackhole", "stall", "delay", "refuse")
_CHUNK = 65536


class Background:
    """An event loop in a daemon thread. :meth:`run` runs a coroutine on it
    from another thread and returns its result; :meth:`soon` schedules a
    plain call."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="chaos-background", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        """Runs ``coro`` on the background loop; blocks until it is done."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """As :meth:`run`, awaited from another event loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def soon(self, fn: Any, *args: Any) -> None:
        self.loop.call_soon_threadsafe(fn, *args)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


class _Link:
    """One proxied connection: client ↔ upstream, a pump each way. The
    upstream connection is made at once, or (accepted in a black hole or a
    stall) when the first byte may go through."""

    def __init__(self, proxy: Proxy, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.proxy = proxy
        self.client = (reader, writer)
        self.upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.connected = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []

    async def run(self) -> None:
        try:
            if self.proxy.gate.is_set():
                await self._to_upstream()
        except OSError:
            self.abort()
            return
        self.tasks = [
            asyncio.ensure_future(self._pump(self.client[0], self._to_upstream)),
            asyncio.ensure_future(self._back()),
        ]
        await asyncio.wait(self.tasks, return_when=asyncio.FIRST_COMPLETED)
        self.abort()

    async def _to_upstream(self) -> asyncio.StreamWriter:
        if self.upstream is None:
            self.upstream = await asyncio.open_connection(self.proxy.upstream_host, self.proxy.upstream_port)
            self.connected.set()
        return self.upstream[1]

    async def _to_client(self) -> asyncio.StreamWriter:
        return self.client[1]

    async def _back(self) -> None:
        await self.connected.wait()
        assert self.upstream is not None
        await self._pump(self.upstream[0], self._to_client)

    async def _pump(
        self, src: asyncio.StreamReader, dst: Callable[[], Awaitable[asyncio.StreamWriter]]
    ) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(maxsize=256)

        async def read() -> None:
            while data := await src.read(_CHUNK):
                await queue.put((time.monotonic(), data))
            await queue.put((time.monotonic(), b""))

        reading = asyncio.ensure_future(read())
        try:
            while True:
                arrived, data = await queue.get()
                if data and self.proxy.mode == "blackhole":
                    continue  # lost on the way
                await self.proxy.gate.wait()
                wait = arrived + self.proxy.delay - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                    await self.proxy.gate.wait()  # cut off meanwhile
                writer = await dst()
                if not data:
                    with contextlib.suppress(OSError):
                        writer.write_eof()
                    return
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            return
        finally:
            reading.cancel()

    def abort(self) -> None:
        for task in self.tasks:
            task.cancel()
        for pair in (self.client, self.upstream):
            if pair is not None and pair[1].transport is not None:
                pair[1].transport.abort()


class Proxy:
    """A TCP proxy on 127.0.0.1 in front of ``upstream_host:upstream_port``.
    Create and :meth:`start` it on the loop it runs on (a :class:`Background`);
    :meth:`set` may be called from any thread."""

    def __init__(self, upstream_host: str, upstream_port: int, *, name: str = "") -> None:
        self.upstream_host = upstream_host
        self.upstream_port = upstream_port
        self.name = name
        self.port = 0
        self.mode = "pass"
        self.delay = 0.0
        self.gate = asyncio.Event()
        self.gate.set()
        self.links: set[_Link] = set()
        self._server: asyncio.base_events.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self, port: int = 0) -> int:
        """Listens (on ``port``, 0: any free one); returns the port."""
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", port or self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        await self._close_listener()
        for link in list(self.links):
            link.abort()
        self.gate.set()

    async def _close_listener(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        link = _Link(self, reader, writer)
        self.links.add(link)
        try:
            await link.run()
        finally:
            self.links.discard(link)

    async def switch(self, mode: str, delay: float = 0.0) -> None:
        """Changes the mode (see the module docstring), on the proxy's loop."""
        if mode not in MODES:
            raise ValueError(f"unknown proxy mode {mode!r}: one of {MODES}")
        was, self.mode = self.mode, mode
        self.delay = delay if mode == "delay" else 0.0
        if mode in ("blackhole", "stall"):
            self.gate.clear()
        else:
            self.gate.set()
        if mode == "refuse":
            await self._close_listener()
            for link in list(self.links):
                link.abort()
        elif was == "refuse":
            await self.start(self.port)

    def set(self, mode: str, delay: float = 0.0, timeout: float = 10.0) -> None:
        """:meth:`switch` from another thread (blocks until done)."""
        assert self._loop is not None, "start the proxy first"
        asyncio.run_coroutine_threadsafe(self.switch(mode, delay), self._loop).result(timeout)
