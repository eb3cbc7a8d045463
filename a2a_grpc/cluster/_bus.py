"""The cluster's event bus: task events committed on any replica reach the
subscribers on every other one, in version order, each exactly once.

The log is the truth (``task_events``, written in the task write's own
transaction: :mod:`a2a_grpc.cluster._store`); the bus says *when* there is
something new, and may carry the event with it. :class:`PgEventRelay` listens
on the store's PostgreSQL channel; each notification (delivered only on
commit) of a task that has subscribers here names the task (its owner and
id: :data:`~a2a_grpc.core.ports.TaskKey`) and its new version and, when it
fit the payload, the event itself. So

- the next version with its event (the common case) is published at once,
  from the payload: no query, no task;
- anything else (an event too large for the payload, a version beyond the
  next one: a notification missed, or the first one a new subscriber sees)
  makes the relay read the task's events above the last version delivered
  here from the log (on the relay's own connection) and publish them; reads
  are serialized per task and coalesced (what a read returns that a payload
  delivered meanwhile is dropped as a duplicate);
- a notification lost while the listening connection was down costs nothing:
  on reconnect every followed task is read up from the table; a duplicate
  (a version already delivered) is dropped;
- the replica that wrote an event publishes it locally as before; its echo
  from the channel is a version already delivered.

The same connection listens on the control channel (``cancel`` of a task:
:func:`~a2a_grpc.cluster._store.control_message`):
CancelTask on one replica interrupts the execution on the replica holding
the task's lease (:meth:`~a2a_grpc.cluster._leases.LeasedExecutions.cancel_elsewhere`).

:class:`ClusterBus` is the in-process :class:`~a2a_grpc.core._events.EventBus` that
drops an event whose version was already delivered to a task's subscribers,
so the local publish and the relay never double an event. A subscriber reads
its snapshot at version V after subscribing and drops events up to V (the
handler's SubscribeToTask), so it sees the snapshot, then every event > V.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from a2a_grpc.cluster._store import ClusterStore, ends_task, parse_control, parse_notification
from a2a_grpc.core._events import DEFAULT_BUFFER_BYTES, EventBus, Subscription
from a2a_grpc.core.hooks import NO_OBSERVER, Observer
from a2a_grpc.core.ports import TaskKey
from a2a_grpc.types import pb

__all__ = ["ClusterBus", "EventRelay", "PgEventRelay"]

log = logging.getLogger("a2a_grpc.cluster.bus")


class ClusterBus(EventBus):
    """An EventBus that delivers each task version at most once while the
    task has subscribers here (versions 0 and 1 of a direct reply or an
    execution that stored nothing are local and always pass)."""

    def __init__(
        self,
        *,
        buffer: int = 1024,
        buffer_bytes: int = DEFAULT_BUFFER_BYTES,
        observer: Observer = NO_OBSERVER,
    ) -> None:
        super().__init__(buffer=buffer, buffer_bytes=buffer_bytes, observer=observer)
        self._delivered: dict[TaskKey, int] = {}

    def delivered(self, key: TaskKey) -> int:
        """The highest version delivered to the current subscribers of the
        task ``key`` (0: none)."""
        return self._delivered.get(key, 0)

    def publish(self, key: TaskKey, version: int, event: pb.StreamResponse, *, last: bool = False) -> None:
        """As :meth:`EventBus.publish`, dropping a version already delivered."""
        if key not in self._subs:
            return
        kind = event.WhichOneof("payload")
        if kind is not None and kind != "message":
            if version <= self._delivered.get(key, 0):
                return
            self._delivered[key] = version
        super().publish(key, version, event, last=last)
        if key not in self._subs:
            self._delivered.pop(key, None)

    def close_all(self) -> None:
        super().close_all()
        self._delivered.clear()

    def _remove(self, sub: Subscription) -> None:
        super()._remove(sub)
        if sub.key not in self._subs:
            self._delivered.pop(sub.key, None)

    def followed(self) -> list[TaskKey]:
        """The tasks that have subscribers here."""
        return list(self._subs)


class EventRelay:
    """Feeds ``bus`` when a backend says a task has a new committed version
    (:meth:`notified`: from the event it carried, else from ``store``'s event
    log), and carries control messages between replicas. Subclasses connect
    to the backend.

    ``start`` connects (raising when it cannot: the server does not serve
    without it); a dropped connection is re-established every
    ``retry_seconds`` and followed tasks are caught up from the table.
    ``on_cancel`` is called with a task id when another replica asks this
    one to cancel it; ``on_health`` with False when the listening
    connection is found lost, True once it listens again (the server's
    health: NOT_SERVING meanwhile)."""

    #: What the log messages call the backend.
    backend = ""

    def __init__(
        self,
        store: ClusterStore,
        bus: ClusterBus,
        *,
        name: str = "",
        retry_seconds: float = 0.5,
        on_cancel: Callable[[TaskKey], None] | None = None,
        on_health: Callable[[bool], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.name = name
        self.bus = bus
        self.retry_seconds = retry_seconds
        self.connected = asyncio.Event()
        self._reading: set[TaskKey] = set()
        self._again: set[TaskKey] = set()
        self._keeper: asyncio.Task[None] | None = None
        self._closing = False
        #: Called with a task's key when another replica asks this one to cancel it.
        self.on_cancel = on_cancel
        #: Called with False when the listening connection is found lost, True
        #: once it listens again (the server's health: NOT_SERVING meanwhile).
        self.on_health = on_health

    async def start(self) -> None:
        """Connects and listens; then keeps the connection up."""
        await self._connected()
        self._keeper = asyncio.get_running_loop().create_task(self._keep(), name="a2a-event-relay")

    async def stop(self) -> None:
        """Stops listening and closes the connection."""
        self._closing = True
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
        with contextlib.suppress(Exception):
            await self._close()

    async def send_control(self, message: str) -> None:
        """Sends a control message (:func:`~a2a_grpc.cluster._store.control_message`) to every replica."""
        raise NotImplementedError

    async def _connect(self) -> None:
        raise NotImplementedError

    def _alive(self) -> bool:
        raise NotImplementedError

    async def _close(self) -> None:
        raise NotImplementedError

    async def _connected(self) -> None:
        await self._connect()
        self.connected.set()
        for key in self.bus.followed():  # what was missed while not listening
            self._read(key)

    async def _keep(self) -> None:
        while not self._closing:
            await asyncio.sleep(self.retry_seconds)
            if self._alive() and self.connected.is_set():
                continue
            self.connected.clear()
            await self._report(False)
            try:
                with contextlib.suppress(Exception):
                    await self._close()
                await self._connected()
                log.info("event relay: listening again on %s", self.backend)
                await self._report(True)
            except Exception as exc:
                log.warning("event relay: cannot listen on %s yet: %s", self.backend, exc)

    async def _report(self, up: bool) -> None:
        if self.on_health is not None:
            try:
                await self.on_health(up)
            except Exception:  # health is advisory: never stop the relay for it
                log.exception("event relay: cannot report health")

    def notified(self, key: TaskKey, version: int, event: bytes | None = None) -> None:
        """The task ``key`` committed ``version``, whose event is ``event``
        (its bytes; None when the backend did not carry it). The next version
        with its event is published now; a later one, or one without its
        event, is read from the log with whatever else is missing."""
        if not self.bus.subscriber_count(key):
            return
        delivered = self.bus.delivered(key)
        if version <= delivered:
            return  # an echo of a local publish, or a duplicate
        if event is not None and version == delivered + 1:
            try:
                decoded = pb.StreamResponse.FromString(event)
            except Exception:  # not an event after all: the log has it
                log.warning("event relay: undecodable event %s of task %s", version, key[2])
            else:
                self.bus.publish(key, version, decoded, last=ends_task(decoded))
                return
        self._read(key)

    def control(self, payload: str) -> None:
        """A control message from another replica."""
        try:
            verb, key = parse_control(payload)
        except ValueError as exc:  # not this version's format: nothing to go by
            log.warning("event relay: ignoring control message %.80r: %s", payload, exc)
            return
        if verb == "cancel" and self.on_cancel is not None:
            self.on_cancel(key)

    def _read(self, key: TaskKey) -> None:
        """Reads the task's new events, once at a time per task."""
        if key in self._reading:
            self._again.add(key)
            return
        self._reading.add(key)
        asyncio.get_running_loop().create_task(self._pump(key))

    async def _pump(self, key: TaskKey) -> None:
        try:
            while True:
                self._again.discard(key)
                after = self.bus.delivered(key)
                if self.bus.subscriber_count(key):
                    for version, event, final in await self._events_after(key, after):
                        self.bus.publish(key, version, event, last=final)
                if key not in self._again:
                    return
        except Exception:
            log.exception("event relay: cannot read the events of task %s", key[2])
        finally:
            self._reading.discard(key)

    async def _events_after(self, key: TaskKey, after: int) -> list[tuple[int, pb.StreamResponse, bool]]:
        return await self.store.events_after(key, after)


class PgEventRelay(EventRelay):
    """The relay on PostgreSQL LISTEN/NOTIFY: the store's own transaction
    sends the NOTIFY, so a notification exists exactly when the event was
    committed. The listening session (``application_name`` ``a2a-relay-<name>``)
    also runs the relay's log reads, one at a time."""

    backend = "PostgreSQL LISTEN/NOTIFY"

    def __init__(
        self,
        store: ClusterStore,
        bus: ClusterBus,
        *,
        name: str = "",
        retry_seconds: float = 0.5,
        on_cancel: Callable[[TaskKey], None] | None = None,
        on_health: Callable[[bool], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__(
            store, bus, name=name, retry_seconds=retry_seconds, on_cancel=on_cancel, on_health=on_health
        )
        self._conn: Any = None
        self._query = asyncio.Lock()

    async def send_control(self, message: str) -> None:
        await self.store.send_control(message)

    async def _connect(self) -> None:
        import asyncpg

        url = self.store.url.set(drivername="postgresql").render_as_string(hide_password=False)
        conn = await asyncpg.connect(
            url, timeout=10, server_settings={"application_name": f"a2a-relay-{self.name}"[:63]}
        )
        conn.add_termination_listener(lambda _c: self.connected.clear())
        await conn.add_listener(self.store.channel, lambda _c, _p, _ch, payload: self._heard(payload))
        await conn.add_listener(
            self.store.control_channel, lambda _c, _p, _ch, payload: self.control(payload)
        )
        self._conn = conn

    def _heard(self, payload: str) -> None:
        try:
            key, version, event = parse_notification(payload)
        except ValueError as exc:  # not this version's format: nothing to go by
            log.warning("event relay: ignoring notification %.80r: %s", payload, exc)
            return
        self.notified(key, version, event)

    async def _events_after(self, key: TaskKey, after: int) -> list[tuple[int, pb.StreamResponse, bool]]:
        if not self._alive():  # meanwhile, the pool's
            return await self.store.events_after(key, after)
        async with self._query:
            return await self.store.events_after(key, after, conn=self._conn)

    def _alive(self) -> bool:
        return self._conn is not None and not self._conn.is_closed()

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()
