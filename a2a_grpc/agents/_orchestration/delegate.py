"""One delegation: a delegate's stream relayed into the orchestrator's task.

:func:`relay` sends the plan's message to the delegate with
``SendStreamingMessage`` and turns each of its events into an event of the
orchestrator's task (``ctx``):

* the delegate's SUBMITTED/WORKING updates → WORKING updates carrying the
  delegate's status message (its progress);
* its artifacts → the same artifacts (id, chunks) with the delegate named in
  ``metadata["delegate"]``;
* INPUT_REQUIRED / AUTH_REQUIRED → the same state with the delegate's
  question; the :class:`Delegate` (agent, its task and context ids) rides in
  the status message's ``metadata["delegate"]``, so the caller's follow-up,
  sent to the orchestrator's task, is forwarded to the delegate's task;
* COMPLETED (or a direct Message reply) → COMPLETED;
* FAILED, REJECTED or CANCELED, a broken stream, or no answer within the
  timeout → :class:`DelegateFailed` (``relayed`` tells whether artifacts
  were copied already, after which the orchestrator does not fail over).

When the orchestrator's task is canceled, the delegate's task is canceled
too (CancelTask, at most 5 seconds) before the cancellation goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from a2a_grpc.client import A2AClient
from a2a_grpc.core._executor import ExecutorContext
from a2a_grpc.errors import A2AError
from a2a_grpc.protocol import protojson
from a2a_grpc.types import Event, is_interrupted, new_id, pb

__all__ = ["Delegate", "DelegateFailed", "relay", "status_with"]

_CANCEL_SECONDS = 5.0


@dataclass(slots=True)
class Delegate:
    """The agent a task went to, and its task there."""

    agent_id: str
    name: str
    base_url: str
    task_id: str = ""
    context_id: str = ""

    def to_dict(self) -> dict[str, str]:
        """The ``metadata["delegate"]`` value."""
        return {
            "agentId": self.agent_id,
            "name": self.name,
            "baseUrl": self.base_url,
            "taskId": self.task_id,
            "contextId": self.context_id,
        }

    @classmethod
    def from_task(cls, task: pb.Task | None) -> Delegate | None:
        """The delegate recorded in ``task``'s status message, if any."""
        if task is None or "delegate" not in task.status.message.metadata:
            return None
        raw: Any = protojson.json_value(task.status.message.metadata).get("delegate")
        if not isinstance(raw, dict) or not raw.get("baseUrl") or not raw.get("taskId"):
            return None
        return cls(
            raw.get("agentId", ""),
            raw.get("name", ""),
            raw["baseUrl"],
            raw["taskId"],
            raw.get("contextId", ""),
        )


class DelegateFailed(Exception):
    """The delegation did not succeed; ``reason`` says why, ``relayed``
    whether the orchestrator's task already holds the delegate's artifacts."""

    def __init__(self, reason: str, *, relayed: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.relayed = relayed


def status_with(
    ctx: ExecutorContext, state: int, delegate: Delegate, *parts: pb.Part | str
) -> pb.TaskStatusUpdateEvent:
    """A status update of the orchestrator's task naming ``delegate``."""
    what = pb.TaskState.Name(state).removeprefix("TASK_STATE_").lower().replace("_", " ")
    event = ctx.status(state, *(parts or (f"{what} by {delegate.name}",)))
    event.status.message.metadata.update({"delegate": delegate.to_dict()})
    return event


def _copy_artifact(ctx: ExecutorContext, update: pb.TaskArtifactUpdateEvent, delegate: Delegate) -> Event:
    event = pb.TaskArtifactUpdateEvent(
        task_id=ctx.task_id, context_id=ctx.context_id, append=update.append, last_chunk=update.last_chunk
    )
    event.artifact.CopyFrom(update.artifact)
    event.artifact.metadata.update({"delegate": delegate.to_dict()})
    return event


def _text(status: pb.TaskStatus) -> str:
    return " ".join(p.text for p in status.message.parts if p.WhichOneof("content") == "text")


async def relay(
    ctx: ExecutorContext, client: A2AClient, delegate: Delegate, message: pb.Message, *, timeout: float
) -> AsyncIterator[Event]:
    """Relays one exchange with the delegate (see the module docstring);
    ends after a final status. Raises DelegateFailed."""
    outgoing = pb.Message()
    outgoing.CopyFrom(message)
    outgoing.message_id = new_id()
    outgoing.role = pb.ROLE_USER
    outgoing.task_id = delegate.task_id
    outgoing.context_id = delegate.context_id
    copied = False
    try:
        async for event in client.send_streaming_message(outgoing, timeout=timeout):
            kind = event.WhichOneof("payload")
            if kind == "task":
                delegate.task_id, delegate.context_id = event.task.id, event.task.context_id
                for artifact in event.task.artifacts:
                    copied = True
                    yield _copy_artifact(ctx, pb.TaskArtifactUpdateEvent(artifact=artifact), delegate)
                status: pb.TaskStatus = event.task.status
            elif kind == "status_update":
                delegate.task_id = delegate.task_id or event.status_update.task_id
                delegate.context_id = delegate.context_id or event.status_update.context_id
                status = event.status_update.status
            elif kind == "artifact_update":
                copied = True
                yield _copy_artifact(ctx, event.artifact_update, delegate)
                continue
            else:  # a direct Message reply: the work is done
                yield status_with(ctx, pb.TASK_STATE_COMPLETED, delegate, *event.message.parts)
                return
            final = _status_event(ctx, status, delegate, copied)
            if final is not None:
                yield final
                if final.status.state != pb.TASK_STATE_WORKING:
                    return
    except (asyncio.CancelledError, GeneratorExit):
        await _cancel(client, delegate)
        raise
    except A2AError as exc:
        await _cancel(client, delegate)
        raise DelegateFailed(f"{delegate.name}: {exc.code.reason}: {exc.message}", relayed=copied) from None


def _status_event(
    ctx: ExecutorContext, status: pb.TaskStatus, delegate: Delegate, copied: bool
) -> pb.TaskStatusUpdateEvent | None:
    """The orchestrator's status for the delegate's ``status``; raises
    DelegateFailed for a failed, rejected or canceled delegate task."""
    state = status.state
    parts = list(status.message.parts)
    if state in (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING, pb.TASK_STATE_UNSPECIFIED):
        return status_with(ctx, pb.TASK_STATE_WORKING, delegate, *parts) if parts else None
    if is_interrupted(state) or state == pb.TASK_STATE_COMPLETED:
        return status_with(ctx, state, delegate, *parts)
    why = _text(status) or "no reason given"
    raise DelegateFailed(
        f"{delegate.name}: its task ended {pb.TaskState.Name(state).removeprefix('TASK_STATE_')}: {why}",
        relayed=copied,
    )


async def _cancel(client: A2AClient, delegate: Delegate) -> None:
    """Cancels the delegate's task when there is one still running."""
    if not delegate.task_id:
        return
    with contextlib.suppress(A2AError, TimeoutError, asyncio.CancelledError):
        await asyncio.shield(client.cancel_task(delegate.task_id, timeout=_CANCEL_SECONDS))
