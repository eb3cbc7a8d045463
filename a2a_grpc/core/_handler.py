"""RequestHandler: every A2A operation, transport-neutral, proto in / proto out.

The bindings (the gRPC servicer, and through it the HTTP gateway) call one
coroutine per operation with the request message and a
:class:`~a2a_grpc.context.CallContext`; failures raise
:class:`~a2a_grpc.errors.A2AError` (spec §3, §9, §10 and design.md's
decisions table).

How a message is handled: the handler resolves the task and context ids and
starts an *execution* (:mod:`a2a_grpc.core._execution`: one run of the agent, at most
one per task); the drive loop (:mod:`a2a_grpc.core._drive`) applies each event the
agent yields with the pure rules of :mod:`a2a_grpc.protocol._taskupdate`, stores it with
a versioned update and fans it out to streams (:mod:`a2a_grpc.core._events`) and to
the push outbox. The rules of push-config CRUD are :mod:`a2a_grpc.core._pushconfigs`',
page tokens :mod:`a2a_grpc.protocol._paging`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol

from google.protobuf import empty_pb2

from a2a_grpc.context import CallContext, Owner
from a2a_grpc.core._drive import Driver, TaskWriter
from a2a_grpc.core._events import EventBus
from a2a_grpc.core._execution import Execution, Executions, Request
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.core._interceptors import require_push
from a2a_grpc.core._pushconfigs import PushConfigs
from a2a_grpc.core.ports import (
    ListQuery,
    PushConfigStore,
    StoredTask,
    TaskStore,
    TaskWrite,
    VersionConflictError,
    task_key,
)
from a2a_grpc.errors import A2AError, ErrorCode, FieldViolation
from a2a_grpc.protocol import _paging as paging
from a2a_grpc.protocol._mediatypes import check_input_modes
from a2a_grpc.protocol._taskupdate import apply_event
from a2a_grpc.protocol._validation import check_id
from a2a_grpc.types import is_final, is_terminal, new_id, new_task_id, pb

__all__ = ["HandlerConfig", "HandlerStore", "PushSink", "RequestHandler", "push_wake"]


class PushSink(Protocol):
    """What the handler needs from push delivery (``a2a_grpc.push``)."""

    async def check_config(self, config: pb.TaskPushNotificationConfig) -> None:
        """Raises A2AError(INVALID_PARAMS) if the webhook may not be used."""

    def wake(self) -> None:
        """New outbox rows were committed."""


def push_wake(card: pb.AgentCard, push: PushSink | None) -> Callable[[], None] | None:
    """What the task writer calls once outbox rows are committed: the push
    sink's ``wake`` when there is a sink and ``card`` declares push
    notifications, else None (push delivery off: no webhooks are read)."""
    return push.wake if push is not None and card.capabilities.push_notifications else None


class HandlerStore(TaskStore, PushConfigStore, Protocol):
    """What the handler uses of a store: tasks and push configs (the outbox
    rows ride on :meth:`TaskStore.update`)."""


@dataclass(slots=True)
class HandlerConfig:
    """Server policy where the spec leaves room (design.md).

    ``strict_version``: a request without ``A2A-Version`` is version 0.3 (spec
    §3.6.2), so a v1.0 RPC without it gets VERSION_NOT_SUPPORTED (the default;
    the v0.3 methods are served by the dialect, :mod:`a2a_grpc.dialects`); when
    False (``--lenient-version``) it is served as 1.0. ``subscriber_buffer``: events a stream may lag before it is closed with
    RESOURCE_EXHAUSTED. ``cancel_grace_seconds``: how long CancelTask waits for
    the agent to stop. ``max_request_bytes``: larger requests are PAYLOAD_TOO_LARGE.
    """

    strict_version: bool = True
    supported_versions: frozenset[str] = frozenset({"1.0"})
    subscriber_buffer: int = 1024
    cancel_grace_seconds: float = 5.0
    max_request_bytes: int = 16 * 1024 * 1024
    list_default_page_size: int = 50
    list_max_page_size: int = 100
    push_max_configs_per_task: int = 10
    push_max_configs_per_owner: int = 1000
    #: Bytes of events a stream may lag before it is closed (issue 10).
    subscriber_buffer_bytes: int = 16 * 1024 * 1024
    #: Largest serialized task an agent may grow with artifacts (0: no
    #: limit); beyond it the task ends FAILED with RESOURCE_EXHAUSTED's text.
    max_task_bytes: int = 256 * 1024 * 1024


def _trim(
    task: pb.Task, history_length: int | None, *, include_artifacts: bool = True, into: pb.Task | None = None
) -> pb.Task:
    """A copy of ``task`` (made in ``into``, e.g. the field of a response
    message, when given) with at most ``history_length`` recent messages
    (None: all; 0: none; spec §3.2.4) and, unless ``include_artifacts``, no
    artifacts."""
    out = pb.Task() if into is None else into
    out.CopyFrom(task)
    if history_length is not None and len(out.history) > history_length:
        keep = list(out.history)[len(out.history) - history_length :] if history_length else []
        del out.history[:]
        out.history.extend(keep)
    if not include_artifacts:
        del out.artifacts[:]
    return out


class RequestHandler:
    """The transport-neutral A2A core; one coroutine per operation.

    ``store`` holds tasks and push configs. ``card`` is the public Agent Card
    without its interfaces (capabilities decide which operations are
    offered: spec §3.3.4). ``extended_card`` answers GetExtendedAgentCard.
    ``push`` enables webhook delivery; without it, or when the card does not
    declare ``pushNotifications``, push operations answer
    PUSH_NOTIFICATION_NOT_SUPPORTED.

    ``bus``, ``writer`` and ``executions`` are the kernel's parts as the
    composition root built them (:mod:`a2a_grpc.server`: cluster mode's,
    with the features' observer); each one not given is built here, the
    plain way, from the ones before it (the writer's bus is ``bus``, the
    executions drive the agent through ``writer``).
    """

    def __init__(
        self,
        executor: AgentExecutor,
        store: HandlerStore,
        card: pb.AgentCard,
        *,
        config: HandlerConfig | None = None,
        extended_card: pb.AgentCard | None = None,
        push: PushSink | None = None,
        bus: EventBus | None = None,
        writer: TaskWriter | None = None,
        executions: Executions | None = None,
    ) -> None:
        self.executor = executor
        self.store = store
        self.card = card
        self.extended_card = extended_card
        self.config = cfg = config or HandlerConfig()
        self.push = push
        if bus is None:
            bus = EventBus(buffer=cfg.subscriber_buffer, buffer_bytes=cfg.subscriber_buffer_bytes)
        if writer is None:
            writer = TaskWriter(store, store, bus, push_wake(card, push), max_task_bytes=cfg.max_task_bytes)
        if executions is None:
            executions = Executions(Driver(executor, writer).drive, bus)
        self.bus, self.writer, self.executions = bus, writer, executions
        self.push_configs = PushConfigs(
            store, max_per_task=cfg.push_max_configs_per_task, max_per_owner=cfg.push_max_configs_per_owner
        )

    async def _get_task(self, task_id: str, owner: Owner) -> StoredTask:
        stored = await self.store.get(task_id, owner)
        if stored is None:
            raise A2AError(
                ErrorCode.TASK_NOT_FOUND, f"task {task_id} not found", metadata={"taskId": task_id}
            )
        return stored

    async def _continued(self, task_id: str, call: CallContext) -> StoredTask | None:
        """The task a message continues: TASK_NOT_FOUND when unknown, except
        on a call with ``client_task_ids`` (the legacy adapters only,
        docs/decisions.md), where None means the message creates it under
        that id — whether or not another owner holds a task of that id (task
        ids are scoped per owner: the caller cannot tell)."""
        if call.client_task_ids:
            return await self.store.get(task_id, call.owner)
        return await self._get_task(task_id, call.owner)

    # ---------------------------------------------------------------- messages

    async def _start(self, req: pb.SendMessageRequest, call: CallContext, *, stream: bool) -> Execution:
        """Validates the message, resolves ids and starts an execution (spec
        §3.4, §9.3, §9.4). The caller's subscription, when ``stream``, exists
        before the agent runs."""
        if self.executions.closing:
            raise A2AError(ErrorCode.UNAVAILABLE, "server is shutting down")
        msg, owner = req.message, call.owner
        if self.executor.check_input_modes:
            check_input_modes(msg, self.card)
        cfg = req.configuration
        push_config = (
            await self._inline_push_config(cfg) if cfg.HasField("task_push_notification_config") else None
        )
        ended = self.executions.ended
        given = msg.task_id  # (read once: each read of a field is a lookup)
        existing = await self._continued(given, call) if given else None
        if existing is not None:
            _check_continues(msg, existing.task)
            task_id, context_id = existing.task.id, existing.task.context_id
        else:  # a task id here is a client-chosen one (see _continued)
            task_id, context_id = given or new_task_id(), msg.context_id or new_task_id()
        if push_config is not None:
            push_config.task_id, push_config.tenant = task_id, owner.tenant
            push_config.id = push_config.id or new_id()
        message = _user_message(msg, task_id, context_id)
        ex = Execution(Request(task_id, context_id, owner, message, push_config, call.dialect), existing)

        async def prepare() -> ExecutorContext:
            if ex.existing is not None and self.executions.ended != ended:
                # The previous execution of this task may have ended (terminal)
                # after the task was read: read it again before the agent runs.
                ex.existing = await self._get_task(task_id, owner)
                _refuse_terminal(ex.existing.task)
            related = await _related_tasks(self.store, msg, owner) if msg.reference_task_ids else ()
            return ExecutorContext(
                message=message,
                task_id=task_id,
                context_id=context_id,
                call=call,
                task=_trim(ex.existing.task, None) if ex.existing else None,
                accepted_output_modes=tuple(
                    cfg.accepted_output_modes[:]
                ),  # ([:]: see validation._plan_lines)
                related_tasks=tuple(related),
            )

        await self.executions.start(ex, prepare, stream=stream)
        return ex

    async def _inline_push_config(self, cfg: pb.SendMessageConfiguration) -> pb.TaskPushNotificationConfig:
        """A copy of the webhook given with the message (``cfg`` has one),
        checked; its field violations are reported under ``configuration``."""
        require_push(self.card, self.push)
        push_config = pb.TaskPushNotificationConfig()
        push_config.CopyFrom(cfg.task_push_notification_config)
        assert self.push is not None
        try:
            await self.push.check_config(push_config)
        except A2AError as err:
            raise _under("configuration.task_push_notification_config", err) from None
        return push_config

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
        cfg, signals = req.configuration, ex.signals
        if cfg.return_immediately:
            if not signals.committed:
                await signals.until_committed()
        elif not signals.settled:  # (an agent that answers at once has settled already)
            await signals.until_settled()
        progress = ex.progress
        if progress.error is not None and progress.current is None:
            raise progress.error
        if progress.reply is not None:
            return pb.SendMessageResponse(message=progress.reply)
        assert progress.current is not None
        hl = cfg.history_length if cfg.HasField("history_length") else None
        response = pb.SendMessageResponse()
        _trim(progress.current.task, hl, into=response.task)  # one copy, straight into the response
        return response

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
                if _ends_stream(event, kind):
                    return
            progress = ex.progress
            if progress.error is not None and progress.current is None:
                raise progress.error
        finally:
            sub.close()

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
        size = min(req.page_size if req.page_size > 0 else cfg.list_default_page_size, cfg.list_max_page_size)
        ts = req.status_timestamp_after
        after_ms = ts.ToMilliseconds() if req.HasField("status_timestamp_after") else None
        filters = paging.task_filters(call.tenant, call.user, req.context_id, req.status, after_ms)
        after = paging.decode_task_token(req.page_token, filters) if req.page_token else None
        page = await self.store.list_tasks(
            call.owner, ListQuery(req.context_id, req.status, after_ms, size, after)
        )
        hl = req.history_length if req.HasField("history_length") else None
        last = page.tasks[-1] if page.has_more and page.tasks else None
        token = paging.task_token((last.status.timestamp.ToMilliseconds(), last.id), filters) if last else ""
        return pb.ListTasksResponse(
            tasks=[_trim(t, hl, include_artifacts=req.include_artifacts) for t in page.tasks],
            next_page_token=token,
            page_size=size,
            total_size=page.total_size,
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
            ex = self.executions.get(task_key(call.owner, req.id))
            if ex is None or ex.runner is None:
                grace = self.config.cancel_grace_seconds
                if await self.executions.cancel_elsewhere(stored, call.owner, grace):
                    continue  # another replica's execution ended: read the outcome
                # No execution (interrupted or orphaned task): cancel it here.
                canceled = await self._cancel_idle(stored, call.owner)
                if canceled is not None:
                    return canceled
                continue
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
                self.executions.interrupt(ex, "cancel")
            await asyncio.wait({ex.runner}, timeout=self.config.cancel_grace_seconds)
        raise A2AError(ErrorCode.INTERNAL, f"task {req.id} kept changing while being canceled")

    async def _cancel_idle(self, stored: StoredTask, owner: Owner) -> pb.Task | None:
        """Makes a task without an execution CANCELED; None when another
        writer changed it first."""
        event = pb.TaskStatusUpdateEvent(status=pb.TaskStatus(state=pb.TASK_STATE_CANCELED))
        task, out = apply_event(stored.task, event)
        configs = await self.writer.push_configs(owner, task.id)
        outbox = self.writer.outbox(owner, task.id, configs, stored.version + 1, out)
        try:
            write = TaskWrite(task, owner, stored.version, (out,), outbox)
            version = await self.writer.write(write, stored.task.status.state)
        except VersionConflictError:
            return None
        self.bus.publish(task_key(owner, task.id), version, out, last=True)
        return _trim(task, None)

    async def subscribe_to_task(
        self, req: pb.SubscribeToTaskRequest, call: CallContext
    ) -> AsyncIterator[pb.StreamResponse]:
        """SubscribeToTask (spec §3.1.6): a snapshot of the task, then every
        update until it is terminal. Raises UNSUPPORTED_OPERATION for a
        terminal task (design.md A2) or without streaming; TASK_NOT_FOUND."""
        key = task_key(call.owner, req.id)
        sub = self.bus.subscribe(key)
        try:
            stored = await self._get_task(req.id, call.owner)
            ex = self.executions.get(key)
            current = None if ex is None else ex.progress.current
            if current is not None and current.version > stored.version:
                # Written meanwhile: read it again. Not ex.current itself, which
                # may hold the next chunk before that chunk's write commits.
                stored = await self._get_task(req.id, call.owner)
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
        assert self.push is not None
        config = await self.push_configs.create(req, call.owner, self.push.check_config, dialect=call.dialect)
        await self._refresh_push(call.owner, config.task_id)
        return config

    async def _refresh_push(self, owner: Owner, task_id: str) -> None:
        """A running execution of the task picks up its webhooks as they now are."""
        ex = self.executions.get(task_key(owner, task_id))
        if ex is not None:
            await self.writer.refresh_push(ex)

    async def get_task_push_notification_config(
        self, req: pb.GetTaskPushNotificationConfigRequest, call: CallContext
    ) -> pb.TaskPushNotificationConfig:
        """GetTaskPushNotificationConfig (spec §3.1.8). Raises
        PUSH_NOTIFICATION_NOT_SUPPORTED, or TASK_NOT_FOUND when the task or
        the config does not exist for this caller."""
        await self._get_task(req.task_id, call.owner)
        return await self.push_configs.get(call.owner, req.task_id, req.id)

    async def list_task_push_notification_configs(
        self, req: pb.ListTaskPushNotificationConfigsRequest, call: CallContext
    ) -> pb.ListTaskPushNotificationConfigsResponse:
        """ListTaskPushNotificationConfigs (spec §3.1.9), paginated by
        ``page_size`` (0: 100) and ``page_token``. Raises
        PUSH_NOTIFICATION_NOT_SUPPORTED, TASK_NOT_FOUND, INVALID_PARAMS."""
        await self._get_task(req.task_id, call.owner)
        return await self.push_configs.page(call.owner, req.task_id, req.page_size, req.page_token)

    async def delete_task_push_notification_config(
        self, req: pb.DeleteTaskPushNotificationConfigRequest, call: CallContext
    ) -> empty_pb2.Empty:
        """DeleteTaskPushNotificationConfig (spec §3.1.10): idempotent; no
        notification is sent through the config afterwards. Raises
        PUSH_NOTIFICATION_NOT_SUPPORTED, TASK_NOT_FOUND (unknown task)."""
        await self._get_task(req.task_id, call.owner)
        await self.push_configs.delete(call.owner, req.task_id, req.id)
        await self._refresh_push(call.owner, req.task_id)
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
        card = pb.AgentCard()
        card.CopyFrom(self.extended_card)  # a copy: interceptors may trim it for the caller
        return card

    # --------------------------------------------------------------- lifecycle

    async def close(self, grace_seconds: float = 0.0) -> None:
        """Stops accepting messages, lets running executions finish for up to
        ``grace_seconds``, then stops the rest (their tasks become FAILED) and
        ends every stream."""
        await self.executions.close(grace_seconds)
        self.bus.close_all()


def _check_continues(msg: pb.Message, task: pb.Task) -> None:
    """Raises INVALID_PARAMS when ``msg`` names another context than the task
    it continues, UNSUPPORTED_OPERATION when that task is terminal."""
    if msg.context_id and msg.context_id != task.context_id:
        raise A2AError.invalid_params(
            FieldViolation(
                "message.context_id",
                f"context {msg.context_id} does not match task {task.id}'s context {task.context_id}",
            )
        )
    _refuse_terminal(task)


async def _related_tasks(store: TaskStore, msg: pb.Message, owner: Owner) -> list[pb.Task]:
    """The caller's tasks named in ``reference_task_ids`` (others are skipped)."""
    related: list[pb.Task] = []
    for ref in dict.fromkeys(msg.reference_task_ids):
        if check_id(ref) is None:
            found = await store.get(ref, owner)
            if found is not None:
                related.append(found.task)
    return related


def _under(prefix: str, err: A2AError) -> A2AError:
    """``err`` with its field violations reported under the field ``prefix``."""
    return A2AError(
        err.code,
        err.message,
        metadata=err.metadata,
        field_violations=[
            FieldViolation(f"{prefix}.{v.field}" if v.field else prefix, v.description)
            for v in err.field_violations
        ],
    )


def _refuse_terminal(task: pb.Task) -> None:
    """Raises UNSUPPORTED_OPERATION for a message to a terminal task (spec §3.1.1)."""
    if is_terminal(task.status.state):
        raise A2AError(
            ErrorCode.UNSUPPORTED_OPERATION,
            f"task {task.id} is {pb.TaskState.Name(task.status.state)}; a terminal task accepts no "
            "more messages (start a new task, referencing it in referenceTaskIds)",
            metadata={"taskId": task.id},
        )


def _user_message(msg: pb.Message, task_id: str, context_id: str) -> pb.Message:
    """A copy of the caller's message with the task's ids (role user by default)."""
    message = pb.Message()
    message.CopyFrom(msg)
    message.task_id, message.context_id = task_id, context_id
    if message.role == pb.ROLE_UNSPECIFIED:
        message.role = pb.ROLE_USER
    return message


def _ends_stream(event: pb.StreamResponse, kind: str | None) -> bool:
    """A SendStreamingMessage stream ends after a direct Message, or a Task or
    status update whose state is terminal or interrupted (``kind``: the
    event's ``payload``)."""
    if kind == "message":
        return True
    if kind == "task":
        return is_final(event.task.status.state)
    if kind == "status_update":
        return is_final(event.status_update.status.state)
    return False
