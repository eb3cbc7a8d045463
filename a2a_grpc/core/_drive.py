"""The drive loop: runs the agent's generator for one execution and applies
each event it yields to the stored task.

Each event goes through :mod:`a2a_grpc.protocol._taskupdate` (the pure merge and its
rules), is stored with a versioned write together with its push notifications
(:class:`TaskWriter`: one transaction), then fans out to streams
(:mod:`a2a_grpc.core._events`). A write that loses a race reads the task again and
applies the *same event* to it, so another writer's change survives; a task
another writer made terminal (CancelTask) stops the execution. The loop owns
the execution's end: a task left active becomes FAILED
(INVALID_AGENT_RESPONSE), an interruption makes it CANCELED or FAILED.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import types
from collections.abc import AsyncIterator, Callable, Generator, Sequence
from typing import Any

from a2a_grpc.context import Owner
from a2a_grpc.core._events import EventBus
from a2a_grpc.core._execution import Execution
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.core._memtrim import release_after
from a2a_grpc.core.hooks import NO_OBSERVER, Observer
from a2a_grpc.core.ports import (
    Fence,
    LeaseLostError,
    OutboxEntry,
    PushConfigStore,
    StoredTask,
    TaskExistsError,
    TaskStore,
    VersionConflictError,
    put_push_config,
)
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.protocol._taskupdate import (
    TaskEvent,
    apply_event,
    check_event,
    direct_reply,
    invalid,
    open_task,
    snapshot,
    status_event,
)
from a2a_grpc.types import is_final, is_terminal, new_id, now_timestamp, pb

__all__ = ["Driver", "TaskWriter"]

log = logging.getLogger("a2a_grpc.drive")

#: The status message of a task whose execution ran past its time limit.
_TIMED_OUT = "DEADLINE_EXCEEDED: the task ran longer than the server's execution time limit"
_ACTIVE = (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
#: The most events one write carries (an agent that yields without end
#: still has its events stored as it goes).
_MOST_EVENTS = 64
#: An event applied: the task after it, its stream event, the task's size
#: when checked (see Driver._check_size; 0: not checked).
_Step = tuple[pb.Task, pb.StreamResponse, int]


#: The creation snapshot given to a store without an event log, which only
#: counts the events of a write (:attr:`TaskWriter.event_log`).
_UNLOGGED = pb.StreamResponse()


class _Settled(Exception):
    """Internal: the execution ends here; another writer decided the task."""


class TaskWriter:
    """Writes task updates with their push notifications in one transaction.

    ``wake`` tells push delivery that outbox rows were committed; None means
    push delivery is off (no webhooks are read, no rows written).
    ``observer`` hears of every task created and every state change written.
    """

    def __init__(
        self,
        store: TaskStore,
        configs: PushConfigStore,
        bus: EventBus,
        wake: Callable[[], None] | None,
        *,
        max_task_bytes: int = 0,
        observer: Observer = NO_OBSERVER,
    ) -> None:
        self.store = store
        self.configs = configs
        self.bus = bus
        self.wake = wake
        self.observer = observer
        #: Largest serialized task an execution may grow (0: unlimited).
        self.max_task_bytes = max_task_bytes
        #: Whether the store takes several events in one update (``events``):
        #: a store of the older protocol (``event``) gets one per write.
        self.folds = _takes_events(store.update)
        #: Whether the store keeps the events it is given (a task-event log);
        #: one that does not only counts them (see :meth:`create`).
        self.event_log = getattr(store, "event_log", True)

    async def push_configs(self, owner: Owner, task_id: str) -> list[pb.TaskPushNotificationConfig]:
        """The task's webhooks; none while push delivery is off."""
        if self.wake is None:
            return []
        return await self.configs.list_push_configs(owner, task_id)

    def outbox(
        self,
        task_id: str,
        configs: Sequence[pb.TaskPushNotificationConfig],
        version: int,
        event: pb.StreamResponse,
    ) -> list[OutboxEntry]:
        """One push notification per webhook for the event that made the task
        ``version``; the event id ``task:version`` is stable across retries."""
        if not configs or self.wake is None:
            return []
        payload = event.SerializeToString()
        event_id = f"{task_id}:{version}"
        trace = self.observer.trace_context()
        return [OutboxEntry(task_id, c.id, event_id, payload, trace) for c in configs]

    async def create(
        self,
        task: pb.Task,
        owner: Owner,
        fence: Fence | None = None,
        *,
        then: Sequence[tuple[pb.Task, pb.StreamResponse]] = (),
    ) -> int:
        """Stores the new ``task`` (given a ``fence``, while that execution
        lease holds); returns its version (1). ``then``: the events applied
        on top of it, each with the task after it, stored in the same write
        as versions 2, 3, ... (the event log keeps every event; the last task
        is stored). Raises TaskExistsError (LeaseLostError for a lost lease)."""
        extra: dict[str, Any] = {}
        if fence is not None:
            extra["fence"] = fence
        if then:
            # The creation snapshot is a copy of the task: made only for a store that keeps it.
            head = snapshot(task) if self.event_log else _UNLOGGED
            extra["events"] = (head, *(out for _, out in then))
        version = await self.store.create(then[-1][0] if then else task, owner, **extra)
        if self.observer is not NO_OBSERVER:  # (nobody to tell: no state to read)
            self.observer.task_created(task.status.state)
            self.observer.task_written(task, owner, None, None)
            self._observe(task, owner, then)
        return version

    async def write(
        self,
        task: pb.Task,
        owner: Owner,
        expected_version: int,
        outbox: list[OutboxEntry],
        fence: Fence | None = None,
        event: pb.StreamResponse | None = None,
        *,
        was: int | None = None,
        append: pb.Artifact | None = None,
        then: Sequence[tuple[pb.Task, pb.StreamResponse]] = (),
    ) -> int:
        """Stores ``task`` if it is still at ``expected_version`` (with the
        outbox rows and ``event``, the stream event of this change) and,
        given a ``fence``, while that execution lease holds; returns the new
        version. ``was``: the state the task had (a change is reported to the
        observer); ``append``: the update only appended that chunk (the store
        may write just it). ``then``: further events applied on top of
        ``task``, each with the task after it, stored in the same write
        (versions ``expected_version + 2``, ...; the outbox rows cover them
        all, in order; only the last task is stored). Raises
        VersionConflictError (LeaseLostError for a lost lease)."""
        extra: dict[str, Any] = {}
        if fence is not None:
            extra["fence"] = fence
        if event is not None:
            if self.folds:
                extra["events"] = (event, *(out for _, out in then))
            else:  # a store of the older protocol: one event per write
                assert not then, "this store takes one event per write"
                extra["event"] = event
        if append is not None:
            extra["append"] = append
        final = then[-1][0] if then else task
        version = await self.store.update(final, owner, expected_version, outbox=outbox, **extra)
        if outbox and self.wake is not None:
            self.wake()
        if self.observer is not NO_OBSERVER:  # (nobody to tell: no state to read)
            if was is not None and was != task.status.state:
                self.observer.task_transition(task.status.state)
            self.observer.task_written(task, owner, was, event)
            self._observe(task, owner, then)
        return version

    def _observe(
        self, task: pb.Task, owner: Owner, then: Sequence[tuple[pb.Task, pb.StreamResponse]]
    ) -> None:
        """Tells the observer of each event of ``then`` applied on top of ``task``."""
        for after, out in then:
            if after.status.state != task.status.state:
                self.observer.task_transition(after.status.state)
            self.observer.task_written(after, owner, task.status.state, out)
            task = after


class Driver:
    """Runs executions of ``executor``'s agent, writing through ``writer``."""

    def __init__(self, executor: AgentExecutor, writer: TaskWriter) -> None:
        self.executor = executor
        self.writer = writer
        self.store = writer.store
        self.bus = writer.bus
        #: Task id → (version, serialized size) of running executions' tasks.
        self._sizes: dict[str, tuple[int, int]] = {}

    async def drive(self, ex: Execution, ctx: ExecutorContext) -> None:
        """Runs the agent to its end and records the outcome in ``ex``: the
        stored task (``current``), a direct ``reply``, or the ``error`` for the
        caller when nothing was stored. Never raises an agent's failure."""
        try:
            if not await self._run_agent(ex, ctx):
                await self._check_end(ex)
        except asyncio.CancelledError:
            await self._stopped(ex)
        except _Settled:
            pass
        except A2AError as err:
            if ex.current is None:
                ex.error = err
            else:
                await self._fail(ex, err.code, err.message)
        except Exception as exc:  # an agent bug must not take the server down
            log.exception("agent failed on task %s", ex.task_id)
            if ex.current is None:
                ex.error = A2AError(ErrorCode.INTERNAL, f"the agent failed: {type(exc).__name__}")
            else:
                await self._fail(ex, ErrorCode.INTERNAL, f"the agent failed: {type(exc).__name__}")
        finally:
            size = self._sizes.pop(ex.task_id, (0, 0))[1]
            if size:
                release_after(size)

    async def _run_agent(self, ex: Execution, ctx: ExecutorContext) -> bool:
        """Runs the agent, applying its events; True when it stopped at a
        reply or a terminal task (False: its generator ended, see _check_end)."""
        pull = _Pull(aiter(self.executor.execute(ctx)))
        try:
            ex.started = True
            if ex.cancel_reason:  # interrupted before it could start
                raise asyncio.CancelledError
            while True:
                try:
                    event = await pull.next()
                except StopAsyncIteration:
                    return False
                events = self._ready(ex, pull, event)
                # An event is never applied halfway (see Executions.interrupt):
                # a store write cut short may have committed without its event
                # being published or ex.current updated.
                ex.applying = True
                try:
                    await self._apply_all(ex, events)
                except Exception:
                    if ex.cancel_reason:  # interrupted meanwhile: the interruption wins
                        raise asyncio.CancelledError from None
                    raise
                finally:
                    ex.applying = False
                if ex.reply is not None or (ex.current and is_terminal(ex.current.task.status.state)):
                    return True
                if ex.cancel_reason:
                    if not pull.waiting:
                        raise asyncio.CancelledError
                    # The agent is inside an await (see _ready): it is
                    # cancelled there, as when CancelTask comes while the
                    # loop waits on it.
                    asyncio.current_task().cancel()
        finally:
            await pull.aclose()

    def _ready(self, ex: Execution, pull: _Pull, event: object) -> list[object]:
        """``event`` and the events the agent yields right after it without
        waiting (a zero-time step of its generator, never waiting on it),
        to be stored in one write. Looked for after an artifact update only:
        a status update is where an agent says what it does next, and the
        code after it (often the start of slow work, or a signal that the
        task is WORKING) runs once it is stored, as always. So an artifact
        followed by the terminal status (the echo agent) is one write, and so
        is a run of chunks. No more than ``_MOST_EVENTS``, none once a cancel
        is requested, and one at a time for a store of the older protocol.
        The code after a looked-for artifact runs before that artifact is
        stored; if it waits, the agent is inside that wait meanwhile."""
        events = [event]
        while self.writer.folds and len(events) < _MOST_EVENTS and not ex.cancel_reason:
            if not isinstance(events[-1], pb.TaskArtifactUpdateEvent):
                break
            ready, after = pull.ready()
            if not ready:
                break
            events.append(after)
        return events

    async def _check_end(self, ex: Execution) -> None:
        """The agent's generator ended: it must have left a reply, or the task
        terminal or interrupted."""
        if ex.reply is None and ex.current is not None and ex.current.task.status.state in _ACTIVE:
            await self._fail(
                ex,
                ErrorCode.INVALID_AGENT_RESPONSE,
                "the agent ended its work without a terminal or interrupted state",
            )
        elif ex.current is None and ex.reply is None:
            ex.error = A2AError(ErrorCode.INVALID_AGENT_RESPONSE, "the agent produced no response")

    async def _stopped(self, ex: Execution) -> None:
        """The execution was interrupted: its task ends CANCELED (CancelTask)
        or FAILED (shutdown)."""
        if ex.current is not None and not is_terminal(ex.current.task.status.state):
            if ex.cancel_reason == "cancel":
                await self._finish(ex, pb.TASK_STATE_CANCELED, "canceled at the client's request")
            elif ex.cancel_reason == "timeout":
                await self._finish(ex, pb.TASK_STATE_FAILED, _TIMED_OUT)
            else:
                await self._finish(ex, pb.TASK_STATE_FAILED, "the server stopped while the task was working")
        elif ex.current is None and ex.reply is None:
            if ex.cancel_reason == "cancel":
                ex.error = A2AError(
                    ErrorCode.UNSUPPORTED_OPERATION,
                    f"task {ex.task_id} was canceled before this message was processed",
                    metadata={"taskId": ex.task_id},
                )
            elif ex.cancel_reason == "timeout":
                ex.error = A2AError(ErrorCode.DEADLINE_EXCEEDED, _TIMED_OUT)
            else:
                ex.error = A2AError(ErrorCode.UNAVAILABLE, "the execution was stopped before it started")

    async def _fail(self, ex: Execution, code: ErrorCode, text: str) -> None:
        """Makes the task FAILED, recording why (InvalidAgentResponse etc.)."""
        log.warning("task %s failed: %s: %s", ex.task_id, code.reason, text)
        await self._finish(ex, pb.TASK_STATE_FAILED, f"{code.reason}: {text}")

    async def _finish(self, ex: Execution, state: int, text: str) -> None:
        assert ex.current is not None
        if is_terminal(ex.current.task.status.state):
            return
        status = pb.TaskStatus(state=state, timestamp=now_timestamp())  # type: ignore[arg-type]
        status.message.CopyFrom(
            pb.Message(
                message_id=new_id(),
                context_id=ex.context_id,
                task_id=ex.task_id,
                role=pb.ROLE_AGENT,
                parts=[pb.Part(text=text)],
            )
        )
        event = pb.TaskStatusUpdateEvent(task_id=ex.task_id, context_id=ex.context_id, status=status)
        # _Settled: someone else made the task terminal first (see _store).
        with contextlib.suppress(A2AError, _Settled):
            await self._apply(ex, event)

    async def _apply_all(self, ex: Execution, events: Sequence[object]) -> None:
        """Applies the events the agent yielded together: as many as apply
        in one write, then the rest one at a time as :meth:`_apply` does (so
        an event refused there ends the task FAILED saying why, as always)."""
        done = await self._fold(ex, events) if len(events) > 1 else 0
        for event in events[done:]:
            if done and ex.cancel_reason:  # a cancel came during the write: it wins
                raise asyncio.CancelledError
            await self._apply(ex, event)
            done += 1

    async def _fold(self, ex: Execution, events: Sequence[object]) -> int:
        """Stores the longest run of ``events`` that applies, in one write;
        returns how many it stored (0: none, nothing written)."""
        if ex.reply is not None:
            return 0
        if ex.current is not None:
            try:
                return await self._store(ex, events)
            except A2AError:  # the first one is refused: _apply says so
                return 0
        if ex.existing is not None or ex.push_config is not None or isinstance(events[0], pb.Message):
            return 0
        try:
            first = check_event(events[0], ex.task_id, ex.context_id)
        except A2AError:
            return 0
        return 0 if isinstance(first, pb.Task) else await self._create_with(ex, first, events)

    async def _apply(self, ex: Execution, event: object) -> None:
        """Applies one agent event: a direct reply, or a task event stored and
        fanned out. Raises A2AError(INVALID_AGENT_RESPONSE) on a bad event."""
        if ex.reply is not None:
            raise invalid("a direct Message reply must be the only event")
        if isinstance(event, pb.Message):
            has_task = ex.current is not None or ex.existing is not None
            ex.reply = direct_reply(event, ex.context_id, has_task=has_task)
            ex.committed.set()
            self.bus.publish(ex.task_id, 1, pb.StreamResponse(message=ex.reply), last=True)
            return
        if ex.current is None:
            first = check_event(event, ex.task_id, ex.context_id)
            merge = ex.existing is None and ex.push_config is None and not isinstance(first, pb.Task)
            if merge and await self._create_with(ex, first, (event,)):
                return
            await (self._create(ex, first) if ex.existing is None else self._resume(ex, first))
            assert ex.current is not None
            ex.committed.set()
            if self.bus.subscriber_count(ex.task_id):  # the snapshot is a copy: only for a listener
                self.bus.publish(ex.task_id, ex.current.version, snapshot(ex.current.task))
            if isinstance(first, pb.Task):
                return
        await self._store(ex, (event,))

    async def _create(self, ex: Execution, first: TaskEvent) -> None:
        """Stores the new task the first event makes (see ``open_task``)."""
        task = open_task(ex.message, None, first)
        try:
            version = await self._create_task(task, ex)
        except TaskExistsError as exc:
            raise _id_taken(ex.task_id) from exc
        ex.current = StoredTask(task, version)
        if ex.push_config is None:
            ex.push_configs = []
            return  # no webhook (a new task has no other): no snapshot to send
        await self._save_inline_push_config(ex)
        ex.push_configs = [ex.push_config]
        outbox = self.writer.outbox(ex.task_id, ex.push_configs, version + 1, pb.StreamResponse(task=task))
        if outbox:
            # The creation snapshot goes out like any other state change.
            ex.current = StoredTask(
                task, await self._write(ex, task, version, outbox, None, task.status.state)
            )

    async def _create_with(self, ex: Execution, first: TaskEvent, events: Sequence[object]) -> int:
        """Stores the new task the first event makes together with the
        ``events`` (the first one first) applied to it, in one write
        (versions 1, 2, ...: what ``_create`` and ``_store`` write in
        several), and publishes them all; returns how many events it stored.
        0, with nothing written, when the first is refused (too large, or
        invalid on the task): the task must then exist first, to end FAILED
        saying why; a later refused event is left for the caller."""
        task = open_task(ex.message, None, first)
        # Nobody reads the task as it was before the events (no event log, no
        # observer, no listener): they change it in place, no copy per event.
        alone = not self.writer.event_log and self.writer.observer is NO_OBSERVER
        alone = alone and not self.bus.subscriber_count(ex.task_id)
        try:
            steps = self._applied(task, None, events, own=alone, fresh=alone)
        except A2AError:  # the two writes: the task exists, then the event fails it
            return 0
        try:
            version = await self.writer.create(task, ex.owner, ex.fence, then=[s[:2] for s in steps])
        except TaskExistsError as exc:
            raise _id_taken(ex.task_id) from exc
        except LeaseLostError:
            await self._lease_lost(ex)
            raise _Settled from None
        after, _out, size = steps[-1]
        ex.current = StoredTask(after, version)
        ex.push_configs = []
        if size:
            self._sizes[ex.task_id] = (version, size)
        ex.committed.set()
        state = after.status.state
        if not self.bus.subscriber_count(ex.task_id):
            pass  # no listener: nothing to publish
        elif alone:
            # A listener came during the write: the task as it was is gone, so
            # it gets the task as stored, as SubscribeToTask's snapshot.
            self.bus.publish(ex.task_id, version, snapshot(after), last=is_terminal(state))
        else:  # the snapshot is a copy: only for a listener
            self.bus.publish(ex.task_id, 1, snapshot(task))
            self._publish(ex, version, steps)
            return len(steps)  # _publish settled it if final
        if is_final(state):
            _settle(ex)
        return len(steps)

    def _publish(self, ex: Execution, version: int, steps: Sequence[_Step]) -> None:
        """Fans out the events of ``steps``, which made the task ``version``."""
        if self.bus.subscriber_count(ex.task_id):  # (no listener: nothing to read the states for)
            # Only the last can be terminal (a terminal task takes no more
            # events), so the states before it are not read: a run of events
            # applied in place (see _create_with) shares one task.
            final = steps[-1][0].status.state
            first, last = version - len(steps) + 1, len(steps) - 1
            for i, (_after, out, _size) in enumerate(steps):
                self.bus.publish(ex.task_id, first + i, out, last=i == last and is_terminal(final))
            if is_final(final):
                _settle(ex)
            return
        if is_final(steps[-1][0].status.state):
            _settle(ex)

    def _applied(
        self, task: pb.Task, base: int | None, events: Sequence[object], *, own: bool, fresh: bool = False
    ) -> list[_Step]:
        """``events`` applied to ``task`` in order, each as (the task after
        it, its stream event, the task's size when checked: see
        ``_check_size``; ``base`` is ``task``'s size when known), up to the
        first one refused; raises that refusal when it is the first. With
        ``own``, ``task`` may be changed in place by an appended chunk (no
        copy of what the task already holds); with ``fresh`` by every event
        (the steps then all hold ``task``: nobody reads it as it was)."""
        steps: list[_Step] = []
        for event in events:
            chunk = isinstance(event, pb.TaskArtifactUpdateEvent) and event.append
            try:
                size = self._check_size(task, base, event)
                after, out = apply_event(task, event, in_place=fresh or (chunk and own))
            except A2AError:
                if not steps:
                    raise
                break
            steps.append((after, out, size))
            task, base, own = after, size if chunk and size else None, True
        return steps

    async def _resume(self, ex: Execution, first: TaskEvent) -> None:
        """Stores the message on the interrupted task it continues, which
        becomes active again (see ``open_task``). Raises
        UNSUPPORTED_OPERATION if the task became terminal meanwhile."""
        for _attempt in range(3):
            stored = await self.store.get(ex.task_id, ex.owner)
            if stored is None:
                raise _Settled
            task = open_task(ex.message, stored.task, first)
            await self._save_inline_push_config(ex)
            ex.push_configs = await self.writer.push_configs(ex.owner, ex.task_id)
            outbox = self.writer.outbox(
                ex.task_id, ex.push_configs, stored.version + 1, pb.StreamResponse(task=task)
            )
            try:
                version = await self._write(ex, task, stored.version, outbox, None, stored.task.status.state)
            except VersionConflictError:
                continue  # another writer changed it: accept the message on the fresh task
            ex.current = StoredTask(task, version)
            return
        raise A2AError(
            ErrorCode.UNSUPPORTED_OPERATION, f"task {ex.task_id} changed while the message was accepted"
        )

    async def _save_inline_push_config(self, ex: Execution) -> None:
        """Stores the webhook given in SendMessageConfiguration for this task."""
        if ex.push_config is None:
            return
        ex.push_config.task_id = ex.task_id
        ex.push_config.tenant = ex.owner.tenant
        if not ex.push_config.id:
            ex.push_config.id = new_id()
        await put_push_config(self.writer.configs, ex.owner, ex.push_config, ex.push_dialect)

    async def _store(self, ex: Execution, events: Sequence[object]) -> int:
        """Applies ``events`` to the task in order, writes the result with
        compare-and-swap (one write for all) and publishes them; returns how
        many it stored: all up to the first one refused, whose refusal is
        raised when it is the first. A lost race re-reads the task and
        applies the events again on top (another writer's change is kept); a
        lost race with a terminal writer (CancelTask) stops here."""
        for _attempt in range(3):
            assert ex.current is not None
            was, expected = ex.current.task.status.state, ex.current.version
            known = self._sizes.get(ex.task_id)
            base = known[1] if known is not None and known[0] == expected else None
            # An appended chunk changes ex.current in place; a lost race
            # replaces ex.current anyway.
            steps = self._applied(ex.current.task, base, events, own=True)
            configs = ex.push_configs or ()
            outbox = [
                entry
                for i, (_task, out, _size) in enumerate(steps)
                for entry in self.writer.outbox(ex.task_id, configs, expected + 1 + i, out)
            ]
            head = events[0]
            chunk = None
            if len(steps) == 1 and isinstance(head, pb.TaskArtifactUpdateEvent) and head.append:
                chunk = head.artifact
            task, out, _size = steps[0]
            then = [s[:2] for s in steps[1:]]
            try:
                version = await self._write(ex, task, expected, outbox, out, was, append=chunk, then=then)
            except VersionConflictError:
                ex.current = await self._reread(ex)
                continue
            final, _out, size = steps[-1]
            ex.current = StoredTask(final, version)
            last = events[len(steps) - 1]
            if size and isinstance(last, pb.TaskArtifactUpdateEvent) and last.append:
                self._sizes[ex.task_id] = (version, size)
            self._publish(ex, version, steps)
            return len(steps)
        raise A2AError(ErrorCode.INTERNAL, f"task {ex.task_id} kept changing under the execution")

    async def _create_task(self, task: pb.Task, ex: Execution) -> int:
        """Inserts the new task (fenced by the execution's lease, if any)."""
        try:
            return await self.writer.create(task, ex.owner, ex.fence)
        except LeaseLostError:
            await self._lease_lost(ex)
            raise _Settled from None

    async def _write(
        self,
        ex: Execution,
        task: pb.Task,
        expected: int,
        outbox: list[OutboxEntry],
        event: pb.StreamResponse | None,
        was: int,
        *,
        append: pb.Artifact | None = None,
        then: Sequence[tuple[pb.Task, pb.StreamResponse]] = (),
    ) -> int:
        """One task write of the execution, fenced by its lease (if any);
        ``event`` is the stream event of the change (None: the task snapshot),
        ``was`` the state the task had, ``append`` the chunk it only appended,
        ``then`` the events applied on top in the same write.
        A lost lease ends the execution here (_Settled): another replica took
        the task over, so this one must not write again."""
        try:
            return await self.writer.write(
                task, ex.owner, expected, outbox, ex.fence, event, was=was, append=append, then=then
            )
        except LeaseLostError:
            await self._lease_lost(ex)
            raise _Settled from None

    async def _lease_lost(self, ex: Execution) -> None:
        """The execution's lease was taken over: the caller gets the task as
        the store now has it (or UNAVAILABLE when nothing was stored), and this
        process's streams of the task end with its current status."""
        log.warning("task %s: execution lease lost; this replica stops writing it", ex.task_id)
        fresh = await self.store.get(ex.task_id, ex.owner) if ex.current is not None else None
        if fresh is None:
            ex.error = A2AError(
                ErrorCode.UNAVAILABLE,
                f"task {ex.task_id}: this replica lost the execution's lease; another replica took it over",
                metadata={"taskId": ex.task_id},
            )
            return
        ex.current = fresh
        self.bus.publish(ex.task_id, fresh.version, status_event(fresh.task), last=True)

    def _check_size(self, task: pb.Task, base: int | None, event: object) -> int:
        """The size of ``task`` serialized after an artifact update ``event``
        (0 for other events, or without a limit); raises RESOURCE_EXHAUSTED
        when it would exceed ``max_task_bytes`` (the task then ends FAILED
        saying so). ``base`` is ``task``'s own size when known (the size
        remembered after a run of appended chunks: they cost their own sizes,
        ``ByteSize`` serializes)."""
        limit = self.writer.max_task_bytes
        if not limit or not isinstance(event, pb.TaskArtifactUpdateEvent):
            return 0
        size = (task.ByteSize() if base is None else base) + event.artifact.ByteSize() + 16  # tag and length
        if size > limit:
            raise A2AError(
                ErrorCode.RESOURCE_EXHAUSTED,
                f"artifact {event.artifact.artifact_id} would grow task {task.id} to {size} bytes, "
                f"over the server's maximum task size of {limit} bytes",
                metadata={"taskId": task.id, "limit": str(limit)},
            )
        return size

    async def _reread(self, ex: Execution) -> StoredTask:
        """The task as another writer left it; raises _Settled when that
        writer made it terminal (or it vanished)."""
        fresh = await self.store.get(ex.task_id, ex.owner)
        if fresh is None or is_terminal(fresh.task.status.state):
            if fresh is not None:
                ex.current = fresh
                # Streams must still end with the state that won (a no-op if
                # its writer already published it).
                self.bus.publish(ex.task_id, fresh.version, status_event(fresh.task), last=True)
            raise _Settled
        return fresh


class _Pull:
    """The agent's events, as ``async for`` takes them (:meth:`next`), plus
    :meth:`ready`: the next event only if the agent yields it without
    waiting. That runs the agent up to its next ``yield`` or its first real
    wait; in the second case :meth:`next` continues that step later, as an
    ``await`` would have (a cancel then reaches the agent inside that wait).
    The agent's end or failure met by ``ready`` is raised by ``next``."""

    __slots__ = ("_agen", "_error", "_step", "_waits_on")

    def __init__(self, agen: AsyncIterator[object]) -> None:
        self._agen = agen
        self._step: Generator[Any, Any, Any] | None = None
        self._waits_on: Any = None
        self._error: BaseException | None = None

    @property
    def waiting(self) -> bool:
        """The agent is inside a wait that :meth:`ready` began."""
        return self._step is not None

    def ready(self) -> tuple[bool, object]:
        """(True, the next event) when the agent yields it at once; else
        (False, None) and :meth:`next` gives what comes."""
        step = self._agen.__anext__().__await__()
        try:
            waits_on = step.send(None)
        except StopIteration as done:
            return True, done.value
        except (Exception, asyncio.CancelledError) as exc:  # the end, or the agent failed: next raises it
            self._error = exc
            return False, None
        self._step, self._waits_on = step, waits_on
        return False, None

    async def next(self) -> object:
        """The next event; raises StopAsyncIteration at the agent's end and
        whatever the agent raised."""
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        if self._step is None:
            return await anext(self._agen)
        step, waits_on = self._step, self._waits_on
        self._step = self._waits_on = None
        return await _resume(step, waits_on)

    async def aclose(self) -> None:
        """Closes the agent's generator (inside a wait: at that wait)."""
        if self._step is not None:
            step, self._step = self._step, None
            with contextlib.suppress(Exception, GeneratorExit, asyncio.CancelledError):
                step.throw(GeneratorExit)
        aclose = getattr(self._agen, "aclose", None)
        if aclose is not None:
            try:  # noqa: SIM105 (not contextlib.suppress: it costs ~4k instructions per execution)
                await aclose()
            except (Exception, asyncio.CancelledError):
                pass


@types.coroutine
def _resume(step: Generator[Any, Any, Any], waits_on: Any) -> Generator[Any, Any, Any]:
    """Continues an agent step that :meth:`_Pull.ready` began, exactly as
    ``await`` would have: what it waits on goes to the event loop, what the
    loop sends or throws (a cancel) goes back into it."""
    while True:
        try:
            sent = yield waits_on
        except BaseException as exc:
            try:
                waits_on = step.throw(exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                waits_on = step.send(sent)
            except StopIteration as done:
                return done.value


def _takes_events(update: Callable[..., Any]) -> bool:
    """Whether a store's ``update`` takes ``events`` (the current protocol)."""
    try:
        params = inspect.signature(update).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "events" or p.kind is p.VAR_KEYWORD for p in params)


def _id_taken(task_id: str) -> A2AError:
    """The error of a new task whose id another caller holds: a client-chosen
    id (legacy digest C3; a server-minted uuid4 practically never collides)."""
    return A2AError.invalid_params(
        FieldViolation("message.task_id", f"task id {task_id!r} is already in use")
    )


def _settle(ex: Execution) -> None:
    """Wakes a blocking SendMessage at a terminal or interrupted state. Not
    while the execution holds a lease (cluster mode: a terminal write drops
    it, an interrupted one does not): its caller is then answered
    once the execution ended and released it (``Executions`` sets
    ``settled``), so the next message to the task, on any replica, is never
    refused as busy by a lease still held."""
    if not ex.lease_held:
        ex.settled.set()
