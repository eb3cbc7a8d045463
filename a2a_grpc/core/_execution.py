"""Executions: the runs of the agent in this process, at most one per task.

An *execution* is one run of the agent's ``execute`` generator for one
message, in its own asyncio task so that a caller who disconnects does not
stop it (the drive loop that applies its events is :mod:`a2a_grpc.core._drive`).
:class:`Executions` is the running map, keyed by the task's owner and id
(:data:`~a2a_grpc.core.ports.TaskKey`: a caller never reaches another
owner's execution, whatever id it names), and its four operations:

- :meth:`~Executions.start` refuses a task that already has an execution
  ("task is busy", UNSUPPORTED_OPERATION; docs/decisions.md) and runs a new one;
- :meth:`~Executions.get` finds a task's execution;
- :meth:`~Executions.interrupt` stops one (CancelTask, shutdown);
- :meth:`~Executions.close` stops them all (server shutdown).

This is the seam cluster mode backs with a lease: ``start`` is where a replica
takes the task's lease, and ``get``/``interrupt`` where it asks the holder.

An :class:`Execution` is four parts, each written by one party: the frozen
:class:`Request` (what the caller asked), its :class:`Progress` (what the
drive loop stored: only :mod:`a2a_grpc.core._drive` and its fast paths write
it), its :class:`Lease` (cluster mode: only the cluster writes it) and its
:class:`Settled` signals; the run itself (runner, cancel reason, stream) is
this module's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import NamedTuple

from a2a_grpc.context import Owner
from a2a_grpc.core import _fastpath as fastpath
from a2a_grpc.core._events import EventBus, Subscription
from a2a_grpc.core._executor import ExecutorContext
from a2a_grpc.core.hooks import NO_OBSERVER, Observer
from a2a_grpc.core.ports import V1_DIALECT, Fence, StoredTask, TaskKey
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import pb

__all__ = ["Execution", "Executions", "Lease", "Progress", "Request", "Settled", "busy_error"]


def busy_error(task_id: str) -> A2AError:
    """The "task is busy" refusal of a message to a task that has an
    execution (UNSUPPORTED_OPERATION, spec §3.1.1; cluster-wide in cluster mode)."""
    return A2AError(
        ErrorCode.UNSUPPORTED_OPERATION,
        f"task {task_id} is busy: it is still working on a previous message",
        metadata={"taskId": task_id},
    )


class Request(NamedTuple):
    """What an execution runs for; never changes. ``message`` is the user's
    (its task and context ids set); ``push_config`` the webhook given with it
    (its task id, tenant and id filled in), stored by the execution;
    ``dialect`` the caller's, recorded with that config."""

    task_id: str
    context_id: str
    owner: Owner
    message: pb.Message
    push_config: pb.TaskPushNotificationConfig | None = None
    dialect: str = V1_DIALECT


@dataclass(slots=True)
class Progress:
    """What the drive loop has made of the execution so far (written by
    :mod:`a2a_grpc.core._drive` alone): ``current`` the task as last stored,
    ``reply`` the agent's direct Message, ``error`` what the caller gets when
    nothing was stored; ``push_configs`` the task's webhooks as the loop
    writes them (None: not read yet); ``started`` once the loop runs,
    ``applying`` while it applies an event (see :meth:`Executions.interrupt`);
    ``size`` the (version, serialized size) of ``current`` when known (the
    fast paths remember it after an appended chunk; (0, 0): not known)."""

    current: StoredTask | None = None
    reply: pb.Message | None = None
    error: A2AError | None = None
    push_configs: list[pb.TaskPushNotificationConfig] | None = None
    started: bool = False
    applying: bool = False
    size: tuple[int, int] = (0, 0)


@dataclass(slots=True)
class Lease:
    """Cluster mode: the execution lease every write of the execution is
    fenced by, and whether its lease row exists (its terminal write drops
    it). Written by :mod:`a2a_grpc.cluster` alone."""

    fence: Fence
    held: bool = False


class Settled:
    """The execution's two moments a caller waits for: ``committed`` once the
    task exists (or a reply came, or the execution ended), ``settled`` once
    the caller may be answered (a terminal or interrupted task, or the end).

    Flags, and futures only for a caller that waits before they are set (an
    agent that answers at once has settled before its caller looks: two
    ``asyncio.Event`` per execution cost more than the whole wait)."""

    __slots__ = ("_waiting", "committed", "settled")

    def __init__(self) -> None:
        self.committed = False
        self.settled = False
        self._waiting: list[tuple[bool, asyncio.Future[None]]] | None = None

    def commit(self) -> None:
        """The task exists (or there will be none)."""
        if not self.committed:
            self.committed = True
            if self._waiting:
                self._wake()

    def settle(self) -> None:
        """The caller may be answered."""
        if not self.settled:
            self.settled = True
            if self._waiting:
                self._wake()

    def end(self) -> None:
        """The execution is over: both moments have come."""
        self.committed = self.settled = True
        if self._waiting:
            self._wake()

    def until_committed(self) -> Awaitable[None]:
        """Awaitable: done once ``committed``."""
        return self._until(False)

    def until_settled(self) -> Awaitable[None]:
        """Awaitable: done once ``settled``."""
        return self._until(True)

    def _until(self, settled: bool) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.settled if settled else self.committed:
            future.set_result(None)
        else:
            if self._waiting is None:
                self._waiting = []
            self._waiting.append((settled, future))
        return future

    def _wake(self) -> None:
        assert self._waiting is not None
        still = []
        for settled, future in self._waiting:
            if not (self.settled if settled else self.committed):
                still.append((settled, future))
            elif not future.done():
                future.set_result(None)
        self._waiting = still


class Execution:
    """One run of the agent for one message: its :class:`Request`,
    ``existing`` (the task the message continues, as the handler read it;
    None: a new task; written by the handler alone), and the parts described
    in the module docstring. ``key`` is the task's
    :data:`~a2a_grpc.core.ports.TaskKey`. (Written out, not a dataclass: it
    is built on every message.)"""

    __slots__ = (
        "cancel_reason",
        "existing",
        "key",
        "lease",
        "progress",
        "request",
        "runner",
        "signals",
        "stream",
    )

    def __init__(
        self, request: Request, existing: StoredTask | None = None, progress: Progress | None = None
    ) -> None:
        self.request = request
        self.key: TaskKey = (request.owner.tenant, request.owner.user, request.task_id)
        self.existing = existing
        self.progress = Progress() if progress is None else progress
        self.signals = Settled()
        self.lease: Lease | None = None
        self.runner: asyncio.Task[None] | None = None
        self.cancel_reason: str | None = None  # "cancel", "shutdown" or "timeout"
        self.stream: Subscription | None = None  # the SendStreamingMessage caller's subscription

    @property
    def task_id(self) -> str:
        """The task's id (``request.task_id``)."""
        return self.request.task_id

    @property
    def owner(self) -> Owner:
        """The task's owner (``request.owner``)."""
        return self.request.owner

    @property
    def fence(self) -> Fence | None:
        """The lease the execution's writes are fenced by (None: not leased)."""
        lease = self.lease
        return None if lease is None else lease.fence

    def settle(self) -> None:
        """Wakes a blocking SendMessage at a terminal or interrupted state.
        Not while the execution holds a lease (cluster mode: a terminal write
        drops it, an interrupted one does not): its caller is then answered
        once the execution ended and released it (``Executions`` ends the
        signals), so the next message to the task, on any replica, is never
        refused as busy by a lease still held."""
        lease = self.lease
        if lease is None or not lease.held:
            self.signals.settle()


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
        self._running: dict[TaskKey, Execution] = {}
        self.ended = 0
        self.closing = False
        self.observer = observer
        self.time_limit = time_limit

    def running_for(self, user: str) -> int:
        """How many executions of ``user``'s tasks run in this process."""
        return sum(1 for key in self._running if key[1] == user)

    def get(self, key: TaskKey) -> Execution | None:
        """The running execution of the task ``key``, if any."""
        return self._running.get(key)

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
        key = ex.key
        if key in self._running:
            raise busy_error(ex.request.task_id)
        self._running[key] = ex  # no await since the busy check: one execution per task
        try:
            ctx = await prepare()
        except BaseException:
            self._running.pop(key, None)
            raise
        if stream:
            ex.stream = self._bus.subscribe(key)
        name = f"a2a-task-{ex.request.task_id}"
        if fastpath.enabled:
            ex.runner = fastpath.run_eagerly(self._run(ex, ctx), name)
        else:
            ex.runner = asyncio.get_running_loop().create_task(self._run(ex, ctx), name=name)

    async def _run(self, ex: Execution, ctx: ExecutorContext) -> None:
        timer = None
        if self.time_limit is not None:
            timer = asyncio.get_running_loop().call_later(self.time_limit, self.interrupt, ex, "timeout")
        try:
            with self.observer.execution(ex.request.task_id, ex.request.context_id):
                await self._drive(ex, ctx)
        finally:
            if timer is not None:
                timer.cancel()
            self._running.pop(ex.key, None)
            self.ended += 1
            if not ex.signals.committed:
                # Nothing was stored: wake this task's streaming caller with the error.
                self._bus.publish(ex.key, 0, pb.StreamResponse(), last=True)
            ex.signals.end()

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
        progress = ex.progress
        if progress.started and not progress.applying and ex.runner is not None:
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
