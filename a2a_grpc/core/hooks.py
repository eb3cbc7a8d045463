"""The hooks the kernel calls at the moments an operator cares about.

:class:`Observer` is a set of small synchronous hooks with do-nothing
defaults. The executions (:mod:`a2a_grpc.core._execution`), the drive loop's
writer (:mod:`a2a_grpc.core._drive`), the event bus
(:mod:`a2a_grpc.core._events`) and the push dispatcher call them; features
(telemetry, the audit log) implement them and hand one observer to the
composition root. Nothing here imports a telemetry library.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, ExitStack, nullcontext
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from a2a_grpc.core.ports import OutboxEntry

__all__ = ["NO_OBSERVER", "Observer", "Observers"]


#: The context manager of a hook that wraps nothing (reusable: one for all calls).
_NOTHING: AbstractContextManager[Any] = nullcontext()


class Observer:
    """Hooks the core calls; every one does nothing here. Implementations
    override the ones they need. Hooks are synchronous, must be cheap, and
    must never raise (the core does not guard them)."""

    def execution(self, task_id: str, context_id: str) -> AbstractContextManager[Any]:
        """Wraps one execution of the agent (its drive loop, from start to
        end) for ``task_id``: a context manager entered in the execution's
        own asyncio task."""
        return _NOTHING

    def task_created(self, state: int) -> None:
        """A task was stored for the first time, in ``state`` (a
        ``pb.TaskState`` number)."""

    def task_transition(self, state: int) -> None:
        """A stored task moved to ``state`` (a different state than it had)."""

    def task_written(self, task: Any, owner: Any, was: int | None, event: Any) -> None:
        """``task`` (a ``pb.Task`` of ``owner``, an ``Owner``) was stored:
        created when ``was`` is None, else updated from state ``was`` by
        ``event`` (the ``pb.StreamResponse`` of the change, None: a snapshot).
        The audit log (:mod:`a2a_grpc.auth._audit`) hears every write here."""

    def subscriber_lagged(self) -> None:
        """A stream subscriber fell too far behind and was closed
        (RESOURCE_EXHAUSTED)."""

    def trace_context(self) -> str:
        """The W3C ``traceparent`` of the current span, stored with the push
        notifications an update writes ("" when not traced)."""
        return ""

    def push_delivery(self, entry: OutboxEntry, headers: dict[str, str]) -> AbstractContextManager[Any]:
        """Wraps one webhook POST of ``entry``; may add to the request
        ``headers`` (e.g. ``traceparent``) before it is sent."""
        return nullcontext()

    def push_response(self, status: int) -> None:
        """The webhook answered HTTP ``status`` (called inside :meth:`push_delivery`)."""

    def push_outcome(self, outcome: str) -> None:
        """A push notification attempt ended: ``delivered``, ``retried``
        (another attempt is scheduled), ``dead`` (a dead letter was added)
        or ``dropped`` (its config no longer exists)."""


#: The observer the core uses when telemetry is off.
NO_OBSERVER = Observer()


class Observers(Observer):
    """Several observers as one: each hook calls all of them in order."""

    def __init__(self, *observers: Observer) -> None:
        self.observers = observers

    def execution(self, task_id: str, context_id: str) -> AbstractContextManager[Any]:
        stack = ExitStack()
        for o in self.observers:
            stack.enter_context(o.execution(task_id, context_id))
        return stack

    def task_created(self, state: int) -> None:
        for o in self.observers:
            o.task_created(state)

    def task_transition(self, state: int) -> None:
        for o in self.observers:
            o.task_transition(state)

    def task_written(self, task: Any, owner: Any, was: int | None, event: Any) -> None:
        for o in self.observers:
            o.task_written(task, owner, was, event)

    def subscriber_lagged(self) -> None:
        for o in self.observers:
            o.subscriber_lagged()

    def trace_context(self) -> str:
        return next((t for t in (o.trace_context() for o in self.observers) if t), "")

    def push_delivery(self, entry: OutboxEntry, headers: dict[str, str]) -> AbstractContextManager[Any]:
        stack = ExitStack()
        for o in self.observers:
            stack.enter_context(o.push_delivery(entry, headers))
        return stack

    def push_response(self, status: int) -> None:
        for o in self.observers:
            o.push_response(status)

    def push_outcome(self, outcome: str) -> None:
        for o in self.observers:
            o.push_outcome(outcome)
