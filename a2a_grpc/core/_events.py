"""Per-task fan-out of stream events to any number of subscribers.

Tasks are keyed by their owner and id (:data:`~a2a_grpc.core.ports.TaskKey`):
a subscription follows one owner's task, and nothing published for another
owner's task of the same id reaches it.

Every event is published with the task version it produced, so a subscriber
that also reads a snapshot can drop the events the snapshot already contains
(spec §3.1.6: SubscribeToTask starts with a snapshot, then the updates).

Each subscriber has its own bounded buffer, in events and in bytes.
Publishing never waits: a subscriber that falls more than ``buffer`` events
or ``buffer_bytes`` bytes (serialized size) behind is closed with
RESOURCE_EXHAUSTED after it has drained what it holds, so a slow or stuck
client never blocks the execution or the other subscribers, never pins more
than about ``buffer_bytes`` of memory, and never silently misses an event
(spec §3.5.2: every stream sees identical events in order). One event larger
than ``buffer_bytes`` still reaches a subscriber that has nothing pending.
"""

from __future__ import annotations

import asyncio
from collections import deque

from a2a_grpc.core.hooks import NO_OBSERVER, Observer
from a2a_grpc.core.ports import TaskKey
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb

__all__ = ["DEFAULT_BUFFER_BYTES", "EventBus", "Subscription"]

#: Bytes of events a subscriber may lag by default (issue 10: 1,024 events of
#: 64 KiB pinned 65 MB per stalled stream).
DEFAULT_BUFFER_BYTES = 16 * 1024 * 1024


class Subscription:
    """One subscriber's ordered view of a task's events.

    Iterate it (``async for version, event in sub``) to receive
    ``(task version, pb.StreamResponse)`` pairs. Iteration ends when the task
    becomes terminal or the bus closes; it raises A2AError(RESOURCE_EXHAUSTED)
    if the subscriber fell too far behind.
    """

    __slots__ = (
        "_buffer",
        "_bus",
        "_bytes",
        "_ended",
        "_error",
        "_limit",
        "_limit_bytes",
        "_sizes",
        "_waiter",
        "key",
    )

    def __init__(
        self, bus: EventBus, key: TaskKey, limit: int, limit_bytes: int = DEFAULT_BUFFER_BYTES
    ) -> None:
        self._bus = bus
        self.key = key
        self._limit = limit
        self._limit_bytes = limit_bytes
        self._buffer: deque[tuple[int, pb.StreamResponse]] = deque()
        self._sizes: deque[int] = deque()
        self._bytes = 0
        self._ended = False
        self._error: A2AError | None = None
        self._waiter: asyncio.Future[None] | None = None

    @property
    def task_id(self) -> str:
        """The id of the task followed."""
        return self.key[2]

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _push(self, version: int, event: pb.StreamResponse, size: int) -> bool:
        """Queues an event of ``size`` bytes; False if the subscriber
        overflowed (and is closed)."""
        if self._ended:
            return False
        behind = None
        if len(self._buffer) >= self._limit:
            behind = f"{self._limit} events"
        elif self._buffer and self._bytes + size > self._limit_bytes:
            behind = f"{self._limit_bytes} bytes"
        if behind is not None:
            self._error = A2AError(
                ErrorCode.RESOURCE_EXHAUSTED,
                f"subscriber fell more than {behind} behind on task {self.task_id}; "
                "subscribe again to get a fresh snapshot",
                metadata={"taskId": self.task_id},
            )
            self._ended = True
            self._wake()
            return False
        self._buffer.append((version, event))
        self._sizes.append(size)
        self._bytes += size
        self._wake()
        return True

    @property
    def pending_bytes(self) -> int:
        """Serialized size of the events queued and not yet read."""
        return self._bytes

    def _end(self) -> None:
        self._ended = True
        self._wake()

    def close(self) -> None:
        """Stops receiving events (idempotent)."""
        self._ended = True
        self._bus._remove(self)
        self._wake()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> tuple[int, pb.StreamResponse]:
        # A plain iterator, not an async generator: the event loop tracks
        # every async generator it starts (a weak set, in Python code).
        while True:
            if self._buffer:
                self._bytes -= self._sizes.popleft()
                return self._buffer.popleft()
            if self._ended:
                self.close()
                if self._error is not None:
                    raise self._error
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None


class EventBus:
    """Routes ``(version, StreamResponse)`` events of each task (by its
    :data:`~a2a_grpc.core.ports.TaskKey`) to its subscribers, in publication
    order. ``observer`` hears of subscribers closed for lagging."""

    def __init__(
        self,
        *,
        buffer: int = 1024,
        buffer_bytes: int = DEFAULT_BUFFER_BYTES,
        observer: Observer = NO_OBSERVER,
    ) -> None:
        self._buffer = buffer
        self._buffer_bytes = buffer_bytes
        self._subs: dict[TaskKey, set[Subscription]] = {}
        self.observer = observer

    def subscribe(self, key: TaskKey) -> Subscription:
        """A new subscription to the future events of the task ``key`` (none
        is missed from this call on: subscribing never awaits)."""
        sub = Subscription(self, key, self._buffer, self._buffer_bytes)
        self._subs.setdefault(key, set()).add(sub)
        return sub

    def subscriber_count(self, key: TaskKey) -> int:
        """How many subscribers follow the task ``key``."""
        return len(self._subs.get(key, ()))

    def total_subscribers(self) -> int:
        """How many subscribers follow any task."""
        return sum(len(subs) for subs in self._subs.values())

    def publish(self, key: TaskKey, version: int, event: pb.StreamResponse, *, last: bool = False) -> None:
        """Delivers an event to every subscriber of the task ``key``; with
        ``last`` (the task became terminal) their iteration ends after it."""
        subs = self._subs.get(key)
        if not subs:
            return
        size = event.ByteSize()
        overflowed = [sub for sub in subs if not sub._push(version, event, size)]
        for sub in overflowed:
            subs.discard(sub)
            if sub._error is not None:
                self.observer.subscriber_lagged()
        if last:
            for sub in subs:
                sub._end()
            self._subs.pop(key, None)

    def close_all(self) -> None:
        """Ends every subscription (server shutdown)."""
        for subs in self._subs.values():
            for sub in subs:
                sub._end()
        self._subs.clear()

    def _remove(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.key)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[sub.key]
