"""The interface an agent implements, and the context it is given.

An agent is an :class:`AgentExecutor` whose :meth:`~AgentExecutor.execute` is an
async generator of events (``pb.Task``, ``pb.Message``,
``pb.TaskStatusUpdateEvent``, ``pb.TaskArtifactUpdateEvent``). The framework
owns everything else: it stores the task, applies the events, fans them out to
streams and webhooks, and cancels the generator (the agent sees
``asyncio.CancelledError``) when the task is canceled.

Rules for the events one execution yields (spec §3.1, §9; design.md):

* A new interaction may be answered with exactly one ``Message`` and nothing
  else: a direct reply, no task is stored.
* Otherwise the events describe the task ``ctx.task_id`` in context
  ``ctx.context_id``: status updates (never UNSPECIFIED), artifact updates
  (``append``/``last_chunk`` for chunks), or a ``Task`` carrying those ids.
* Once the task is terminal nothing more may follow. An execution should end
  in a terminal or interrupted state; one that ends while still active, or that
  breaks these rules, makes the task FAILED with INVALID_AGENT_RESPONSE.
* Raising :class:`~a2a_grpc.errors.A2AError` before the first event fails the
  request with that error and stores nothing (e.g. CONTENT_TYPE_NOT_SUPPORTED).
  Any exception after it makes the task FAILED.

Each event is stored (and streamed) before the code after its ``yield`` runs,
with one exception: after an artifact update the framework takes the events
the agent yields next without waiting, to store them all in one write (an
artifact then the terminal status is one write). So the code between an
artifact's ``yield`` and the next ``yield`` or ``await`` runs before that
artifact is stored; a cancel that comes during the write reaches the agent at
the ``await`` it then waits in.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import struct_pb2

from a2a_grpc.context import CallContext
from a2a_grpc.types import Event, new_id, now_timestamp, pb

__all__ = ["AgentExecutor", "ExecutorContext", "data_part", "file_part", "text_part"]


def text_part(text: str, *, media_type: str = "") -> pb.Part:
    """A text Part."""
    return pb.Part(text=text, media_type=media_type)


def data_part(value: Any, *, media_type: str = "application/json") -> pb.Part:
    """A Part holding any JSON value (dict, list, str, number, bool, None)."""
    v = struct_pb2.Value()
    _set_value(v, value)
    return pb.Part(data=v, media_type=media_type)


def file_part(raw: bytes, *, filename: str = "", media_type: str = "application/octet-stream") -> pb.Part:
    """A Part holding inline file bytes."""
    return pb.Part(raw=raw, filename=filename, media_type=media_type)


def _set_value(target: struct_pb2.Value, value: Any) -> None:
    if value is None:
        target.null_value = struct_pb2.NULL_VALUE
    elif isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int | float):
        target.number_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, dict):
        target.struct_value.update(value)
    elif isinstance(value, list | tuple):
        target.list_value.extend(value)
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


@dataclass(slots=True)
class ExecutorContext:
    """Everything one execution of an agent is given.

    ``message`` is the client's message; ``task`` the stored task it continues
    (a copy; None for a new interaction); ``task_id`` and ``context_id`` are
    the ids every event of this execution must carry (generated for a new
    task). ``accepted_output_modes`` are the media types the client accepts
    (spec §3.12; empty = anything). ``related_tasks`` are the caller's tasks
    named in ``message.reference_task_ids`` that exist. ``call`` describes the
    caller, its version and extensions.
    """

    message: pb.Message
    task_id: str
    context_id: str
    call: CallContext
    task: pb.Task | None = None
    accepted_output_modes: Sequence[str] = ()
    related_tasks: Sequence[pb.Task] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def is_new_task(self) -> bool:
        """True when this message starts a new interaction."""
        return self.task is None

    def accepts(self, media_type: str) -> bool:
        """Whether the client accepts ``media_type`` in output parts."""
        modes = self.accepted_output_modes
        return not modes or media_type in modes or "*/*" in modes

    def agent_message(self, *parts: pb.Part | str, with_task: bool = True) -> pb.Message:
        """An agent-authored Message in this context (and task, unless
        ``with_task`` is false, as for a direct reply). ``str`` becomes a
        text part."""
        return pb.Message(
            message_id=new_id(),
            context_id=self.context_id,
            task_id=self.task_id if with_task else "",
            role=pb.ROLE_AGENT,
            parts=[text_part(p) if isinstance(p, str) else p for p in parts],
        )

    def status(self, state: int, *message: pb.Part | str) -> pb.TaskStatusUpdateEvent:
        """A status update to ``state``, with an agent message made of
        ``message`` parts when given (e.g. the question of INPUT_REQUIRED)."""
        event = pb.TaskStatusUpdateEvent(task_id=self.task_id, context_id=self.context_id)
        status = event.status  # built in place (no copies: this runs once per event)
        status.state = state  # type: ignore[assignment]
        status.timestamp.CopyFrom(now_timestamp())
        if message:
            status.message.CopyFrom(self.agent_message(*message))
        return event

    def artifact(
        self,
        parts: Iterable[pb.Part | str],
        *,
        artifact_id: str | None = None,
        name: str = "",
        description: str = "",
        append: bool = False,
        last_chunk: bool = False,
    ) -> pb.TaskArtifactUpdateEvent:
        """An artifact update. For chunked artifacts pass the same
        ``artifact_id``, ``append=True`` after the first chunk and
        ``last_chunk=True`` on the final one (spec §10)."""
        event = pb.TaskArtifactUpdateEvent(
            task_id=self.task_id, context_id=self.context_id, append=append, last_chunk=last_chunk
        )
        artifact = event.artifact  # built in place (no copy into the event)
        artifact.artifact_id = artifact_id or new_id()
        artifact.name = name
        artifact.description = description
        for p in parts:  # (add + CopyFrom: extend would serialize and parse each part)
            if isinstance(p, str):
                artifact.parts.add(text=p)
            else:
                artifact.parts.add().CopyFrom(p)
        return event

    def text(self) -> str:
        """The concatenated text parts of the client's message."""
        return "\n".join(p.text for p in self.message.parts if p.WhichOneof("content") == "text")


class AgentExecutor(abc.ABC):
    """What an agent implements. Subclass it and implement :meth:`execute`.

    ``card`` is the agent's public Agent Card without ``supported_interfaces``
    (the server fills those from its listening addresses) — name, description,
    version, capabilities, skills and modes.
    """

    card: pb.AgentCard
    #: Refuse, before :meth:`execute` runs, a message part whose media type is
    #: outside the card's input modes (CONTENT_TYPE_NOT_SUPPORTED; see
    #: :mod:`a2a_grpc.protocol._mediatypes`). An agent that checks parts itself sets False.
    check_input_modes: bool = True
    #: Cluster mode: when the replica running a task dies, another replica
    #: runs :meth:`execute` again for it (at-least-once: ``ctx.task`` is the
    #: task as last stored, ``ctx.message`` its last user message,
    #: ``ctx.metadata["resumed"]`` is True) instead of marking it FAILED
    #: ("execution lost: …"). See :mod:`a2a_grpc.cluster._resume`.
    resumable: bool = False

    @abc.abstractmethod
    def execute(self, ctx: ExecutorContext) -> AsyncIterator[Event]:
        """Handles one client message; yields the events described in the
        module docstring. Write it as ``async def execute(self, ctx): ...
        yield ...``."""
        raise NotImplementedError
