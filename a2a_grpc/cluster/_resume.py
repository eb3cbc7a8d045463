"""Resumable agents (issue 12, item 6): a taken-over task is run again.

When the lease reaper (:mod:`a2a_grpc.cluster._leases`) takes over the lease
of a replica that stopped, the default policy marks the task FAILED
("execution lost: …", :mod:`a2a_grpc.cluster._recovery`). An agent whose
executor sets ``AgentExecutor.resumable = True`` is instead run again on the
replica that took the lease over, under that lease (its writes are fenced by
the new epoch):

- ``ctx.task`` is the task as last stored (status, artifacts, history), so
  the agent can continue where the stored state shows it was;
- ``ctx.message`` is the task's last user message (no new message is added
  to the history);
- ``ctx.metadata["resumed"]`` is True and ``ctx.metadata["previous_replica"]``
  names the replica that stopped.

Delivery is **at-least-once**: events the agent yielded before the crash and
that were stored stay; the ones it yields again are applied again (an
artifact chunk with ``append`` is appended twice unless the agent looks at
``ctx.task`` first). The call context is the task owner's, without a caller:
``ctx.call.method`` is ``SendMessage`` and ``ctx.call.binding`` "resume".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from a2a_grpc.context import CallContext, Owner
from a2a_grpc.core._execution import Execution, Progress, Request
from a2a_grpc.core._executor import ExecutorContext
from a2a_grpc.core.ports import Fence, StoredTask
from a2a_grpc.types import pb

if TYPE_CHECKING:
    from a2a_grpc.cluster._leases import LeasedExecutions

__all__ = ["RESUME_METHOD", "last_user_message", "resume"]

#: ``ctx.call.method`` of a resumed execution.
RESUME_METHOD = "/lf.a2a.v1.A2AService/SendMessage"


def last_user_message(task: pb.Task) -> pb.Message:
    """The task's last ROLE_USER message in its history (an empty user
    message with the task's ids when it has none)."""
    for message in reversed(task.history):
        if message.role == pb.ROLE_USER:
            copy = pb.Message()
            copy.CopyFrom(message)
            return copy
    return pb.Message(task_id=task.id, context_id=task.context_id, role=pb.ROLE_USER)


async def resume(
    executions: LeasedExecutions, stored: StoredTask, owner: Owner, fence: Fence, previous_replica: str
) -> Execution:
    """Runs the agent again for the active task ``stored`` under ``fence``
    (the lease the reaper took over) and returns its execution; the lease is
    released when it ends. Raises UNAVAILABLE once the server is closing
    (the caller then fails the task as the default policy does)."""
    task = stored.task
    configs = await executions.writer.push_configs(owner, task.id)
    # The task exists: the drive continues from it (nothing waits for its creation).
    progress = Progress(current=stored, push_configs=configs)
    ex = Execution(Request(task.id, task.context_id, owner, last_user_message(task)), stored, progress)
    ex.signals.commit()

    async def prepare() -> ExecutorContext:
        snapshot = pb.Task()
        snapshot.CopyFrom(task)
        return ExecutorContext(
            message=ex.request.message,
            task_id=task.id,
            context_id=task.context_id,
            call=CallContext(RESUME_METHOD, tenant=owner.tenant, user=owner.user, binding="resume"),
            task=snapshot,
            metadata={"resumed": True, "previous_replica": previous_replica},
        )

    await executions.start_leased(ex, fence, prepare)
    return ex
