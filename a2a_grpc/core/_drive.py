"""The drive loop: runs the agent's generator for one execution and applies
each event it yields to the stored task.

The plain path, in the order it runs: pull the agent's next event
(:meth:`Driver._run_agent`), apply it with
:func:`~a2a_grpc.protocol._taskupdate.apply_event` (the pure merge and its
rules), write the result through the store's one door
(:class:`~a2a_grpc.core.ports.TaskWrite`: a versioned write carrying its push
notifications, one transaction; :class:`TaskWriter`), then publish it to the
task's streams (:mod:`a2a_grpc.core._events`). The first event makes the task
exist (:meth:`Driver._open`). A write that loses a race reads the task again
and applies the *same event* to it, so another writer's change survives; a
task another writer made terminal (CancelTask) stops the execution. The loop
owns the execution's end: a task left active becomes FAILED
(INVALID_AGENT_RESPONSE), an interruption makes it CANCELED or FAILED.

The fast paths (several events in one write, the creation and the first
event in one write, applying in place when nobody reads the old task, the
eager first step) are :mod:`a2a_grpc.core._fastpath`, behind its one switch;
they store and publish exactly what this path does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence

from a2a_grpc.context import Owner
from a2a_grpc.core import _fastpath as fastpath
from a2a_grpc.core._events import EventBus
from a2a_grpc.core._execution import Execution, Progress
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.core._memtrim import release_after
from a2a_grpc.core.hooks import NO_OBSERVER, Observer
from a2a_grpc.core.ports import (
    LeaseLostError,
    OutboxEntry,
    PushConfigStore,
    StoredTask,
    TaskExistsError,
    TaskStore,
    TaskWrite,
    VersionConflictError,
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


class _Settled(Exception):
    """Internal: the execution ends here; another writer decided the task."""


class TaskWriter:
    """Writes tasks through the store's door with their push notifications
    (one transaction), and tells the observer.

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

    async def push_configs(self, owner: Owner, task_id: str) -> list[pb.TaskPushNotificationConfig]:
        """The task's webhooks; none while push delivery is off."""
        if self.wake is None:
            return []
        return await self.configs.list_push_configs(owner, task_id)

    async def refresh_push(self, ex: Execution) -> None:
        """A running execution picks up its task's webhooks as they now are
        (a config was created or deleted). Until the read returns, events
        still go to the previous set (a deleted config gets nothing: delivery
        looks each config up)."""
        if ex.progress.current is not None:
            ex.progress.push_configs = await self.push_configs(ex.owner, ex.task_id)

    def outbox(
        self,
        owner: Owner,
        task_id: str,
        configs: Sequence[pb.TaskPushNotificationConfig],
        version: int,
        event: pb.StreamResponse,
    ) -> list[OutboxEntry]:
        """One push notification per webhook for the event that made
        ``owner``'s task ``version``; the event id ``task:version`` is stable
        across retries."""
        if not configs or self.wake is None:
            return []
        payload = event.SerializeToString()
        event_id = f"{task_id}:{version}"
        trace = self.observer.trace_context()
        return [OutboxEntry(task_id, c.id, event_id, payload, trace, owner) for c in configs]

    async def write(self, write: TaskWrite, was: int = 0, tasks: Sequence[pb.Task] = ()) -> int:
        """Stores ``write`` (:meth:`TaskStore.update <a2a_grpc.core.ports.TaskStore.update>`)
        and returns the task's new version; raises what the store raises.
        ``was``: the state the task had (an update's change is reported to
        the observer); ``tasks``: the task after each of the write's last
        events, for the observer (default: the write's task; for a creation
        the first is the new task)."""
        version = await self.store.update(write)
        if write.outbox and self.wake is not None:
            self.wake()
        if self.observer is not NO_OBSERVER:  # (nobody to tell: no state to read)
            self._observe(write, was, tasks or (write.task,))
        return version

    def _observe(self, write: TaskWrite, was: int, tasks: Sequence[pb.Task]) -> None:
        """Tells the observer of the task created (a write at version 0) and
        of each task written, with the event that made it."""
        events = write.events[len(write.events) - len(tasks) :] if write.events else (None,) * len(tasks)
        owner, steps = write.owner, list(zip(tasks, events, strict=True))
        if write.expected_version == 0:
            created = steps[0][0]
            self.observer.task_created(created.status.state)
            self.observer.task_written(created, owner, None, None)
            was, steps = created.status.state, steps[1:]
        for after, out in steps:
            if after.status.state != was:
                self.observer.task_transition(after.status.state)
            self.observer.task_written(after, owner, was, out)
            was = after.status.state


class Driver:
    """Runs executions of ``executor``'s agent, writing through ``writer``."""

    def __init__(self, executor: AgentExecutor, writer: TaskWriter) -> None:
        self.executor = executor
        self.writer = writer
        self.store = writer.store
        self.bus = writer.bus

    async def drive(self, ex: Execution, ctx: ExecutorContext) -> None:
        """Runs the agent to its end and records the outcome in
        ``ex.progress``: the stored task (``current``), a direct ``reply``, or
        the ``error`` for the caller when nothing was stored. Never raises an
        agent's failure."""
        progress = ex.progress
        try:
            run = fastpath.run_agent(self, ex, ctx) if fastpath.enabled else self._run_agent(ex, ctx)
            if not await run:
                await self._check_end(ex)
        except asyncio.CancelledError:
            await self._stopped(ex)
        except _Settled:
            pass
        except A2AError as err:
            if progress.current is None:
                progress.error = err
            else:
                await self._fail(ex, err.code, err.message)
        except Exception as exc:  # an agent bug must not take the server down
            log.exception("agent failed on task %s", ex.task_id)
            text = f"the agent failed: {type(exc).__name__}"
            if progress.current is None:
                progress.error = A2AError(ErrorCode.INTERNAL, text)
            else:
                await self._fail(ex, ErrorCode.INTERNAL, text)
        finally:
            if progress.size[1]:
                release_after(progress.size[1])

    async def _run_agent(self, ex: Execution, ctx: ExecutorContext) -> bool:
        """Runs the agent, applying its events one by one; True when it
        stopped at a reply or a terminal task (False: its generator ended,
        see _check_end). An event is never applied halfway (see
        Executions.interrupt): a cancel that comes meanwhile wins once the
        event is stored and published."""
        agent = aiter(self.executor.execute(ctx))
        progress = ex.progress
        try:
            progress.started = True
            if ex.cancel_reason:  # interrupted before it could start
                raise asyncio.CancelledError
            async for event in agent:
                progress.applying = True
                try:
                    await self.apply(ex, event)
                except Exception:
                    if ex.cancel_reason:  # interrupted meanwhile: the interruption wins
                        raise asyncio.CancelledError from None
                    raise
                finally:
                    progress.applying = False
                if self.done(progress):
                    return True
                if ex.cancel_reason:
                    raise asyncio.CancelledError
            return False
        finally:
            await close_agent(agent)

    @staticmethod
    def done(progress: Progress) -> bool:
        """Whether the agent is done: it replied, or its task is terminal."""
        current = progress.current
        return progress.reply is not None or (current is not None and is_terminal(current.task.status.state))

    async def apply(self, ex: Execution, event: object) -> None:
        """Applies one agent event: a direct reply, or a task event stored and
        fanned out. Raises A2AError(INVALID_AGENT_RESPONSE) on a bad event."""
        progress, req = ex.progress, ex.request
        if progress.reply is not None:
            raise invalid("a direct Message reply must be the only event")
        if isinstance(event, pb.Message):
            has_task = progress.current is not None or ex.existing is not None
            progress.reply = direct_reply(event, req.context_id, has_task=has_task)
            ex.signals.commit()
            self.bus.publish(ex.key, 1, pb.StreamResponse(message=progress.reply), last=True)
            return
        if progress.current is None:
            first = check_event(event, req.task_id, req.context_id)
            await self._open(ex, first)
            if isinstance(first, pb.Task):
                return  # the Task event made the task (see open_task)
        await self.store_one(ex, event)

    async def _open(self, ex: Execution, first: TaskEvent) -> None:
        """The first event: stores the task it makes exist (a new one, or the
        interrupted task the message continues) and publishes its snapshot."""
        await (self._create(ex, first) if ex.existing is None else self._resume(ex, first))
        current = ex.progress.current
        assert current is not None
        ex.signals.commit()
        if self.bus.subscriber_count(ex.key):  # the snapshot is a copy: only for a listener
            self.bus.publish(ex.key, current.version, snapshot(current.task))

    async def _create(self, ex: Execution, first: TaskEvent) -> None:
        """Stores the new task the first event makes (see ``open_task``) and
        the webhook given with the message; the creation snapshot goes to it
        like any other state change."""
        req, progress = ex.request, ex.progress
        task = open_task(req.message, None, first)
        version = await self.write(ex, TaskWrite(task, req.owner, 0, fence=ex.fence))
        progress.current = StoredTask(task, version)
        if req.push_config is None:
            progress.push_configs = []  # a new task has no other webhook
            return
        await self.writer.configs.put_push_config(req.owner, req.push_config, dialect=req.dialect)
        progress.push_configs = [req.push_config]
        outbox = self.writer.outbox(
            req.owner, req.task_id, progress.push_configs, version + 1, pb.StreamResponse(task=task)
        )
        if outbox:
            write = TaskWrite(task, req.owner, version, (), outbox, ex.fence)
            progress.current = StoredTask(task, await self.write(ex, write, task.status.state))

    async def _resume(self, ex: Execution, first: TaskEvent) -> None:
        """Stores the message on the interrupted task it continues, which
        becomes active again (see ``open_task``). Raises
        UNSUPPORTED_OPERATION if the task became terminal meanwhile."""
        req, progress = ex.request, ex.progress
        for _attempt in range(3):
            stored = await self.store.get(req.task_id, req.owner)
            if stored is None:
                raise _Settled
            task = open_task(req.message, stored.task, first)
            if req.push_config is not None:
                await self.writer.configs.put_push_config(req.owner, req.push_config, dialect=req.dialect)
            progress.push_configs = await self.writer.push_configs(req.owner, req.task_id)
            outbox = self.writer.outbox(
                req.owner,
                req.task_id,
                progress.push_configs,
                stored.version + 1,
                pb.StreamResponse(task=task),
            )
            write = TaskWrite(task, req.owner, stored.version, (), outbox, ex.fence)
            try:
                version = await self.write(ex, write, stored.task.status.state)
            except VersionConflictError:
                continue  # another writer changed it: accept the message on the fresh task
            progress.current = StoredTask(task, version)
            return
        raise A2AError(
            ErrorCode.UNSUPPORTED_OPERATION, f"task {req.task_id} changed while the message was accepted"
        )

    async def store_one(self, ex: Execution, event: object) -> None:
        """Applies ``event`` to the stored task, writes the result with
        compare-and-swap and publishes it; raises the event's refusal. A lost
        race re-reads the task and applies the event again on top (another
        writer's change is kept); a lost race with a terminal writer
        (CancelTask) stops here."""
        req, progress = ex.request, ex.progress
        for _attempt in range(3):
            current = progress.current
            assert current is not None
            size = self.check_size(current.task, None, event)
            task, out = apply_event(current.task, event)
            chunk = event.artifact if isinstance(event, pb.TaskArtifactUpdateEvent) and event.append else None
            configs = progress.push_configs or ()
            outbox = self.writer.outbox(req.owner, req.task_id, configs, current.version + 1, out)
            write = TaskWrite(task, req.owner, current.version, (out,), outbox, ex.fence, chunk)
            try:
                version = await self.write(ex, write, current.task.status.state)
            except VersionConflictError:
                progress.current = await self.reread(ex)
                continue
            progress.current = StoredTask(task, version)
            if size and chunk is not None:
                progress.size = (version, size)
            self.publish(ex, version, (task,), (out,))
            return
        raise A2AError(ErrorCode.INTERNAL, f"task {req.task_id} kept changing under the execution")

    async def write(self, ex: Execution, write: TaskWrite, was: int = 0) -> int:
        """One task write of the execution (``TaskWriter.write``; raises
        what :meth:`refused` raises)."""
        try:
            return await self.writer.write(write, was)
        except (LeaseLostError, TaskExistsError) as exc:
            await self.refused(ex, exc)
            raise  # (refused always raises)

    async def refused(self, ex: Execution, exc: Exception) -> None:
        """Raises what a write's refusal means for the execution: a lost
        lease ends it here (_Settled: another replica took the task over, so
        this one must not write again); a creation whose id the owner
        already holds is INVALID_PARAMS (a client-chosen id, :func:`id_taken`)."""
        if isinstance(exc, LeaseLostError):
            await self._lease_lost(ex)
            raise _Settled from None
        raise id_taken(ex.task_id) from exc

    def publish(
        self, ex: Execution, version: int, tasks: Sequence[pb.Task], outs: Sequence[pb.StreamResponse]
    ) -> None:
        """Fans out ``outs``, the events that made the task versions up to
        ``version`` (``tasks``: the task after each), and wakes a blocking
        caller at a terminal or interrupted state."""
        final = tasks[-1].status.state
        if self.bus.subscriber_count(ex.key):  # (no listener: nothing to read the states for)
            # Only the last can be terminal (a terminal task takes no more
            # events), so the states before it are not read: a run of events
            # applied in place (see _fastpath) shares one task.
            first, last = version - len(outs) + 1, len(outs) - 1
            for i, out in enumerate(outs):
                self.bus.publish(ex.key, first + i, out, last=i == last and is_terminal(final))
        if is_final(final):
            ex.settle()

    async def _check_end(self, ex: Execution) -> None:
        """The agent's generator ended: it must have left a reply, or the task
        terminal or interrupted."""
        progress = ex.progress
        current = progress.current
        if progress.reply is None and current is not None and current.task.status.state in _ACTIVE:
            await self._fail(
                ex,
                ErrorCode.INVALID_AGENT_RESPONSE,
                "the agent ended its work without a terminal or interrupted state",
            )
        elif current is None and progress.reply is None:
            progress.error = A2AError(ErrorCode.INVALID_AGENT_RESPONSE, "the agent produced no response")

    async def _stopped(self, ex: Execution) -> None:
        """The execution was interrupted: its task ends CANCELED (CancelTask)
        or FAILED (shutdown, timeout); with no task, the caller gets why."""
        progress, reason = ex.progress, ex.cancel_reason
        if progress.current is not None and not is_terminal(progress.current.task.status.state):
            if reason == "cancel":
                await self._finish(ex, pb.TASK_STATE_CANCELED, "canceled at the client's request")
            elif reason == "timeout":
                await self._finish(ex, pb.TASK_STATE_FAILED, _TIMED_OUT)
            else:
                await self._finish(ex, pb.TASK_STATE_FAILED, "the server stopped while the task was working")
        elif progress.current is None and progress.reply is None:
            if reason == "cancel":
                progress.error = A2AError(
                    ErrorCode.UNSUPPORTED_OPERATION,
                    f"task {ex.task_id} was canceled before this message was processed",
                    metadata={"taskId": ex.task_id},
                )
            elif reason == "timeout":
                progress.error = A2AError(ErrorCode.DEADLINE_EXCEEDED, _TIMED_OUT)
            else:
                progress.error = A2AError(
                    ErrorCode.UNAVAILABLE, "the execution was stopped before it started"
                )

    async def _fail(self, ex: Execution, code: ErrorCode, text: str) -> None:
        """Makes the task FAILED, recording why (InvalidAgentResponse etc.)."""
        log.warning("task %s failed: %s: %s", ex.task_id, code.reason, text)
        await self._finish(ex, pb.TASK_STATE_FAILED, f"{code.reason}: {text}")

    async def _finish(self, ex: Execution, state: int, text: str) -> None:
        current = ex.progress.current
        assert current is not None
        if is_terminal(current.task.status.state):
            return
        req = ex.request
        status = pb.TaskStatus(state=state, timestamp=now_timestamp())  # type: ignore[arg-type]
        status.message.CopyFrom(
            pb.Message(
                message_id=new_id(),
                context_id=req.context_id,
                task_id=req.task_id,
                role=pb.ROLE_AGENT,
                parts=[pb.Part(text=text)],
            )
        )
        event = pb.TaskStatusUpdateEvent(task_id=req.task_id, context_id=req.context_id, status=status)
        # _Settled: someone else made the task terminal first (see store_one).
        with contextlib.suppress(A2AError, _Settled):
            await self.store_one(ex, event)

    async def _lease_lost(self, ex: Execution) -> None:
        """The execution's lease was taken over: the caller gets the task as
        the store now has it (or UNAVAILABLE when nothing was stored), and this
        process's streams of the task end with its current status."""
        log.warning("task %s: execution lease lost; this replica stops writing it", ex.task_id)
        progress = ex.progress
        fresh = await self.store.get(ex.task_id, ex.owner) if progress.current is not None else None
        if fresh is None:
            progress.error = A2AError(
                ErrorCode.UNAVAILABLE,
                f"task {ex.task_id}: this replica lost the execution's lease; another replica took it over",
                metadata={"taskId": ex.task_id},
            )
            return
        progress.current = fresh
        self.bus.publish(ex.key, fresh.version, status_event(fresh.task), last=True)

    def check_size(self, task: pb.Task, base: int | None, event: object) -> int:
        """The size of ``task`` serialized after an artifact update ``event``
        (0 for other events, or without a limit); raises RESOURCE_EXHAUSTED
        when it would exceed ``max_task_bytes`` (the task then ends FAILED
        saying so). ``base`` is ``task``'s own size when known (the fast
        paths remember it after a run of appended chunks: they cost their
        own sizes, ``ByteSize`` serializes)."""
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

    async def reread(self, ex: Execution) -> StoredTask:
        """The task as another writer left it; raises _Settled when that
        writer made it terminal (or it vanished)."""
        fresh = await self.store.get(ex.task_id, ex.owner)
        if fresh is None or is_terminal(fresh.task.status.state):
            if fresh is not None:
                ex.progress.current = fresh
                # Streams must still end with the state that won (a no-op if
                # its writer already published it).
                self.bus.publish(ex.key, fresh.version, status_event(fresh.task), last=True)
            raise _Settled
        return fresh


async def close_agent(agent: AsyncIterator[object]) -> None:
    """Closes the agent's generator; a failure on close is the agent's own."""
    aclose = getattr(agent, "aclose", None)
    if aclose is not None:
        try:  # noqa: SIM105 (not contextlib.suppress: it costs ~4k instructions per execution)
            await aclose()
        except (Exception, asyncio.CancelledError):
            pass


def id_taken(task_id: str) -> A2AError:
    """The error of a new task whose id its owner already holds: a
    client-chosen id (only the legacy dialects let clients choose: another
    owner's task of that id is no obstacle, docs/decisions.md) created twice
    at once, by two replicas."""
    return A2AError.invalid_params(
        FieldViolation("message.task_id", f"task id {task_id!r} is already in use")
    )
