"""Health that reflects the store: ``grpc.health.v1`` says NOT_SERVING while
the database does not answer, SERVING again once it does.

:class:`StoreHealth` pings the store every ``interval_seconds`` (a SQL store:
``SELECT 1`` through its pool, which drops dead connections first; a store
without a database always answers) and reports each change of the answer to
``report(serving)``. A ping slower than ``timeout_seconds`` counts as no
answer. Changes are logged (WARNING when the store goes away, INFO when it
is back). :class:`HealthGate` combines it with the other parts health
depends on (in cluster mode the event bus listener): NOT_SERVING while any one
is down.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from a2a_grpc.core._background import Background

__all__ = ["HealthGate", "StoreHealth", "ping"]

log = logging.getLogger("a2a_grpc.health")


async def ping(store: Any) -> None:
    """Raises when ``store``'s database does not answer (returns at once for
    a store without one)."""
    engine = getattr(store, "engine", None)
    if engine is None:
        return
    from sqlalchemy import text

    async with engine.connect() as conn:
        await conn.execute(text("SELECT 1"))


class StoreHealth:
    """Watches ``store`` and calls ``report(True/False)`` when it starts or
    stops answering (see the module docstring)."""

    def __init__(
        self,
        store: Any,
        report: Callable[[bool], Awaitable[None]],
        *,
        interval_seconds: float = 5.0,
        timeout_seconds: float = 2.0,
    ) -> None:
        self.store = store
        self.report = report
        self.interval_seconds = interval_seconds
        self.timeout_seconds = timeout_seconds
        self.serving = True
        self._background = Background(self._run, "a2a-store-health")

    def start(self) -> None:
        """Starts watching (idempotent); the store is taken as answering."""
        self._background.start()

    async def stop(self) -> None:
        """Stops watching."""
        await self._background.stop()

    async def check(self) -> bool:
        """Pings once; reports and logs a change. Whether the store answered."""
        try:
            async with asyncio.timeout(self.timeout_seconds):
                await ping(self.store)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if self.serving:
                log.warning("health: the store does not answer (%s): NOT_SERVING", type(exc).__name__)
                self.serving = False
                await self.report(False)
            return False
        if not self.serving:
            log.info("health: the store answers again: SERVING")
            self.serving = True
            await self.report(True)
        return True

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_seconds)
            await self.check()


class HealthGate:
    """SERVING (``report(True)``) while no part is down; NOT_SERVING
    (``report(False)``) while any one is."""

    def __init__(self, report: Callable[[bool], Awaitable[None]]) -> None:
        self.report = report
        #: The parts down now.
        self.down: set[str] = set()

    @property
    def serving(self) -> bool:
        return not self.down

    def reporter(self, part: str) -> Callable[[bool], Awaitable[None]]:
        """The ``report(up)`` callback of ``part`` (a name: "store", "bus")."""

        async def report(up: bool) -> None:
            before = self.serving
            if up:
                self.down.discard(part)
            else:
                self.down.add(part)
            if self.serving != before:
                await self.report(self.serving)

        return report
