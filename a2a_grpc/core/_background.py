"""One background coroutine with an idempotent start and a stop that waits.

The registry's health checker, the store health watcher and the retention
worker each run one loop for their lifetime; :class:`Background` is the
start/stop they share.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

__all__ = ["Background"]


class Background:
    """Runs ``body()`` as one asyncio task named ``name`` between
    :meth:`start` and :meth:`stop`."""

    def __init__(self, body: Callable[[], Coroutine[Any, Any, None]], name: str) -> None:
        self._body = body
        self._name = name
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        """Whether the task was started and has not been stopped."""
        return self._task is not None

    def start(self) -> None:
        """Starts the task in the running loop; a second call does nothing."""
        if self._task is None:
            self._task = asyncio.create_task(self._body(), name=self._name)

    async def stop(self) -> None:
        """Cancels the task and waits for it to end (its exception, if it
        ended with one, is dropped: the body logs its own failures)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
