"""Crash recovery: tasks an execution that no longer exists left active.

A process that dies (``kill -9``, a crash, a power cut) cannot write the end
of the tasks it was working on: they would stay SUBMITTED or WORKING forever
and their subscribers would never end. The default policy (design.md,
"crash") marks such a task FAILED with a status message that says so
(``execution lost: …``); the write is an ordinary versioned task update, so
it carries the task's push notifications (outbox) and reaches subscribers
like any other state change. Interrupted tasks (INPUT_REQUIRED,
AUTH_REQUIRED) have no execution and are left as they are.

Who calls :func:`fail_lost_task`:

- a single-process server (SQLite, or PostgreSQL without ``--cluster``) on
  start, for every active task in the store (:func:`recover_on_start`): no
  execution of an earlier process survived it;
- in cluster mode the lease reaper (:mod:`a2a_grpc.cluster._leases`), only for
  the task of an expired lease it took over: other replicas' active tasks
  are theirs.
"""

from __future__ import annotations

import logging
from typing import Protocol, runtime_checkable

from a2a_grpc.context import Owner
from a2a_grpc.core._drive import TaskWriter
from a2a_grpc.core.features import Feature, Kernel
from a2a_grpc.core.ports import (
    Fence,
    LeaseLostError,
    StoredTask,
    TaskWrite,
    VersionConflictError,
    task_key,
)
from a2a_grpc.protocol._taskupdate import apply_event
from a2a_grpc.types import new_id, now_timestamp, pb

__all__ = ["ActiveTaskScan", "Recovery", "fail_lost_task", "lost_event", "recover_on_start"]

log = logging.getLogger("a2a_grpc.cluster.recovery")

_ACTIVE = (pb.TASK_STATE_SUBMITTED, pb.TASK_STATE_WORKING)
#: Tasks read per round of the start-up scan.
_BATCH = 500


@runtime_checkable
class ActiveTaskScan(Protocol):
    """A store that can list the active tasks of every owner (the SQL store)."""

    async def active_tasks(
        self, limit: int, after: tuple[str, str, str] = ("", "", "")
    ) -> list[tuple[Owner, StoredTask]]:
        """Up to ``limit`` SUBMITTED or WORKING tasks in (id, tenant, user)
        order, after the task ``after`` (that triple)."""


def lost_event(
    task: pb.Task, why: str, *, state: int = pb.TASK_STATE_FAILED, prefix: str = "execution lost: "
) -> pb.TaskStatusUpdateEvent:
    """The status update that ends a task whose execution was lost: FAILED
    (or ``state``), with an agent message ``execution lost: <why>`` (or
    ``prefix`` + ``why``)."""
    status = pb.TaskStatus(state=state, timestamp=now_timestamp())  # type: ignore[arg-type]
    status.message.CopyFrom(
        pb.Message(
            message_id=new_id(),
            context_id=task.context_id,
            task_id=task.id,
            role=pb.ROLE_AGENT,
            parts=[pb.Part(text=prefix + why)],
        )
    )
    return pb.TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id, status=status)


async def fail_lost_task(
    writer: TaskWriter,
    owner: Owner,
    stored: StoredTask,
    why: str,
    *,
    fence: Fence | None = None,
    canceled: bool = False,
) -> StoredTask | None:
    """Makes ``stored`` FAILED (``execution lost: why``) with its push
    notifications, and publishes the update to this process's subscribers.

    Returns the task as written, or None when it is no longer active (another
    writer got there first: the compare-and-swap failed and a fresh read shows
    a terminal or interrupted task). In cluster mode the write is fenced by
    the lease the reaper took over (``fence``; LeaseLostError when that lease
    was lost in turn). With ``canceled`` the task becomes CANCELED with the
    status message ``why`` instead (a cancel forced on another replica's
    execution)."""
    for _attempt in range(3):
        if stored.task.status.state not in _ACTIVE:
            return None
        if canceled:
            end = lost_event(stored.task, why, state=pb.TASK_STATE_CANCELED, prefix="")
        else:
            end = lost_event(stored.task, why)
        task, out = apply_event(stored.task, end)
        configs = await writer.push_configs(owner, task.id)
        outbox = writer.outbox(owner, task.id, configs, stored.version + 1, out)
        try:
            write = TaskWrite(task, owner, stored.version, (out,), outbox, fence)
            version = await writer.write(write, stored.task.status.state)
        except LeaseLostError:
            raise
        except VersionConflictError:
            fresh = await writer.store.get(task.id, owner)
            if fresh is None:
                return None
            stored = fresh
            continue
        writer.bus.publish(task_key(owner, task.id), version, out, last=True)
        return StoredTask(task, version)
    return None


async def recover_on_start(store: ActiveTaskScan, writer: TaskWriter) -> int:
    """Marks every SUBMITTED or WORKING task in ``store`` FAILED ("execution
    lost: the server stopped before the task ended"), as a single-process
    server does before it serves; returns how many it marked."""
    marked, after = 0, ("", "", "")
    while True:
        batch = await store.active_tasks(_BATCH, after)
        for owner, stored in batch:
            why = "the server process stopped before the task ended (found on restart)"
            if await fail_lost_task(writer, owner, stored, why) is not None:
                marked += 1
        if len(batch) < _BATCH:
            break
        owner, last = batch[-1]
        after = (last.task.id, owner.tenant, owner.user)
    if marked:
        log.warning("crash recovery: %d task(s) left active by an earlier process marked FAILED", marked)
    return marked


class Recovery(Feature):
    """Start-up recovery of a single-process server as a Feature: on start,
    :func:`recover_on_start` over the server's store, when it can list its
    active tasks (:class:`ActiveTaskScan`: the SQL store), before the ports
    are bound."""

    async def start(self, kernel: Kernel) -> None:
        if isinstance(kernel.store, ActiveTaskScan):
            await recover_on_start(kernel.store, kernel.writer)
