"""The store protocols: durable tasks, push configs and the push outbox.

Three small protocols, so that each user names only what it uses:
:class:`TaskStore` (the handler's tasks), :class:`PushConfigStore` (webhook
configs) and :class:`PushOutbox` (pending push deliveries), plus
:class:`StoreLifecycle` (open, close). A backend implements all of them
(:class:`Store`).

Stores copy protos in and out (messages are mutable), so what a caller gets is
a snapshot it may change freely. Every task write goes through one door,
:meth:`TaskStore.update` with a :class:`TaskWrite`: a versioned
compare-and-swap that succeeds only if the stored version is still the one
the caller read (0: the task does not exist yet), which keeps a terminal task
final and two writers from losing each other's changes (docs/decisions.md,
"terminal is final").

Every task belongs to an :class:`~a2a_grpc.context.Owner` (tenant + user),
and a task id names a task *of one owner*: two owners may each hold a task of
the same id (only the legacy dialects let clients choose ids,
docs/decisions.md), and asking with another owner behaves exactly like asking
for a missing task (spec §13.1). What is shared between callers is keyed by
:data:`TaskKey` (owner and task id), never by the id alone.

A push config also records the **dialect** it was registered in (``"1.0"``,
``"0.3"``, …; docs/dialects.md): its webhook gets bodies in that dialect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from a2a_grpc.context import Owner
from a2a_grpc.types import pb

__all__ = [
    "V1_DIALECT",
    "Fence",
    "LeaseLostError",
    "ListPage",
    "ListQuery",
    "OutboxEntry",
    "OutboxRecord",
    "PushConfigStore",
    "PushOutbox",
    "Store",
    "StoreLifecycle",
    "StoredTask",
    "TaskExistsError",
    "TaskKey",
    "TaskStore",
    "TaskWrite",
    "VersionConflictError",
    "task_key",
]

#: The dialect of a push config registered over A2A 1.0: its webhook gets
#: ``StreamResponse`` bodies.
V1_DIALECT = "1.0"

#: The owner of every task of a server without tenants or authentication.
_NOBODY = Owner()

#: A task as one owner holds it: (tenant, user, task id). The key of every
#: structure shared between callers (running executions, the event bus and
#: its subscriptions, busy checks, the cluster's leases and relay).
TaskKey = tuple[str, str, str]


def task_key(owner: Owner, task_id: str) -> TaskKey:
    """The :data:`TaskKey` of ``owner``'s task ``task_id``."""
    return (owner.tenant, owner.user, task_id)


class VersionConflictError(Exception):
    """A write lost its compare-and-swap race (or the task vanished)."""


class TaskExistsError(Exception):
    """A creating write (``expected_version`` 0) named a task id its owner
    already holds."""


class LeaseLostError(VersionConflictError):
    """A fenced write found that its execution no longer holds the task's
    lease (it expired and another replica took the task over, or the task was
    canceled elsewhere): nothing was written, and the execution must stop."""


@dataclass(frozen=True, slots=True)
class Fence:
    """The execution lease a write is fenced by (cluster mode): the write
    commits only while the lease of ``task_id`` still has ``epoch``. Epochs
    are unique cluster-wide and grow with every lease taken, so a replica
    that was paused or cut off while another took the task over can never
    write again (LeaseLostError)."""

    task_id: str
    epoch: int


@dataclass(frozen=True, slots=True)
class StoredTask:
    """A task snapshot and the version it was read at (versions start at 1)."""

    task: pb.Task
    version: int


@dataclass(frozen=True, slots=True)
class ListQuery:
    """Filters and position of one ListTasks page (spec §3.1.4).

    Order is ``status.timestamp`` newest first, ties broken by task id
    descending. ``after`` is the (timestamp in ms, task id) of the last task of
    the previous page: the page starts strictly after it in that order.
    ``status_timestamp_after_ms`` is inclusive. ``state`` 0 means any state.
    """

    context_id: str = ""
    state: int = 0
    status_timestamp_after_ms: int | None = None
    page_size: int = 50
    after: tuple[int, str] | None = None


@dataclass(frozen=True, slots=True)
class ListPage:
    """One page: the tasks (full, untrimmed copies), whether more follow, and
    the number of tasks matching the filters across all pages."""

    tasks: list[pb.Task]
    has_more: bool
    total_size: int


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """A push notification to deliver: written in the same transaction as the
    task write that caused it.

    ``payload`` is a serialized ``pb.StreamResponse``; ``event_id`` is stable
    across retries so receivers can drop duplicates. ``trace_context`` is the
    W3C ``traceparent`` of the span that wrote the update ("" when not
    traced): the delivery continues that trace. ``owner`` is the task's (and
    the config's) owner, a task id naming a task of one owner: a store
    writes the rows of a :class:`TaskWrite` as its task's owner's, and reads
    them back with it (push delivery finds the config by it).
    """

    task_id: str
    config_id: str
    event_id: str
    payload: bytes
    trace_context: str = ""
    owner: Owner = _NOBODY


@dataclass(frozen=True, slots=True)
class OutboxRecord:
    """A stored outbox entry with its delivery bookkeeping. ``seq`` increases
    in insertion order; ``next_attempt_at`` is a Unix time in seconds."""

    seq: int
    entry: OutboxEntry
    attempts: int
    next_attempt_at: float
    state: str  # "pending", "delivered" or "dead"
    last_error: str


class TaskWrite(NamedTuple):
    """One task write: the only way into a :class:`TaskStore`.

    ``task`` (its ``id`` names it) becomes ``owner``'s task if the stored
    version is still ``expected_version``; 0 means the task must not exist
    yet (a creation). The new version is ``expected_version + len(events)``
    (+ 1 for a write given no events): :attr:`version`.

    ``events`` are the stream events that made ``task`` from the stored one,
    in order (for a creation, the first is the creation snapshot) — several
    when the agent yielded them together: one write, not one per event. A
    store that :attr:`~TaskStore.keeps_events` logs them as versions
    ``expected_version + 1``, ... in the same transaction (a write given no
    events logs the task snapshot); others only count them.

    ``outbox`` rows are written in the same transaction, as rows of
    ``owner``'s task. ``fence``: the
    write commits only while that execution lease holds (cluster-capable
    stores only). ``append``: the write only appends that chunk to the
    artifact of its id (an artifact update with ``append=true``; ``task`` is
    the result, status unchanged, at most one event); a store may then write
    just the chunk and fold it back in on read
    (``protocol._taskupdate.extend_artifact``), so that streaming an
    artifact costs its size, not its size squared. Storing ``task`` whole is
    also correct.

    A NamedTuple: frozen, and built in one call (a frozen dataclass sets each
    field through ``object.__setattr__``, several times the cost, on every
    write of the request path)."""

    task: pb.Task
    owner: Owner
    expected_version: int = 0
    events: Sequence[pb.StreamResponse] = ()
    outbox: Sequence[OutboxEntry] = ()
    fence: Fence | None = None
    append: pb.Artifact | None = None

    @property
    def version(self) -> int:
        """The version the task has once this write commits."""
        return self.expected_version + (len(self.events) or 1)


class StoreLifecycle(Protocol):
    """Opening and closing a backend (the server does both)."""

    async def open(self) -> None:
        """Connects and creates the schema if needed. Idempotent."""

    async def close(self) -> None:
        """Releases connections."""


class TaskStore(Protocol):
    """Where tasks live: the request handler and its executions use this."""

    @property
    def keeps_events(self) -> bool:
        """Whether the store keeps the events of each write (a task-event log,
        as the cluster store's) or only counts them (declared by the class)."""

    async def update(self, write: TaskWrite) -> int:
        """Stores ``write`` (see :class:`TaskWrite`) and returns the task's
        new version, :attr:`TaskWrite.version`.

        Raises, with nothing written: TaskExistsError for a creation whose
        owner already holds the id; VersionConflictError when the stored
        version is not ``expected_version`` (or the task is missing or not
        ``owner``'s); LeaseLostError (a VersionConflictError) when a ``fence``
        no longer holds; ValueError for a ``fence`` given to a store without
        leases."""

    async def get(self, task_id: str, owner: Owner) -> StoredTask | None:
        """``owner``'s task and its version, or None."""

    async def list_tasks(self, owner: Owner, query: ListQuery) -> ListPage:
        """One page of ``owner``'s tasks matching ``query`` (spec §3.1.4)."""


class PushConfigStore(Protocol):
    """Webhook configs (spec §3.1.7–3.1.10): the handler manages them, push
    delivery reads them. Each config records the dialect it was registered
    in."""

    async def put_push_config(
        self, owner: Owner, config: pb.TaskPushNotificationConfig, *, dialect: str = V1_DIALECT
    ) -> None:
        """Creates or replaces the config (``config.task_id``, ``config.id``),
        registered in ``dialect``."""

    async def get_push_config(
        self, owner: Owner, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        """The config, or None."""

    async def get_push_target(
        self, owner: Owner, task_id: str, config_id: str
    ) -> tuple[pb.TaskPushNotificationConfig, str] | None:
        """The config and the dialect it was registered in, or None (push
        delivery: an outbox entry names its owner)."""

    async def list_push_configs(
        self, owner: Owner, task_id: str, *, limit: int | None = None, after_id: str | None = None
    ) -> list[pb.TaskPushNotificationConfig]:
        """The task's configs ordered by creation; at most ``limit``, starting
        after the config whose id is ``after_id``."""

    async def delete_push_config(self, owner: Owner, task_id: str, config_id: str) -> bool:
        """Removes the config and its pending deliveries; False if absent."""

    async def count_push_configs(self, owner: Owner, task_id: str | None = None) -> int:
        """How many configs the owner has (on one task, when given)."""


class PushOutbox(Protocol):
    """The delivery side of the push outbox (rows are written by
    :meth:`TaskStore.update`): the push dispatcher uses this."""

    async def outbox_due(self, now: float, limit: int) -> list[OutboxRecord]:
        """Pending entries with ``next_attempt_at <= now``, oldest ``seq``
        first, at most ``limit``."""

    async def outbox_mark(
        self, seq: int, *, state: str, attempts: int, next_attempt_at: float, last_error: str = ""
    ) -> None:
        """Records the outcome of a delivery attempt."""

    async def outbox_count(self, state: str) -> int:
        """How many entries are in ``state``."""


class Store(StoreLifecycle, TaskStore, PushConfigStore, PushOutbox, Protocol):
    """One backend holding all of it, as :class:`~a2a_grpc.store._memory.InMemoryTaskStore`
    and :class:`~a2a_grpc.store._sql.SqlTaskStore` are: what a server opens,
    hands to its handler and push dispatcher, and closes."""
