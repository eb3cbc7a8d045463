"""The pure task update: how one agent event changes a task (spec §3.1.1,
§3.2, §4.1, §9).

No I/O and no asyncio. Each function takes the task as stored and an event
the agent yielded, and returns a new task (its inputs are never changed) and
the ``StreamResponse`` to fan out; an event that may not come at this point
raises ``A2AError(INVALID_AGENT_RESPONSE)``. The execution (``a2a_grpc.core._drive``)
stores the result with a versioned write, and when that write loses a race it
applies the *same event* again to the task it reads back, so no other
writer's change is lost (design.md, "terminal is final").

The rules:

- an execution's first event makes the task exist (:func:`open_task`): a new
  task is SUBMITTED with the user's message in its history; an interrupted one
  gets the message appended and is WORKING again (spec §9.2);
- a status update replaces the status, and its message joins the history;
- an artifact update adds the artifact or, with ``append``, extends the one
  of the same id (an unknown id is created: content is never dropped);
- a Task event replaces status and artifacts (and metadata when it has some);
- a direct Message reply answers a new interaction only (:func:`direct_reply`);
- a terminal task takes no more events.
"""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import is_terminal, new_id, now_timestamp, pb

__all__ = [
    "TaskEvent",
    "apply_event",
    "check_event",
    "direct_reply",
    "extend_artifact",
    "invalid",
    "open_task",
    "received_at",
    "snapshot",
    "status_event",
]

#: The events that change a task (a direct Message reply creates none).
TaskEvent = pb.Task | pb.TaskStatusUpdateEvent | pb.TaskArtifactUpdateEvent
_TASK_EVENTS = (pb.Task, pb.TaskStatusUpdateEvent, pb.TaskArtifactUpdateEvent)
#: The states a status update may set (every known one but UNSPECIFIED).
_STATES = frozenset(pb.TaskState.values()) - {pb.TASK_STATE_UNSPECIFIED}


def invalid(text: str) -> A2AError:
    """The error for an agent event that breaks the rules."""
    return A2AError(ErrorCode.INVALID_AGENT_RESPONSE, text)


def received_at(first: object, now: Timestamp | None = None) -> Timestamp:
    """When an execution's first event was made: the task is stored "at" that
    instant, so the status it is stored with never postdates the agent's first
    status update (timestamps of one task never go backwards)."""
    now = now or now_timestamp()
    if isinstance(first, pb.TaskStatusUpdateEvent) and first.status.HasField("timestamp"):
        ts = first.status.timestamp
        if (ts.seconds, ts.nanos) < (now.seconds, now.nanos):
            return ts
    return now


def snapshot(task: pb.Task) -> pb.StreamResponse:
    """A stream event carrying a copy of ``task`` (made with CopyFrom: the
    keyword form ``StreamResponse(task=...)`` serializes and parses it)."""
    out = pb.StreamResponse()
    out.task.CopyFrom(task)
    return out


def status_event(task: pb.Task) -> pb.StreamResponse:
    """A status update carrying the task's current status."""
    return pb.StreamResponse(
        status_update=pb.TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=task.status
        )
    )


def check_event(event: object, task_id: str, context_id: str) -> TaskEvent:
    """``event`` as a task event of this task. Raises INVALID_AGENT_RESPONSE
    for another type, or a task or context id that is not this task's."""
    if not isinstance(event, _TASK_EVENTS):
        raise invalid(f"unexpected event type {type(event).__name__}")
    got = event.id if isinstance(event, pb.Task) else event.task_id
    if got and got != task_id:
        raise invalid(f"event for task {got} in the execution of task {task_id}")
    got = event.context_id
    if got and got != context_id:
        raise invalid(f"event contextId {got} differs from the task's {context_id}")
    return event


def direct_reply(event: pb.Message, context_id: str, *, has_task: bool) -> pb.Message:
    """The agent's Message answering a new interaction (spec §3.1.1), as sent:
    role agent, the interaction's context id, a message id. Raises
    INVALID_AGENT_RESPONSE when there is a task, or the reply names a task,
    another context, or has no parts."""
    if has_task:
        raise invalid("a Message may only answer a new interaction, not a task")
    reply = pb.Message()
    reply.CopyFrom(event)
    if reply.task_id:
        raise invalid("a direct Message reply must not carry a task id")
    if reply.context_id and reply.context_id != context_id:
        raise invalid("the reply's contextId differs from the interaction's")
    reply.context_id = context_id
    reply.role = pb.ROLE_AGENT
    if not reply.message_id:
        reply.message_id = new_id()
    if not reply.parts:
        raise invalid("the reply has no parts")
    return reply


def open_task(
    message: pb.Message, existing: pb.Task | None, first: TaskEvent, *, now: Timestamp | None = None
) -> pb.Task:
    """The task as an execution's first event makes it exist.

    ``message`` is the user's (its task and context ids set). Without
    ``existing`` a new task is SUBMITTED with the message in its history; a Task
    event ``first`` adds its status, artifacts, history and metadata. An
    ``existing`` task gets the message appended and becomes WORKING (or the
    status of a Task event ``first``). The status is stamped
    :func:`received_at`. Raises UNSUPPORTED_OPERATION when ``existing`` is
    terminal (it became so after the message was accepted)."""
    at = received_at(first, now)
    snapshot = first if isinstance(first, pb.Task) else None
    task = pb.Task()
    if existing is None:
        task.id, task.context_id = message.task_id, message.context_id
        task.status.state = pb.TASK_STATE_SUBMITTED
    else:
        task.CopyFrom(existing)
        if is_terminal(task.status.state):
            raise A2AError(ErrorCode.UNSUPPORTED_OPERATION, f"task {task.id} became terminal")
        task.status.Clear()
        # Interrupted → active again: the agent is working on the reply.
        task.status.state = pb.TASK_STATE_WORKING
    task.status.timestamp.CopyFrom(at)
    task.history.add().CopyFrom(message)  # (append would serialize and parse it)
    if snapshot is not None and snapshot.status.state != pb.TASK_STATE_UNSPECIFIED:
        _set_status(task, snapshot.status, now)
    if snapshot is not None and existing is None:
        task.artifacts.extend(snapshot.artifacts)
        task.history.extend(m for m in snapshot.history if m.message_id != message.message_id)
        if snapshot.HasField("metadata"):
            task.metadata.CopyFrom(snapshot.metadata)
    return task


def apply_event(
    task: pb.Task, event: object, *, now: Timestamp | None = None, in_place: bool = False
) -> tuple[pb.Task, pb.StreamResponse]:
    """The task after ``event``, and the event to fan out (its task and
    context ids filled in). ``now`` stamps a status that has no timestamp
    (default: the current time). With ``in_place`` the result is ``task``
    itself, changed (no copy: appending a chunk then costs the chunk, not the
    task); nothing is changed when the event is refused. Raises
    INVALID_AGENT_RESPONSE for a Message (a task exists), an event of another
    task or context, a terminal ``task``, and an event missing what it needs
    (a valid state; an artifact id and parts)."""
    if isinstance(event, pb.Message):
        raise invalid("a Message may only answer a new interaction, not a task")
    task_id, context_id = task.id, task.context_id  # (read once: each read of a field is a lookup)
    event = check_event(event, task_id, context_id)
    if is_terminal(task.status.state):
        raise invalid("the task is already terminal; no event may follow")
    if in_place:
        out = task
    else:
        out = pb.Task()
        out.CopyFrom(task)
    if isinstance(event, pb.TaskStatusUpdateEvent):
        return out, _apply_status(out, event, now, task_id, context_id)
    if isinstance(event, pb.TaskArtifactUpdateEvent):
        return out, _apply_artifact(out, event, task_id, context_id)
    return out, _apply_snapshot(out, event, now)


def _set_status(task: pb.Task, status: pb.TaskStatus, now: Timestamp | None) -> pb.TaskStatus:
    """Sets ``task``'s status to ``status`` (stamped ``now`` when it has no
    timestamp); returns it (the task's own)."""
    mine = task.status
    mine.CopyFrom(status)
    if not mine.HasField("timestamp"):
        mine.timestamp.CopyFrom(now or now_timestamp())
    return mine


def _apply_status(
    task: pb.Task, event: pb.TaskStatusUpdateEvent, now: Timestamp | None, task_id: str, context_id: str
) -> pb.StreamResponse:
    given = event.status
    if given.state not in _STATES:
        raise invalid("a status update needs a valid state")
    status = _set_status(task, given, now)
    if status.HasField("message"):
        msg = status.message
        msg.task_id, msg.context_id = task_id, context_id
        msg.role = pb.ROLE_AGENT
        if not msg.message_id:
            msg.message_id = new_id()
        task.history.add().CopyFrom(msg)
    out = pb.StreamResponse()
    upd = out.status_update  # filled in place: no second copy into the StreamResponse
    upd.CopyFrom(event)
    upd.task_id, upd.context_id = task_id, context_id
    upd.status.CopyFrom(status)
    return out


def _apply_artifact(
    task: pb.Task, event: pb.TaskArtifactUpdateEvent, task_id: str, context_id: str
) -> pb.StreamResponse:
    art = event.artifact
    if not art.artifact_id:
        raise invalid("an artifact needs an artifactId")
    if not art.parts:
        raise invalid(f"artifact {art.artifact_id} has no parts")
    if event.append:
        extend_artifact(task, art)
    else:
        artifacts = task.artifacts
        for existing in artifacts[:]:  # ([:]: a loop over the container itself ends in an IndexError)
            if existing.artifact_id == art.artifact_id:
                existing.CopyFrom(art)
                break
        else:
            artifacts.add().CopyFrom(art)
    out = pb.StreamResponse()
    upd = out.artifact_update
    upd.CopyFrom(event)
    upd.task_id, upd.context_id = task_id, context_id
    return out


def extend_artifact(task: pb.Task, chunk: pb.Artifact) -> None:
    """Appends ``chunk`` to the artifact of its id in ``task`` (in place), or
    adds it when there is none: what an artifact update with ``append=true``
    does, and how a store folds the chunks it kept apart back into the task
    on read (:meth:`~a2a_grpc.core.ports.TaskStore.update`)."""
    artifacts, artifact_id = task.artifacts, chunk.artifact_id
    for existing in artifacts[:]:
        if existing.artifact_id == artifact_id:
            _extend(existing, chunk)
            return
    artifacts.add().CopyFrom(chunk)


def _extend(existing: pb.Artifact, chunk: pb.Artifact) -> None:
    """Appends a chunk (``append=true``): parts added, new extensions added,
    name and description replaced when given, metadata merged."""
    existing.parts.extend(chunk.parts)
    existing.extensions.extend(e for e in chunk.extensions if e not in existing.extensions)
    if chunk.name:
        existing.name = chunk.name
    if chunk.description:
        existing.description = chunk.description
    if chunk.HasField("metadata"):
        existing.metadata.MergeFrom(chunk.metadata)


def _apply_snapshot(task: pb.Task, event: pb.Task, now: Timestamp | None) -> pb.StreamResponse:
    if event.status.state == pb.TASK_STATE_UNSPECIFIED:
        raise invalid("a Task event needs a status state")
    _set_status(task, event.status, now)
    del task.artifacts[:]
    task.artifacts.extend(event.artifacts)
    if event.HasField("metadata"):
        task.metadata.CopyFrom(event.metadata)
    return snapshot(task)
