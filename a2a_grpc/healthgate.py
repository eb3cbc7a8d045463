"""One health answer from several watched parts (issue 12, item 8).

The server is SERVING only while every part it depends on is up: the store
(:class:`~a2a_grpc.store.health.StoreHealth`) and, in cluster mode, the event
bus listener (:class:`~a2a_grpc.cluster.bus.EventRelay`). Each part reports
through its own :meth:`HealthGate.reporter`; ``report(serving)`` is called
when the combined answer changes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

__all__ = ["HealthGate"]

Report = Callable[[bool], Awaitable[None]]


class HealthGate:
    """SERVING (``report(True)``) while no part is down; NOT_SERVING
    (``report(False)``) while any one is."""

    def __init__(self, report: Report) -> None:
        self.report = report
        #: The parts down now.
        self.down: set[str] = set()

    @property
    def serving(self) -> bool:
        return not self.down

    def reporter(self, part: str) -> Report:
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
