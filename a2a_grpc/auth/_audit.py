"""The audit log (issue 11 item 6): one JSON line per security-relevant event.

Recorded events (``event`` of the record):

* ``task.created``, ``task.state`` (a state change), ``task.artifact`` — every
  task write, heard through the :class:`~a2a_grpc.core.hooks.Observer` hook
  ``task_written``;
* ``task.cancel_requested``, ``push_config.created``, ``push_config.deleted``,
  ``extended_card.read`` — RPCs that succeeded;
* ``auth.failed`` (UNAUTHENTICATED), ``authz.denied`` (PERMISSION_DENIED) —
  refused calls, whatever the RPC.

Each record carries ``time`` (UTC, ISO 8601), ``actor`` (the caller's
principal owner, ``anonymous`` without one; ``agent`` for what the agent's
execution wrote), ``onBehalfOf`` (for agent-made writes: the caller whose
message started the execution), ``tenant``, ``binding``, ``rpc`` and ``peer``
of the call, and the task id, state, previous state or artifact id where they
apply; refusals add the error ``reason`` and ``message`` (our own words: never
a token, key or password — none is ever put in a record).

:class:`AuditLog` is both: an Observer (the server passes its hooks into the
kernel's constructors) and a call interceptor for the chain's *audit* slot,
just after telemetry — it must sit ahead of authentication to see the calls
that fail it (:mod:`a2a_grpc.auth._feature`). The call in progress reaches the
task writes through a context variable, which the execution's asyncio task
inherits. ``a2a-grpc serve --audit-log FILE`` (``-``: stderr).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import IO, Any

from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.context import CallContext
from a2a_grpc.core._interceptors import CallInterceptor, Outcome
from a2a_grpc.core.hooks import Observer
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.types import state_label

__all__ = ["AuditLog", "open_audit_log"]

_CALL: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar("a2a_audit_call", default=None)
_REQUEST: contextvars.ContextVar[ProtoMessage | None] = contextvars.ContextVar(
    "a2a_audit_request", default=None
)
_IN_EXECUTION: contextvars.ContextVar[bool] = contextvars.ContextVar("a2a_audit_execution", default=False)

#: RPC → the event its success records.
_SUCCESS_EVENTS = {
    "CancelTask": "task.cancel_requested",
    "CreateTaskPushNotificationConfig": "push_config.created",
    "DeleteTaskPushNotificationConfig": "push_config.deleted",
    "GetExtendedAgentCard": "extended_card.read",
}
_REFUSAL_EVENTS = {ErrorCode.UNAUTHENTICATED: "auth.failed", ErrorCode.PERMISSION_DENIED: "authz.denied"}


def _actor(call: CallContext | None) -> str:
    if call is None:
        return "system"
    return call.principal.owner if call.principal is not None else "anonymous"


def _task_id(rpc: str, request: ProtoMessage | None) -> str:
    if request is None:
        return ""
    name = "task_id" if "PushNotificationConfig" in rpc else "id"
    return str(getattr(request, name, "") or "")


class AuditLog(Observer, CallInterceptor):
    """Writes the records to ``stream`` (one JSON object a line, flushed)."""

    def __init__(self, stream: IO[str], *, close: bool = False) -> None:
        self.stream = stream
        self._close = close

    def write(self, record: dict[str, Any]) -> None:
        """Writes one record (``time`` first); never raises."""
        line = json.dumps({"time": datetime.now(UTC).isoformat(), **record}, separators=(",", ":"))
        with contextlib.suppress(OSError, ValueError):
            self.stream.write(line + "\n")
            self.stream.flush()

    def _context(self, call: CallContext | None) -> dict[str, Any]:
        if call is None:
            return {"tenant": "", "binding": "", "rpc": "", "peer": ""}
        return {"tenant": call.tenant, "binding": call.binding, "rpc": call.rpc_name, "peer": call.peer}

    # ---------------------------------------------------------- interceptor
    async def before(self, call: CallContext, request: ProtoMessage) -> None:
        _CALL.set(call)
        _REQUEST.set(request)

    async def after(self, call: CallContext, outcome: Outcome) -> None:
        request = _REQUEST.get()
        if isinstance(outcome, A2AError):
            event = _REFUSAL_EVENTS.get(outcome.code)
            if event is not None:
                refused = {"event": event, "actor": _actor(call), **self._context(call)}
                self.write({**refused, "reason": outcome.code.reason, "message": outcome.message})
            return
        event = _SUCCESS_EVENTS.get(call.rpc_name)
        if event is not None:
            record: dict[str, Any] = {"event": event, "actor": _actor(call), **self._context(call)}
            task_id = _task_id(call.rpc_name, request)
            if task_id:
                record["taskId"] = task_id
            if "PushNotificationConfig" in call.rpc_name:
                record["configId"] = getattr(outcome, "id", "") or getattr(request, "id", "")
            self.write(record)

    # -------------------------------------------------------------- observer
    def execution(self, task_id: str, context_id: str) -> contextlib.AbstractContextManager[Any]:
        return self._in_execution()

    @contextlib.contextmanager
    def _in_execution(self) -> Iterator[None]:
        token = _IN_EXECUTION.set(True)
        try:
            yield
        finally:
            _IN_EXECUTION.reset(token)

    def task_written(self, task: Any, owner: Any, was: int | None, event: Any) -> None:
        call = _CALL.get()
        by_agent = _IN_EXECUTION.get()
        base: dict[str, Any] = {"actor": "agent" if by_agent else _actor(call)}
        if by_agent:
            base["onBehalfOf"] = _actor(call) if call is not None else owner.user
        base.update(self._context(call))
        base["tenant"] = owner.tenant
        base["taskId"] = task.id
        state = state_label(task.status.state)
        if was is None:
            self.write({"event": "task.created", **base, "state": state})
            return
        if was != task.status.state:
            self.write({"event": "task.state", **base, "state": state, "previousState": state_label(was)})
        if event is not None and event.HasField("artifact_update"):
            artifact = event.artifact_update.artifact
            self.write({"event": "task.artifact", **base, "artifactId": artifact.artifact_id})

    def close(self) -> None:
        """Closes the file (not stderr)."""
        if self._close:
            with contextlib.suppress(OSError):
                self.stream.close()


def open_audit_log(target: str) -> AuditLog:
    """An :class:`AuditLog` appending to the file ``target`` (``-``: stderr).
    Raises OSError when the file cannot be opened."""
    if target == "-":
        return AuditLog(sys.stderr)
    return AuditLog(open(target, "a", encoding="utf-8"), close=True)
