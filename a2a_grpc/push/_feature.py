"""Push delivery as a Feature of the server (:class:`Push`).

The handler gets the push sink (``A2AServer(..., push=...)``) in its
constructor; this feature runs the sink's delivery with the server: a
:class:`~a2a_grpc.push._dispatcher.PushDispatcher` starts with the server's
observer and every feature's push bodies (the legacy dialects'), and stops
before the store closes; another sink is started and stopped when it has
``start``/``stop`` coroutines.
"""

from __future__ import annotations

from typing import Any

from a2a_grpc.core.features import Feature, Kernel
from a2a_grpc.push._dispatcher import PushDispatcher

__all__ = ["Push"]


class Push(Feature):
    """Runs ``sink``'s delivery while the server runs."""

    def __init__(self, sink: Any) -> None:
        self.sink = sink

    async def start(self, kernel: Kernel) -> None:
        if isinstance(self.sink, PushDispatcher):
            await self.sink.start(observer=kernel.observer, bodies=kernel.push_bodies)
            return
        start = getattr(self.sink, "start", None)  # an embedder's own sink
        if start is not None:
            await start()

    async def stop(self) -> None:
        stop = getattr(self.sink, "stop", None)
        if stop is not None:
            await stop()
