"""Task retention: terminal tasks are deleted some time after they ended.

A store that supports retention has ``purge_terminal_tasks(before_ms,
limit)`` (:class:`TaskRetention`; the memory and SQL stores do): it deletes
terminal tasks (COMPLETED, FAILED, CANCELED, REJECTED) whose status timestamp
is older than the cut-off, with their push configs and outbox rows. Tasks
that may still change (SUBMITTED, WORKING, INPUT_REQUIRED, AUTH_REQUIRED) are
never deleted.

:class:`RetentionWorker` runs it in the background (``a2a-grpc serve
--retain-terminal-tasks 30d``); :func:`purge` is the one-off (``a2a-grpc admin
purge --older-than 30d``). :func:`parse_duration` reads ``30d``, ``12h``,
``90m``, ``45s``, ``2w``.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import Protocol, runtime_checkable

from a2a_grpc.core._background import Background

__all__ = ["RetentionWorker", "TaskRetention", "parse_duration", "purge"]

log = logging.getLogger("a2a_grpc.retention")

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", re.IGNORECASE)
#: Tasks deleted per transaction.
BATCH = 1000


@runtime_checkable
class TaskRetention(Protocol):
    """A store that can delete old terminal tasks."""

    async def purge_terminal_tasks(self, before_ms: int, limit: int = BATCH) -> int:
        """Deletes up to ``limit`` terminal tasks older than ``before_ms``
        (Unix ms) with their push configs and outbox rows; how many."""
        ...


def parse_duration(text: str) -> float:
    """Seconds in ``text``: a number and a unit — ``s``, ``m``, ``h``, ``d`` or
    ``w`` (``30d``, ``1.5h``). ValueError otherwise, or when not positive."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not a duration such as 30d, 12h, 90m or 45s")
    seconds = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if seconds <= 0:
        raise ValueError(f"{text!r}: the duration must be positive")
    return seconds


async def purge(store: object, older_than_seconds: float, *, now: float | None = None) -> int:
    """Deletes every terminal task whose status is older than
    ``older_than_seconds`` (batches of :data:`BATCH`); how many. TypeError
    when the store does not support retention."""
    if not isinstance(store, TaskRetention):
        raise TypeError(f"{type(store).__name__} does not support task retention")
    before_ms = int(((time.time() if now is None else now) - older_than_seconds) * 1000)
    total = 0
    while True:
        n = await store.purge_terminal_tasks(before_ms, BATCH)
        total += n
        if n < BATCH:
            return total


class RetentionWorker:
    """Purges terminal tasks older than ``keep_seconds`` from ``store`` every
    ``interval_seconds`` (default: a tenth of ``keep_seconds``, between 1 s
    and 1 h), first right after :meth:`start`. A failed round is logged and
    tried again at the next one."""

    def __init__(self, store: object, keep_seconds: float, interval_seconds: float | None = None) -> None:
        if not isinstance(store, TaskRetention):
            raise TypeError(f"{type(store).__name__} does not support task retention")
        self.store = store
        self.keep_seconds = keep_seconds
        self.interval_seconds = interval_seconds or min(3600.0, max(1.0, keep_seconds / 10))
        self.purged = 0
        self._background = Background(self._run, "a2a-retention")

    async def start(self) -> None:
        """Starts the background loop (idempotent)."""
        self._background.start()

    async def stop(self) -> None:
        """Stops the loop (a round in progress is cancelled: its batch rolls back)."""
        await self._background.stop()

    async def _run(self) -> None:
        while True:
            try:
                n = await purge(self.store, self.keep_seconds)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("retention: purging terminal tasks failed; retrying later", exc_info=True)
            else:
                self.purged += n
                if n:
                    log.info("retention: deleted %d terminal tasks older than %gs", n, self.keep_seconds)
            await asyncio.sleep(self.interval_seconds)
