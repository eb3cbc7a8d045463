"""RequestHandler: every A2A operation, transport-neutral, proto in / proto out.

The bindings (the gRPC servicer, and through it the HTTP gateway) call one
coroutine per operation with the request message and a
:class:`~a2a_grpc.context.CallContext`. All lifecycle rules live here (spec
§3, §9, §10 and design.md's decisions table); failures raise
:class:`~a2a_grpc.errors.A2AError`.

How a message is handled: the handler resolves the task and context ids,
starts an *execution* (one run of the agent's ``execute`` generator, in its own
asyncio task so a client that disconnects does not stop it) and applies each
event the agent yields to the stored task with a versioned update, then fans
it out to streams (:mod:`a2a_grpc.events`) and to the push outbox. A task has
at most one execution at a time.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from google.protobuf import empty_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from a2a_grpc.context import CallContext, Owner
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.events import EventBus, Subscription
from a2a_grpc.executor import AgentExecutor, ExecutorContext
from a2a_grpc.interceptors import require_push
from a2a_grpc.store.base import (
    ListQuery,
    OutboxEntry,
    StoredTask,
    TaskExistsError,
    TaskStore,
    VersionConflictError,
)
from a2a_grpc.types import is_final, is_terminal, new_id, now_timestamp, pb
from a2a_grpc.validation import check_id

__all__ = ["HandlerConfig", "PushSink", "RequestHandler"]

log = logging.getLogger("a2a_grpc.handler")

_ACTIVE = (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)


class PushSink(Protocol):
    """What the handler needs from push delivery (``a2a_grpc.push``)."""

    async def check_config(self, config: pb.TaskPushNotificationConfig) -> None:
        """Raises A2AError(INVALID_PARAMS) if the webhook may not be used."""

    def wake(self) -> None:
        """New outbox rows were committed."""


@dataclass(slots=True)
class HandlerConfig:
    """Server policy where the spec leaves room (design.md).

    ``strict_version``: a request without ``A2A-Version`` is version 0.3 (spec
    §3.6.2) and gets VERSION_NOT_SUPPORTED; when False (default) it is served as
    1.0. ``subscriber_buffer``: events a stream may lag before it is closed with
    RESOURCE_EXHAUSTED. ``cancel_grace_seconds``: how long CancelTask waits for
    the agent to stop. ``max_request_bytes``: larger requests are INVALID_PARAMS.
    """

    strict_version: bool = False
    supported_versions: frozenset[str] = frozenset({"1.0"})
    subscriber_buffer: int = 1024
    cancel_grace_seconds: float = 5.0
    max_request_bytes: int = 16 * 1024 * 1024
    list_default_page_size: int = 50
    list_max_page_size: int = 100
    push_max_configs_per_task: int = 10
    push_max_configs_per_owner: int = 1000


class _Settled(Exception):
    """Internal: the execution ended before committing anything."""


@dataclass(eq=False, slots=True)
class _Execution:
    """One run of the agent for one message."""

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
    started: bool = False  # _drive is running (see _interrupt)
    applying: bool = False  # _drive is inside _apply: never cancel the runner then (see _interrupt)
    push_configs: list[pb.TaskPushNotificationConfig] | None = None
    stream: Subscription | None = None  # the SendStreamingMessage caller's subscription


def _trim(task: pb.Task, history_length: int | None, *, include_artifacts: bool = True) -> pb.Task:
    """A copy of ``task`` with at most ``history_length`` recent messages
    (None: all; 0: none; spec §3.2.4) and, unless ``include_artifacts``, no
    artifacts."""
    out = pb.Task()
    out.CopyFrom(task)
    if history_length is not None and len(out.history) > history_length:
        keep = list(out.history)[len(out.history) - history_length :] if history_length else []
        del out.history[:]
        out.history.extend(keep)
    if not include_artifacts:
        del out.artifacts[:]
    return out


def _received_at(first: object) -> Timestamp:
    """When an execution's first event was made: the task is stored "at" that
    instant, so the status it is stored with never postdates the agent's first
    status update (timestamps of one task never go backwards)."""
    now = now_timestamp()
    if isinstance(first, pb.TaskStatusUpdateEvent) and first.status.HasField("timestamp"):
        ts = first.status.timestamp
        if (ts.seconds, ts.nanos) < (now.seconds, now.nanos):
            return ts
    return now


def _status_event(task: pb.Task) -> pb.StreamResponse:
    return pb.StreamResponse(
        status_update=pb.TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=task.status
        )
    )


class RequestHandler:
    """The transport-neutral A2A core; one coroutine per operation.

    ``card`` is the public Agent Card (capabilities decide which operations
    are offered: spec §3.3.4). ``extended_card`` answers GetExtendedAgentCard.
    ``push`` enables webhook delivery; without it, or when the card does not
    declare ``pushNotifications``, push operations answer
    PUSH_NOTIFICATION_NOT_SUPPORTED.
    """

    def __init__(
        self,
        executor: AgentExecutor,
        store: TaskStore,
        card: pb.AgentCard,
        *,
        config: HandlerConfig | None = None,
        extended_card: pb.AgentCard | None = None,
        push: PushSink | None = None,
    ) -> None:
        self.executor = executor
        self.store = store
        self.card = card
        self.extended_card = extended_card
        self.config = config or HandlerConfig()
        self.push = push
        self.bus = EventBus(buffer=self.config.subscriber_buffer)
        self._running: dict[str, _Execution] = {}
        self._ended = 0  # executions ended so far (see _start)
        self._closing = False

    # ------------------------------------------------------------------ checks

    async def _get_task(self, task_id: str, owner: Owner) -> StoredTask:
        stored = await self.store.get(task_id, owner)
        if stored is None:
            raise A2AError(
                ErrorCode.TASK_NOT_FOUND, f"task {task_id} not found", metadata={"taskId": task_id}
            )
        return stored

    # ---------------------------------------------------------------- messages

    async def _start(self, req: pb.SendMessageRequest, call: CallContext, *, stream: bool) -> _Execution:
        """Validates the message, resolves ids and starts an execution (spec
        §3.4, §9.3, §9.4). The caller's subscription, when ``stream``, exists
        before the agent runs."""
        if self._closing:
            raise A2AError(ErrorCode.UNAVAILABLE, "server is shutting down")
        msg = req.message
        owner = call.owner
        cfg = req.configuration
        push_config: pb.TaskPushNotificationConfig | None = None
        if cfg.HasField("task_push_notification_config"):
            require_push(self.card, self.push)
            push_config = pb.TaskPushNotificationConfig()
            push_config.CopyFrom(cfg.task_push_notification_config)
            assert self.push is not None
            try:
                await self.push.check_config(push_config)
            except A2AError as err:
                prefix = "configuration.task_push_notification_config"
                raise A2AError(
                    err.code,
                    err.message,
                    metadata=err.metadata,
                    field_violations=[
                        FieldViolation(f"{prefix}.{v.field}" if v.field else prefix, v.description)
                        for v in err.field_violations
                    ],
                ) from None
        existing: StoredTask | None = None
        ended = self._ended
        if msg.task_id:
            existing = await self._get_task(msg.task_id, owner)
            task = existing.task
            if msg.context_id and msg.context_id != task.context_id:
                raise A2AError.invalid_params(
                    FieldViolation(
                        "message.context_id",
                        f"context {msg.context_id} does not match task {task.id}'s context {task.context_id}",
                    )
                )
            _refuse_terminal(task)
            task_id, context_id = task.id, task.context_id
        else:
            task_id, context_id = new_id(), msg.context_id or new_id()
        if task_id in self._running:
            raise A2AError(
                ErrorCode.UNSUPPORTED_OPERATION,
                f"task {task_id} is busy: it is still working on a previous message",
                metadata={"taskId": task_id},
            )
        message = pb.Message()
        message.CopyFrom(msg)
        message.task_id, message.context_id = task_id, context_id
        if message.role == pb.ROLE_UNSPECIFIED:
            message.role = pb.ROLE_USER
        ex = _Execution(task_id, context_id, owner, message, existing, push_config)
        self._running[task_id] = ex  # no await since the busy check: one execution per task
        try:
            if existing is not None and self._ended != ended:
                # The previous execution of this task may have ended (terminal)
                # after the task was read: read it again before the agent runs.
                existing = ex.existing = await self._get_task(task_id, owner)
                _refuse_terminal(existing.task)
            related: list[pb.Task] = []
            for ref in dict.fromkeys(msg.reference_task_ids):
                if check_id(ref) is None:
                    found = await self.store.get(ref, owner)
                    if found is not None:
                        related.append(found.task)
            ctx = ExecutorContext(
                message=message,
                task_id=task_id,
                context_id=context_id,
                call=call,
                task=_trim(existing.task, None) if existing else None,
                accepted_output_modes=tuple(cfg.accepted_output_modes),
                related_tasks=tuple(related),
            )
        except BaseException:
            self._running.pop(task_id, None)
            raise
        if stream:
            ex.stream = self.bus.subscribe(task_id)
        ex.runner = asyncio.get_running_loop().create_task(self._drive(ex, ctx), name=f"a2a-task-{task_id}")
        return ex

    async def send_message(self, req: pb.SendMessageRequest, call: CallContext) -> pb.SendMessageResponse:
        """SendMessage (spec §3.1.1, §3.2.2): a direct Message or a Task.

        Blocking by default: returns once the task is terminal or interrupted,
        with all its artifacts; with ``configuration.return_immediately`` it
        returns as soon as the task exists. ``configuration.history_length``
        trims the returned history. Raises TASK_NOT_FOUND (unknown
        ``message.task_id``), INVALID_PARAMS (bad input, context mismatch),
        UNSUPPORTED_OPERATION (terminal or busy task), and whatever the agent
        raises before its first event (e.g. CONTENT_TYPE_NOT_SUPPORTED).
        """
        ex = await self._start(req, call, stream=False)
        cfg = req.configuration
        if cfg.return_immediately:
            await ex.committed.wait()
        else:
            await ex.settled.wait()
        if ex.error is not None and ex.current is None:
            raise ex.error
        if ex.reply is not None:
            return pb.SendMessageResponse(message=ex.reply)
        assert ex.current is not None
        hl = cfg.history_length if cfg.HasField("history_length") else None
        return pb.SendMessageResponse(task=_trim(ex.current.task, hl))

    async def send_streaming_message(
        self, req: pb.SendMessageRequest, call: CallContext
    ) -> AsyncIterator[pb.StreamResponse]:
        """SendStreamingMessage (spec §3.1.2): one Message, or the Task then
        its status and artifact updates, ending when the task is terminal or
        interrupted (design.md A2). Errors as :meth:`send_message`, plus
        UNSUPPORTED_OPERATION when the card does not declare streaming."""
        ex = await self._start(req, call, stream=True)
        sub = ex.stream
        assert sub is not None
        cfg = req.configuration
        hl = cfg.history_length if cfg.HasField("history_length") else None
        try:
            async for _version, event in sub:
                kind = event.WhichOneof("payload")
                if kind is None:  # the execution ended before storing anything
                    break
                if kind == "task" and hl is not None:
                    # historyLength bounds every Task returned (spec §3.2.4).
                    yield pb.StreamResponse(task=_trim(event.task, hl))
                else:
                    yield event
                if kind == "message":
                    return
                state = (
                    event.task.status.state
                    if kind == "task"
                    else event.status_update.status.state
                    if kind == "status_update"
                    else None
                )
                if state is not None and is_final(state):
                    return
            if ex.error is not None and ex.current is None:
                raise ex.error
        finally:
            sub.close()

    # --------------------------------------------------------------- execution

    async def _drive(self, ex: _Execution, ctx: ExecutorContext) -> None:
        """Runs the agent and applies its events; owns the execution's end."""
        agen = aiter(self.executor.execute(ctx))
        try:
            try:
                ex.started = True
                if ex.cancel_reason:  # interrupted before it could start
                    raise asyncio.CancelledError
                async for event in agen:
                    # _apply is never interrupted halfway (see _interrupt): a
                    # store write cut short may have committed without its
                    # event being published or ex.current updated.
                    ex.applying = True
                    try:
                        await self._apply(ex, event)
                    except Exception:
                        if ex.cancel_reason:  # interrupted meanwhile: the interruption wins
                            raise asyncio.CancelledError from None
                        raise
                    finally:
                        ex.applying = False
                    if ex.reply is not None or (ex.current and is_terminal(ex.current.task.status.state)):
                        break
                    if ex.cancel_reason:
                        raise asyncio.CancelledError
            finally:
                aclose = getattr(agen, "aclose", None)
                if aclose is not None:
                    with contextlib.suppress(Exception, asyncio.CancelledError):
                        await aclose()
            if ex.reply is None and ex.current is not None and ex.current.task.status.state in _ACTIVE:
                await self._fail(
                    ex,
                    ErrorCode.INVALID_AGENT_RESPONSE,
                    "the agent ended its work without a terminal or interrupted state",
                )
            elif ex.current is None and ex.reply is None:
                ex.error = A2AError(ErrorCode.INVALID_AGENT_RESPONSE, "the agent produced no response")
        except asyncio.CancelledError:
            if ex.current is not None and not is_terminal(ex.current.task.status.state):
                if ex.cancel_reason == "cancel":
                    await self._finish(ex, pb.TASK_STATE_CANCELED, "canceled at the client's request")
                else:
                    await self._finish(
                        ex, pb.TASK_STATE_FAILED, "the server stopped while the task was working"
                    )
            elif ex.current is None and ex.reply is None:
                if ex.cancel_reason == "cancel":
                    ex.error = A2AError(
                        ErrorCode.UNSUPPORTED_OPERATION,
                        f"task {ex.task_id} was canceled before this message was processed",
                        metadata={"taskId": ex.task_id},
                    )
                else:
                    ex.error = A2AError(ErrorCode.UNAVAILABLE, "the execution was stopped before it started")
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
            self._running.pop(ex.task_id, None)
            self._ended += 1
            if not ex.committed.is_set():
                # Nothing was stored: wake a streaming caller with the error.
                self.bus.publish(ex.task_id, 0, pb.StreamResponse(), last=True)
            ex.committed.set()
            ex.settled.set()

    def _interrupt(self, ex: _Execution, reason: str) -> None:
        """Stops an execution (CancelTask, shutdown). An asyncio task
        cancelled before its coroutine starts never runs it — not even its
        ``finally`` — which would leave the task busy forever and its caller
        waiting; such an execution is only flagged and stops itself when
        :meth:`_drive` starts. Cancelling is meant for the agent: while
        :meth:`_drive` applies an event the execution is only flagged too,
        and :meth:`_drive` stops itself once the event is fully applied (or
        rejected)."""
        ex.cancel_reason = reason
        if ex.started and not ex.applying and ex.runner is not None:
            ex.runner.cancel()

    async def _fail(self, ex: _Execution, code: ErrorCode, text: str) -> None:
        """Makes the task FAILED, recording why (InvalidAgentResponse etc.)."""
        log.warning("task %s failed: %s: %s", ex.task_id, code.reason, text)
        await self._finish(ex, pb.TASK_STATE_FAILED, f"{code.reason}: {text}")

    async def _finish(self, ex: _Execution, state: int, text: str) -> None:
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
            await self._apply(ex, event, force=True)

    def _invalid(self, text: str) -> A2AError:
        return A2AError(ErrorCode.INVALID_AGENT_RESPONSE, text)

    async def _apply(self, ex: _Execution, event: object, *, force: bool = False) -> None:
        """Validates one agent event and applies it to the task (store, bus,
        push outbox). Raises A2AError(INVALID_AGENT_RESPONSE) on a bad event."""
        if ex.reply is not None:
            raise self._invalid("a direct Message reply must be the only event")
        if isinstance(event, pb.Message):
            if ex.current is not None or ex.existing is not None:
                raise self._invalid("a Message may only answer a new interaction, not a task")
            reply = pb.Message()
            reply.CopyFrom(event)
            if reply.task_id:
                raise self._invalid("a direct Message reply must not carry a task id")
            if reply.context_id and reply.context_id != ex.context_id:
                raise self._invalid("the reply's contextId differs from the interaction's")
            reply.context_id = ex.context_id
            reply.role = pb.ROLE_AGENT
            if not reply.message_id:
                reply.message_id = new_id()
            if not reply.parts:
                raise self._invalid("the reply has no parts")
            ex.reply = reply
            ex.committed.set()
            self.bus.publish(ex.task_id, 1, pb.StreamResponse(message=reply), last=True)
            return
        if not isinstance(event, pb.Task | pb.TaskStatusUpdateEvent | pb.TaskArtifactUpdateEvent):
            raise self._invalid(f"unexpected event type {type(event).__name__}")
        if event.id if isinstance(event, pb.Task) else event.task_id:
            got = event.id if isinstance(event, pb.Task) else event.task_id
            if got != ex.task_id:
                raise self._invalid(f"event for task {got} in the execution of task {ex.task_id}")
        if event.context_id and event.context_id != ex.context_id:
            raise self._invalid(f"event contextId {event.context_id} differs from the task's {ex.context_id}")
        if ex.current is None:
            await self._commit(ex, event if isinstance(event, pb.Task) else None, _received_at(event))
            if isinstance(event, pb.Task):
                return
        assert ex.current is not None
        task = pb.Task()
        task.CopyFrom(ex.current.task)
        if is_terminal(task.status.state):
            raise self._invalid("the task is already terminal; no event may follow")
        out: pb.StreamResponse
        if isinstance(event, pb.TaskStatusUpdateEvent):
            if event.status.state == pb.TASK_STATE_UNSPECIFIED or (
                event.status.state not in pb.TaskState.values()
            ):
                raise self._invalid("a status update needs a valid state")
            status = pb.TaskStatus()
            status.CopyFrom(event.status)
            if not status.HasField("timestamp"):
                status.timestamp.CopyFrom(now_timestamp())
            if status.HasField("message"):
                self._own_message(ex, status.message)
                task.history.append(status.message)
            task.status.CopyFrom(status)
            upd = pb.TaskStatusUpdateEvent()
            upd.CopyFrom(event)
            upd.task_id, upd.context_id = ex.task_id, ex.context_id
            upd.status.CopyFrom(status)
            out = pb.StreamResponse(status_update=upd)
        elif isinstance(event, pb.TaskArtifactUpdateEvent):
            art = event.artifact
            if not art.artifact_id:
                raise self._invalid("an artifact needs an artifactId")
            if not art.parts:
                raise self._invalid(f"artifact {art.artifact_id} has no parts")
            for existing in task.artifacts:
                if existing.artifact_id == art.artifact_id:
                    if event.append:
                        existing.parts.extend(art.parts)
                        existing.extensions.extend(e for e in art.extensions if e not in existing.extensions)
                        if art.name:
                            existing.name = art.name
                        if art.description:
                            existing.description = art.description
                        if art.HasField("metadata"):
                            existing.metadata.MergeFrom(art.metadata)
                    else:
                        existing.CopyFrom(art)
                    break
            else:
                task.artifacts.append(art)
            upd_a = pb.TaskArtifactUpdateEvent()
            upd_a.CopyFrom(event)
            upd_a.task_id, upd_a.context_id = ex.task_id, ex.context_id
            out = pb.StreamResponse(artifact_update=upd_a)
        else:  # a full Task snapshot from the agent
            if event.status.state == pb.TASK_STATE_UNSPECIFIED:
                raise self._invalid("a Task event needs a status state")
            task.status.CopyFrom(event.status)
            if not task.status.HasField("timestamp"):
                task.status.timestamp.CopyFrom(now_timestamp())
            del task.artifacts[:]
            task.artifacts.extend(event.artifacts)
            if event.HasField("metadata"):
                task.metadata.CopyFrom(event.metadata)
            out = pb.StreamResponse(task=task)
        await self._store(ex, task, out)

    def _own_message(self, ex: _Execution, msg: pb.Message) -> None:
        msg.task_id, msg.context_id = ex.task_id, ex.context_id
        msg.role = pb.ROLE_AGENT
        if not msg.message_id:
            msg.message_id = new_id()

    async def _commit(self, ex: _Execution, first: pb.Task | None, at: Timestamp) -> None:
        """Stores the task when the execution's first event arrives: a new
        task is created (SUBMITTED, the message in its history); an existing
        one gets the message appended and becomes WORKING again (interrupted →
        active, spec §9.2). Its status is stamped ``at``."""
        if ex.existing is None:
            task = pb.Task(id=ex.task_id, context_id=ex.context_id)
            task.status.state = pb.TASK_STATE_SUBMITTED
            task.status.timestamp.CopyFrom(at)
            task.history.append(ex.message)
            if first is not None:
                if first.status.state != pb.TASK_STATE_UNSPECIFIED:
                    task.status.CopyFrom(first.status)
                    if not task.status.HasField("timestamp"):
                        task.status.timestamp.CopyFrom(now_timestamp())
                task.artifacts.extend(first.artifacts)
                for m in first.history:
                    if m.message_id != ex.message.message_id:
                        task.history.append(m)
                if first.HasField("metadata"):
                    task.metadata.CopyFrom(first.metadata)
            try:
                version = await self.store.create(task, ex.owner)
            except TaskExistsError as exc:  # a uuid4 collision: practically impossible
                raise A2AError(ErrorCode.INTERNAL, "task id collision") from exc
            ex.current = StoredTask(task, version)
            await self._save_inline_push_config(ex)
            ex.push_configs = [ex.push_config] if ex.push_config is not None else []
            outbox = self._outbox(ex, version + 1, pb.StreamResponse(task=task))
            if outbox:
                # The creation snapshot goes out like any other state change.
                version = await self.store.update(task, ex.owner, version, outbox=outbox)
                ex.current = StoredTask(task, version)
                self._wake_push()
        else:
            stored = await self.store.get(ex.task_id, ex.owner)
            if stored is None:
                raise _Settled
            task = pb.Task()
            task.CopyFrom(stored.task)
            if is_terminal(task.status.state):
                ex.error = A2AError(ErrorCode.UNSUPPORTED_OPERATION, f"task {task.id} became terminal")
                raise _Settled
            task.history.append(ex.message)
            task.status.Clear()
            # Interrupted → active again: the agent is working on the reply.
            task.status.state = pb.TASK_STATE_WORKING
            task.status.timestamp.CopyFrom(at)
            if first is not None and first.status.state != pb.TASK_STATE_UNSPECIFIED:
                task.status.CopyFrom(first.status)
                if not task.status.HasField("timestamp"):
                    task.status.timestamp.CopyFrom(now_timestamp())
            await self._save_inline_push_config(ex)
            ex.push_configs = await self._load_push_configs(ex)
            outbox = self._outbox(ex, stored.version + 1, pb.StreamResponse(task=task))
            try:
                version = await self.store.update(task, ex.owner, stored.version, outbox=outbox)
            except VersionConflictError:
                ex.error = A2AError(
                    ErrorCode.UNSUPPORTED_OPERATION, f"task {task.id} changed while the message was accepted"
                )
                raise _Settled from None
            if outbox:
                self._wake_push()
            ex.current = StoredTask(task, version)
        ex.committed.set()
        self.bus.publish(ex.task_id, ex.current.version, pb.StreamResponse(task=ex.current.task))

    async def _save_inline_push_config(self, ex: _Execution) -> None:
        """Stores the webhook given in SendMessageConfiguration for this task."""
        if ex.push_config is None:
            return
        ex.push_config.task_id = ex.task_id
        ex.push_config.tenant = ex.owner.tenant
        if not ex.push_config.id:
            ex.push_config.id = new_id()
        await self.store.put_push_config(ex.owner, ex.push_config)

    async def _push_configs(self, owner: Owner, task_id: str) -> list[pb.TaskPushNotificationConfig]:
        """The task's webhooks; none while push delivery is off."""
        if self.push is None or not self.card.capabilities.push_notifications:
            return []
        return await self.store.list_push_configs(owner, task_id)

    async def _load_push_configs(self, ex: _Execution) -> list[pb.TaskPushNotificationConfig]:
        return await self._push_configs(ex.owner, ex.task_id)

    def _outbox(self, ex: _Execution, version: int, event: pb.StreamResponse) -> list[OutboxEntry]:
        return self._outbox_entries(ex.task_id, ex.push_configs or (), version, event)

    def _outbox_entries(
        self,
        task_id: str,
        configs: Sequence[pb.TaskPushNotificationConfig],
        version: int,
        event: pb.StreamResponse,
    ) -> list[OutboxEntry]:
        """One push notification per webhook for the event that made the task
        ``version``; the event id ``task:version`` is stable across retries."""
        if not configs or self.push is None:
            return []
        payload = event.SerializeToString()
        event_id = f"{task_id}:{version}"
        return [
            OutboxEntry(task_id=task_id, config_id=c.id, event_id=event_id, payload=payload) for c in configs
        ]

    def _wake_push(self) -> None:
        if self.push is not None:
            self.push.wake()

    async def _store(self, ex: _Execution, task: pb.Task, event: pb.StreamResponse) -> None:
        """Writes the new task state with compare-and-swap and publishes the
        event. A lost race with a terminal writer (CancelTask) stops here."""
        assert ex.current is not None
        for _attempt in range(3):
            outbox = self._outbox(ex, ex.current.version + 1, event)
            try:
                version = await self.store.update(task, ex.owner, ex.current.version, outbox=outbox)
            except VersionConflictError:
                fresh = await self.store.get(ex.task_id, ex.owner)
                if fresh is None or is_terminal(fresh.task.status.state):
                    if fresh is not None:
                        ex.current = fresh
                        # Streams must still end with the state that won
                        # (a no-op if its writer already published it).
                        self.bus.publish(ex.task_id, fresh.version, _status_event(fresh.task), last=True)
                    raise _Settled from None
                # Someone else changed a non-terminal task: re-apply on top.
                ex.current = fresh
                continue
            if outbox:
                self._wake_push()
            ex.current = StoredTask(task, version)
            state = task.status.state
            self.bus.publish(ex.task_id, version, event, last=is_terminal(state))
            if is_final(state):
                ex.settled.set()
            return
        raise A2AError(ErrorCode.INTERNAL, f"task {ex.task_id} kept changing under the execution")

    # ------------------------------------------------------------ task queries

    async def get_task(self, req: pb.GetTaskRequest, call: CallContext) -> pb.Task:
        """GetTask (spec §3.1.3): the task, history trimmed to
        ``history_length``. Raises TASK_NOT_FOUND for a missing task or one
        the caller may not see; INVALID_PARAMS for bad input."""
        stored = await self._get_task(req.id, call.owner)
        return _trim(stored.task, req.history_length if req.HasField("history_length") else None)

    async def list_tasks(self, req: pb.ListTasksRequest, call: CallContext) -> pb.ListTasksResponse:
        """ListTasks (spec §3.1.4): the caller's tasks, newest status first.

        ``page_size`` unset or 0 means 50, above 100 means 100; the opaque
        ``page_token`` is bound to the filters (another query's token, or a
        malformed one, is INVALID_PARAMS). Artifacts are included only with
        ``include_artifacts``."""
        cfg = self.config
        size = (
            req.page_size if req.HasField("page_size") and req.page_size > 0 else cfg.list_default_page_size
        )
        size = min(size, cfg.list_max_page_size)
        after_ms = None
        if req.HasField("status_timestamp_after"):
            after_ms = req.status_timestamp_after.ToMilliseconds()
        fingerprint = hashlib.sha256(
            json.dumps([call.tenant, call.user, req.context_id, req.status, after_ms]).encode()
        ).hexdigest()[:16]
        cursor = _decode_cursor(req.page_token, fingerprint) if req.page_token else None
        page = await self.store.list_tasks(
            call.owner,
            ListQuery(
                context_id=req.context_id,
                state=req.status,
                status_timestamp_after_ms=after_ms,
                page_size=size,
                after=cursor,
            ),
        )
        hl = req.history_length if req.HasField("history_length") else None
        include = req.include_artifacts if req.HasField("include_artifacts") else False
        tasks = [_trim(t, hl, include_artifacts=include) for t in page.tasks]
        token = ""
        if page.has_more and page.tasks:
            last = page.tasks[-1]
            token = _encode_cursor((last.status.timestamp.ToMilliseconds(), last.id), fingerprint)
        return pb.ListTasksResponse(
            tasks=tasks, next_page_token=token, page_size=size, total_size=page.total_size
        )

    async def cancel_task(self, req: pb.CancelTaskRequest, call: CallContext) -> pb.Task:
        """CancelTask (spec §3.1.5): stops the running execution and makes the
        task CANCELED; returns the task. A task already CANCELED is returned
        again (design.md A6); other terminal states raise TASK_NOT_CANCELABLE;
        unknown tasks TASK_NOT_FOUND."""
        interrupted = False
        for _attempt in range(6):
            stored = await self._get_task(req.id, call.owner)
            state = stored.task.status.state
            if state == pb.TASK_STATE_CANCELED:
                return _trim(stored.task, None)
            if is_terminal(state):
                raise A2AError(
                    ErrorCode.TASK_NOT_CANCELABLE,
                    f"task {req.id} is {pb.TaskState.Name(state)} and cannot be canceled",
                    metadata={"taskId": req.id},
                )
            ex = self._running.get(req.id)
            if ex is not None and ex.runner is not None:
                if interrupted:
                    raise A2AError(
                        ErrorCode.TASK_NOT_CANCELABLE,
                        f"the agent did not stop task {req.id} within {self.config.cancel_grace_seconds} s",
                        metadata={"taskId": req.id},
                    )
                interrupted = True
                if ex.cancel_reason is None:
                    # Only the first canceller interrupts: cancelling again would
                    # cut short the execution's own CANCELED write.
                    self._interrupt(ex, "cancel")
                await asyncio.wait({ex.runner}, timeout=self.config.cancel_grace_seconds)
                continue
            # No execution (interrupted or orphaned task): cancel it here.
            task = pb.Task()
            task.CopyFrom(stored.task)
            task.status.Clear()
            task.status.state = pb.TASK_STATE_CANCELED
            task.status.timestamp.CopyFrom(now_timestamp())
            event = _status_event(task)
            configs = await self._push_configs(call.owner, task.id)
            outbox = self._outbox_entries(task.id, configs, stored.version + 1, event)
            try:
                version = await self.store.update(task, call.owner, stored.version, outbox=outbox)
            except VersionConflictError:
                continue
            if outbox:
                self._wake_push()
            self.bus.publish(task.id, version, event, last=True)
            return _trim(task, None)
        raise A2AError(ErrorCode.INTERNAL, f"task {req.id} kept changing while being canceled")

    async def subscribe_to_task(
        self, req: pb.SubscribeToTaskRequest, call: CallContext
    ) -> AsyncIterator[pb.StreamResponse]:
        """SubscribeToTask (spec §3.1.6): a snapshot of the task, then every
        update until it is terminal. Raises UNSUPPORTED_OPERATION for a
        terminal task (design.md A2) or without streaming; TASK_NOT_FOUND."""
        sub = self.bus.subscribe(req.id)
        try:
            stored = await self._get_task(req.id, call.owner)
            ex = self._running.get(req.id)
            if ex is not None and ex.current is not None and ex.current.version > stored.version:
                stored = ex.current
            if is_terminal(stored.task.status.state):
                raise A2AError(
                    ErrorCode.UNSUPPORTED_OPERATION,
                    f"task {req.id} is {pb.TaskState.Name(stored.task.status.state)}; "
                    "a terminal task cannot be subscribed to",
                    metadata={"taskId": req.id},
                )
            yield pb.StreamResponse(task=_trim(stored.task, None))
            async for version, event in sub:
                if version <= stored.version:
                    continue
                yield event
        finally:
            sub.close()

    # ------------------------------------------------------------------- push

    async def create_task_push_notification_config(
        self, req: pb.TaskPushNotificationConfig, call: CallContext
    ) -> pb.TaskPushNotificationConfig:
        """CreateTaskPushNotificationConfig (spec §3.1.7): stores the webhook
        for ``task_id`` (id generated when empty) and returns it. Raises
        PUSH_NOTIFICATION_NOT_SUPPORTED, TASK_NOT_FOUND, INVALID_PARAMS (bad or
        blocked URL, CR/LF in credentials), RESOURCE_EXHAUSTED (config limits)."""
        if not req.task_id:
            raise A2AError.invalid_params(FieldViolation("task_id", "is required"))
        await self._get_task(req.task_id, call.owner)
        config = pb.TaskPushNotificationConfig()
        config.CopyFrom(req)
        config.tenant = call.tenant
        if not config.id:
            config.id = new_id()
        assert self.push is not None
        await self.push.check_config(config)
        existing = await self.store.get_push_config(call.owner, config.task_id, config.id)
        if existing is None:
            if await self.store.count_push_configs(call.owner, config.task_id) >= (
                self.config.push_max_configs_per_task
            ):
                raise A2AError(
                    ErrorCode.RESOURCE_EXHAUSTED,
                    f"task {config.task_id} already has {self.config.push_max_configs_per_task} push configs",
                )
            if await self.store.count_push_configs(call.owner) >= self.config.push_max_configs_per_owner:
                raise A2AError(
                    ErrorCode.RESOURCE_EXHAUSTED,
                    f"the caller already has {self.config.push_max_configs_per_owner} push configs",
                )
        await self.store.put_push_config(call.owner, config)
        await self._refresh_push(config.task_id)
        return config

    async def _refresh_push(self, task_id: str) -> None:
        """A running execution picks up the task's webhooks as they now are.
        Until the read returns, events still go to the previous set (a
        deleted config gets nothing: delivery looks each config up)."""
        ex = self._running.get(task_id)
        if ex is not None and ex.current is not None:
            ex.push_configs = await self._load_push_configs(ex)

    async def get_task_push_notification_config(
        self, req: pb.GetTaskPushNotificationConfigRequest, call: CallContext
    ) -> pb.TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig (spec §3.1.8). Raises
        PUSH_NOTIFICATION_NOT_SUPPORTED, or TASK_NOT_FOUND when the task or
        the config does not exist for this caller."""
        await self._get_task(req.task_id, call.owner)
        config = await self.store.get_push_config(call.owner, req.task_id, req.id)
        if config is None:
            raise A2AError(
                ErrorCode.TASK_NOT_FOUND,
                f"push notification config {req.id} not found on task {req.task_id}",
                metadata={"taskId": req.task_id, "configId": req.id},
            )
        return config

    async def list_task_push_notification_configs(
        self, req: pb.ListTaskPushNotificationConfigsRequest, call: CallContext
    ) -> pb.ListTaskPushNotificationConfigsResponse:
        """ListTaskPushNotificationConfigs (spec §3.1.9), paginated by
        ``page_size`` (0: 100) and ``page_token``. Raises
        PUSH_NOTIFICATION_NOT_SUPPORTED, TASK_NOT_FOUND, INVALID_PARAMS."""
        await self._get_task(req.task_id, call.owner)
        size = min(req.page_size or 100, 100)
        after = None
        if req.page_token:
            raw = req.page_token.encode()
            try:
                # Strict: the lenient urlsafe_b64decode drops foreign bytes,
                # turning garbage into "" (= first page) instead of an error.
                after = base64.b64decode(raw + b"=" * (-len(raw) % 4), altchars=b"-_", validate=True).decode()
            except (ValueError, UnicodeDecodeError):
                after = ""
            if not after or check_id(after) is not None:
                raise A2AError.invalid_params(FieldViolation("page_token", "is not a valid page token"))
        configs = await self.store.list_push_configs(call.owner, req.task_id, limit=size + 1, after_id=after)
        token = ""
        if len(configs) > size:
            configs = configs[:size]
            token = base64.urlsafe_b64encode(configs[-1].id.encode()).decode().rstrip("=")
        return pb.ListTaskPushNotificationConfigsResponse(configs=configs, next_page_token=token)

    async def delete_task_push_notification_config(
        self, req: pb.DeleteTaskPushNotificationConfigRequest, call: CallContext
    ) -> empty_pb2.Empty:
        """DeleteTaskPushNotificationConfig (spec §3.1.10): idempotent; no
        notification is sent through the config afterwards. Raises
        PUSH_NOTIFICATION_NOT_SUPPORTED, TASK_NOT_FOUND (unknown task)."""
        await self._get_task(req.task_id, call.owner)
        await self.store.delete_push_config(call.owner, req.task_id, req.id)
        await self._refresh_push(req.task_id)
        return empty_pb2.Empty()

    # ------------------------------------------------------------------- card

    async def get_extended_agent_card(
        self, req: pb.GetExtendedAgentCardRequest, call: CallContext
    ) -> pb.AgentCard:
        """GetExtendedAgentCard (spec §3.1.11): the configured extended card.

        A card whose ``extendedAgentCard`` is false or absent never gets here:
        the capability gate answers UNSUPPORTED_OPERATION (spec §3.3.4, §13.3).
        A card that claims one while none is configured gets
        EXTENDED_AGENT_CARD_NOT_CONFIGURED."""
        if self.extended_card is None:
            raise A2AError(ErrorCode.EXTENDED_AGENT_CARD_NOT_CONFIGURED)
        return self.extended_card

    # --------------------------------------------------------------- lifecycle

    async def close(self, grace_seconds: float = 0.0) -> None:
        """Stops accepting messages, lets running executions finish for up to
        ``grace_seconds``, then stops the rest (their tasks become FAILED) and
        ends every stream."""
        self._closing = True
        runners = [ex.runner for ex in self._running.values() if ex.runner is not None]
        if runners and grace_seconds > 0:
            await asyncio.wait(runners, timeout=grace_seconds)
        for ex in list(self._running.values()):
            if ex.runner is not None and not ex.runner.done():
                self._interrupt(ex, ex.cancel_reason or "shutdown")
        if runners:
            await asyncio.wait(runners, timeout=5.0)
        self.bus.close_all()


def _refuse_terminal(task: pb.Task) -> None:
    """Raises UNSUPPORTED_OPERATION for a message to a terminal task (spec §3.1.1)."""
    if is_terminal(task.status.state):
        raise A2AError(
            ErrorCode.UNSUPPORTED_OPERATION,
            f"task {task.id} is {pb.TaskState.Name(task.status.state)}; a terminal task accepts no "
            "more messages (start a new task, referencing it in referenceTaskIds)",
            metadata={"taskId": task.id},
        )


def _encode_cursor(position: tuple[int, str], fingerprint: str) -> str:
    raw = json.dumps([position[0], position[1], fingerprint], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(token: str, fingerprint: str) -> tuple[int, str]:
    bad = A2AError.invalid_params(FieldViolation("page_token", "is not a page token issued for this query"))
    try:
        ts, task_id, fp = json.loads(base64.urlsafe_b64decode(token.encode() + b"=="))
    except (ValueError, TypeError):
        raise bad from None
    if fp != fingerprint or not isinstance(ts, int) or not isinstance(task_id, str):
        raise bad
    return ts, task_id
