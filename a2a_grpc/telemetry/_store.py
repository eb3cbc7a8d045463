"""Store operation latency: :class:`TimedStore` wraps any store.

Every coroutine of the store protocols (:mod:`a2a_grpc.core.ports`: task,
push-config and outbox operations) is timed and reported to a callback as
``(operation name, outcome, seconds)``; ``outcome`` is ``ok`` or the
exception's class name. The one task write door is reported as ``create``
for a creation (``TaskWrite.expected_version`` 0) and ``update`` otherwise.
Everything else (``open``, ``close``, attributes of the backend) passes
through untouched.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from a2a_grpc.core.ports import TaskWrite

__all__ = ["TIMED_OPERATIONS", "TimedStore"]

#: The operations timed: the methods of TaskStore, PushConfigStore and PushOutbox.
TIMED_OPERATIONS = frozenset(
    {
        "get",
        "update",
        "list_tasks",
        "put_push_config",
        "get_push_config",
        "list_push_configs",
        "delete_push_config",
        "count_push_configs",
        "get_push_target",
        "outbox_due",
        "outbox_mark",
        "outbox_count",
    }
)

Report = Callable[[str, str, float], None]


class TimedStore:
    """``store`` with each operation of :data:`TIMED_OPERATIONS` timed and
    reported to ``report(operation, outcome, seconds)``; it raises what the
    operation raises."""

    def __init__(self, store: Any, report: Report) -> None:
        self._inner = store
        self._report = report
        self._timed: dict[str, Callable[..., Awaitable[Any]]] = {}

    @property
    def inner(self) -> Any:
        """The wrapped store."""
        return self._inner

    @property
    def keeps_events(self) -> bool:
        """The wrapped store's (``TaskStore.keeps_events``)."""
        return bool(self._inner.keeps_events)

    def __getattr__(self, name: str) -> Any:
        if name not in TIMED_OPERATIONS:
            return getattr(self._inner, name)
        timed = self._timed.get(name)
        if timed is None:
            timed = self._timed[name] = self._wrap(name, getattr(self._inner, name))
        return timed

    def _wrap(self, name: str, operation: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        report = self._report
        write_door = name == "update"

        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            outcome = "ok"
            try:
                return await operation(*args, **kwargs)
            except BaseException as exc:
                outcome = type(exc).__name__
                raise
            finally:
                label = name
                if write_door and isinstance(args[0], TaskWrite) and args[0].expected_version == 0:
                    label = "create"
                report(label, outcome, time.perf_counter() - start)

        return timed
