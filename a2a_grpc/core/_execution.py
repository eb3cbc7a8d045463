"""Executions: the runs of the agent in this process, at most one per task.

An *execution* is one run of the agent's ``execute`` generator for one
message, in its own asyncio task so that a caller who disconnects does not
stop it (the drive loop that applies its events is :mod:`a2a_grpc.core._drive`).
:class:`Executions` is the running map and its four operations:

- :meth:`~Executions.start` refuses a task that already has an execution
  ("task is busy", UNSUPPORTED_OPERATION; design.md) and runs a new one;
- :meth:`~Executions.get` finds a task's execution;
- :meth:`~Executions.interrupt` stops one (CancelTask, shutdown);
- :meth:`~Executions.close` stops them all (server shutdown).

This is the seam cluster mode backs with a lease: ``start`` is where a replica
takes the task's lease, and ``get``/``interrupt`` where it asks the holder.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Coroutine, Generator
from dataclasses import dataclass, field
from typing import Any

from a2a_grpc.context import Owner
from a2a_grpc.core._events import EventBus, Subscription
from a2a_grpc.core._executor import ExecutorContext
from a2a_grpc.core.hooks import NO_OBSERVER, Observer
from a2a_grpc.core.ports import Fence, StoredTask
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb

__all__ = ["Execution", "Executions", "busy_error"]


def busy_error(task_id: str) -> A2AError:
    """The "task is busy" refusal of a message to a task that has an
    execution (UNSUPPORTED_OPERATION, spec §3.1.1; cluster-wide in cluster mode)."""
    return A2AError(
        ErrorCode.UNSUPPORTED_OPERATION,
        f"task {task_id} is busy: it is still working on a previous message",
        metadata={"taskId": task_id},
    )


@dataclass(eq=False, slots=True)
class Execution:
    """One run of the agent for one message, and what came of it so far.

    ``existing`` is the task the message continues (None: a new task);
    ``current`` the task as last stored by this execution; ``reply`` the
    agent's direct Message; ``error`` what the caller gets when nothing was
    stored. ``committed`` is set once the task exists (or the execution
    ended), ``settled`` once the execution is over.
    """

    task_id: str
    context_id: str
    owner: Owner
    message: pb.Message
    existing: StoredTask | None
    push_config: pb.TaskPushNotificationConfig | None
    current: StoredTask | None = None
    reply: pb.Message | None = None
    error: A2AError | None = None
    runner: asyncio.Task[None] | None = None
    committed: asyncio.Event = field(default_factory=asyncio.Event)
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    cancel_reason: str | None = None  # "cancel" or "shutdown"
    started: bool = False  # the drive loop is running (see Executions.interrupt)
    applying: bool = False  # the drive loop is applying an event: never cancel the runner then
    push_configs: list[pb.TaskPushNotificationConfig] | None = None
    push_dialect: str = "1.0"  # the caller's dialect, recorded with ``push_config``
    stream: Subscription | None = None  # the SendStreamingMessage caller's subscription
    fence: Fence | None = None  # cluster mode: the execution lease every write is fenced by
    lease_held: bool = False  # cluster mode: its lease row exists (its terminal write drops it)


#: Runs an execution to its end (``a2a_grpc.core._drive.Driver.drive``).
Drive = Callable[[Execution, ExecutorContext], Awaitable[None]]


class Executions:
    """The executions running in this process; at most one per task.

    ``drive`` runs one execution to its end; ``bus`` carries stream events.
    ``ended`` counts the executions ended so far, so that a caller who read a
    task before starting can tell whether it may have changed since.
    ``observer`` wraps each execution (spans, the active-executions gauge).
    ``time_limit``: seconds an execution may run before it is interrupted
    ("timeout": its task ends FAILED); None: no limit (a2a_grpc.auth._limits).
    """

    def __init__(
        self,
        drive: Drive,
        bus: EventBus,
        *,
        observer: Observer = NO_OBSERVER,
        time_limit: float | None = None,
    ) -> None:
        self._drive = drive
        self._bus = bus
        self._running: dict[str, Execution] = {}
        self.ended = 0
        self.closing = False
        self.observer = observer
        self.time_limit = time_limit

    def running_for(self, user: str) -> int:
        """How many executions of ``user``'s tasks run in this process."""
        return sum(1 for ex in self._running.values() if ex.owner.user == user)

    def get(self, task_id: str) -> Execution | None:
        """The task's running execution, if any."""
        return self._running.get(task_id)

    async def start(
        self, ex: Execution, prepare: Callable[[], Awaitable[ExecutorContext]], *, stream: bool
    ) -> None:
        """Reserves the task for ``ex``, awaits ``prepare`` (the agent's
        context) and runs the agent. With ``stream`` the execution's
        subscription exists before the agent runs. Raises
        UNSUPPORTED_OPERATION when the task already has an execution (spec
        §3.1.1), UNAVAILABLE once :meth:`close` began, and whatever ``prepare``
        raises (the task is free again)."""
        if self.closing:
            raise A2AError(ErrorCode.UNAVAILABLE, "server is shutting down")
        if ex.task_id in self._running:
            raise busy_error(ex.task_id)
        self._running[ex.task_id] = ex  # no await since the busy check: one execution per task
        try:
            ctx = await prepare()
        except BaseException:
            self._running.pop(ex.task_id, None)
            raise
        if stream:
            ex.stream = self._bus.subscribe(ex.task_id)
        ex.runner = _run_eagerly(self._run(ex, ctx), f"a2a-task-{ex.task_id}")

    async def _run(self, ex: Execution, ctx: ExecutorContext) -> None:
        timer = None
        if self.time_limit is not None:
            timer = asyncio.get_running_loop().call_later(self.time_limit, self.interrupt, ex, "timeout")
        try:
            with self.observer.execution(ex.task_id, ex.context_id):
                await self._drive(ex, ctx)
        finally:
            if timer is not None:
                timer.cancel()
            self._running.pop(ex.task_id, None)
            self.ended += 1
            if not ex.committed.is_set():
                # Nothing was stored: wake a streaming caller with the error.
                self._bus.publish(ex.task_id, 0, pb.StreamResponse(), last=True)
            ex.committed.set()
            ex.settled.set()

    async def cancel_elsewhere(self, stored: StoredTask, owner: Owner, grace_seconds: float) -> bool:
        """Cancels ``stored``'s execution if it runs in another process (cluster
        mode) and returns True once it ended or was forced to (the caller reads
        the task again); False when no other process runs it — as always here."""
        return False

    def interrupt(self, ex: Execution, reason: str) -> None:
        """Stops an execution; ``reason`` is "cancel", "shutdown" or "timeout".

        An asyncio task cancelled before its coroutine starts never runs it —
        not even its ``finally`` — which would leave the task busy forever and
        its caller waiting; such an execution is only flagged and stops itself
        when the drive loop starts. Cancelling is meant for the agent: while
        the drive loop applies an event the execution is only flagged too, and
        it stops itself once the event is fully applied (or rejected)."""
        ex.cancel_reason = reason
        if ex.started and not ex.applying and ex.runner is not None:
            ex.runner.cancel()

    async def close(self, grace_seconds: float = 0.0) -> None:
        """Refuses new executions (``closing``), lets running ones finish for
        up to ``grace_seconds``, then interrupts the rest ("shutdown": their
        tasks become FAILED) and waits up to 5 s for them to end."""
        self.closing = True
        runners = [ex.runner for ex in self._running.values() if ex.runner is not None]
        if runners and grace_seconds > 0:
            await asyncio.wait(runners, timeout=grace_seconds)
        for ex in list(self._running.values()):
            if ex.runner is not None and not ex.runner.done():
                self.interrupt(ex, ex.cancel_reason or "shutdown")
        if runners:
            await asyncio.wait(runners, timeout=5.0)


def _run_eagerly(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None] | None:
    """Runs ``coro``'s first step now, in a context of its own (as a task's
    step would run), and the rest, if it waits, in a task (named ``name``)
    that continues in that context: that task, or None when ``coro`` ended
    without waiting (an agent that answers at once on a store that never
    waits: no task, no extra turn of the event loop)."""
    context = contextvars.copy_context()
    try:
        waits_on = context.run(coro.send, None)
    except StopIteration:
        return None
    rest = _Begun(coro, waits_on)
    return asyncio.get_running_loop().create_task(rest, name=name, context=context)


_NOTHING: Any = object()


class _Begun(Coroutine[Any, Any, None]):
    """A coroutine whose first step ran (it waits on ``waits_on``), as the
    coroutine of a task: the task's first step hands ``waits_on`` to the
    event loop; a cancel that comes before it goes into the coroutine, at
    that wait, as it would have in a task that started it."""

    __slots__ = ("_coro", "_waits_on")

    def __init__(self, coro: Coroutine[Any, Any, None], waits_on: Any) -> None:
        self._coro = coro
        self._waits_on = waits_on

    def send(self, value: Any) -> Any:
        waits_on, self._waits_on = self._waits_on, _NOTHING
        return self._coro.send(value) if waits_on is _NOTHING else waits_on

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        self._waits_on = _NOTHING
        return self._coro.throw(typ if val is None else val)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, None]:
        raise TypeError("a begun execution is run by its task, not awaited")
