"""The cluster's event bus on Redis Streams (``--bus redis://HOST:PORT``).

Fed from committed rows: a replica appends one entry per event to the stream
``<prefix>events`` only after the task write committed (the store's
``on_commit``; the entries of one event-loop iteration's commits in one
pipelined round trip): the task and its version (as a
:func:`~a2a_grpc.cluster._store.notification` without the event) and the
event's bytes when they are
at most :data:`~a2a_grpc.cluster._store.NOTIFY_LIMIT`. A reader publishes the
next version from the entry and reads anything else from the log
(:meth:`~a2a_grpc.cluster._bus.EventRelay.notified`), so nothing is lost when
an entry is (a replica killed between its commit and its XADD, a stream
trimmed past an entry): the next entry of the task, or the sweep that
re-reads every followed task each ``sweep_seconds``, reads the missing rows
from the table. Control messages (:func:`~a2a_grpc.cluster._store.control_message`) go to
the stream ``<prefix>control``. Both streams are capped (``MAXLEN ~``).

Needs the ``redis`` package (``pip install a2a-grpc[cluster]``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from a2a_grpc.cluster._bus import ClusterBus, EventRelay
from a2a_grpc.cluster._store import NOTIFY_LIMIT, ClusterStore, notification, parse_notification
from a2a_grpc.core.ports import TaskKey
from a2a_grpc.types import pb

__all__ = ["RedisEventRelay"]

log = logging.getLogger("a2a_grpc.cluster.bus")

#: Entries kept per stream (approximately): wake-ups only, the log is the truth.
_MAXLEN = 100_000


class RedisEventRelay(EventRelay):
    """The relay on Redis Streams at ``url`` (``redis://HOST:PORT[/DB]``)."""

    backend = "Redis Streams"

    def __init__(
        self,
        store: ClusterStore,
        bus: ClusterBus,
        url: str,
        *,
        name: str = "",
        retry_seconds: float = 0.5,
        sweep_seconds: float = 1.0,
        on_cancel: Callable[[TaskKey], None] | None = None,
        on_health: Callable[[bool], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__(
            store, bus, name=name, retry_seconds=retry_seconds, on_cancel=on_cancel, on_health=on_health
        )
        self.url = url
        self.sweep_seconds = sweep_seconds
        self.events_stream = f"{store.table_prefix}events"
        self.control_stream = f"{store.table_prefix}control"
        store.notify_in_transaction = False
        store.on_commit = self._committed
        self._redis: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[None]] = set()
        self._entries: list[dict[str, str | bytes]] = []

    def _committed(self, key: TaskKey, version: int, events: Sequence[pb.StreamResponse]) -> None:
        """After a commit: queues one entry per event, appended at the end of
        this loop iteration (never awaited by the writer)."""
        if self._redis is None:
            return  # the sweep reads it once connected
        if not self._entries:
            asyncio.get_running_loop().call_soon(self._flush)
        first = version - len(events) + 1
        for i, event in enumerate(events):
            entry: dict[str, str | bytes] = {"p": notification(key, first + i, b"")}
            data = event.SerializeToString()
            if len(data) <= NOTIFY_LIMIT:
                entry["e"] = data
            self._entries.append(entry)

    def _flush(self) -> None:
        entries, self._entries = self._entries, []
        if self._redis is None or not entries:
            return
        task = asyncio.get_running_loop().create_task(self._xadd(self._redis, entries))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _xadd(self, client: Any, entries: list[dict[str, str | bytes]]) -> None:
        try:
            async with client.pipeline(transaction=False) as pipe:
                for entry in entries:
                    pipe.xadd(self.events_stream, entry, maxlen=_MAXLEN, approximate=True)
                await pipe.execute()
        except Exception as exc:  # the sweep makes up for it
            log.warning("event relay: XADD to %s failed: %s", self.events_stream, exc)

    async def send_control(self, message: str) -> None:
        await self._redis.xadd(self.control_stream, {"p": message}, maxlen=_MAXLEN, approximate=True)

    async def _connect(self) -> None:
        import redis.asyncio as aioredis

        client = aioredis.from_url(self.url, client_name=f"a2a-relay-{self.name}", socket_connect_timeout=5)
        try:
            await client.ping()
            last = {s: "$" for s in (self.events_stream, self.control_stream)}
            for stream in last:
                info = await client.xinfo_stream(stream) if await client.exists(stream) else None
                if info is not None:
                    last[stream] = info["last-generated-id"]
        except BaseException:
            await client.aclose()
            raise
        self._redis = client
        loop = asyncio.get_running_loop()
        self._reader = loop.create_task(self._read_streams(client, last), name="a2a-redis-reader")
        if self._sweeper is None:
            self._sweeper = loop.create_task(self._sweep(), name="a2a-redis-sweep")

    async def _read_streams(self, client: Any, last: dict[str, Any]) -> None:
        try:
            while True:
                for stream, entries in await client.xread(last, block=1000, count=500):
                    name = stream.decode() if isinstance(stream, bytes) else stream
                    for entry_id, fields in entries:
                        last[name] = entry_id
                        payload = fields[b"p"].decode()
                        if name == self.events_stream:
                            self._heard(payload, fields.get(b"e"))
                        else:
                            self.control(payload)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("event relay: reading Redis failed: %s", exc)
            self.connected.clear()

    def _heard(self, payload: str, event: bytes | None) -> None:
        try:
            key, version, _none = parse_notification(payload)
        except ValueError as exc:  # not this version's format: nothing to go by
            log.warning("event relay: ignoring stream entry %.80r: %s", payload, exc)
            return
        self.notified(key, version, event)

    async def _sweep(self) -> None:
        """Re-reads every followed task from the log: what a lost wake-up missed."""
        while True:
            await asyncio.sleep(self.sweep_seconds)
            for key in self.bus.followed():
                self._read(key)

    def _alive(self) -> bool:
        return self._reader is not None and not self._reader.done()

    async def _close(self) -> None:
        for task in (self._reader, self._sweeper if self._closing else None):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._reader = None
        if self._closing:
            self._sweeper = None
        client, self._redis = self._redis, None
        if client is not None:
            await client.aclose()
