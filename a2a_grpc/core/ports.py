"""The store protocols: durable tasks, push configs and the push outbox.

Three small protocols, so that each user names only what it uses:
:class:`TaskStore` (the handler's tasks), :class:`PushConfigStore` (webhook
configs) and :class:`PushOutbox` (pending push deliveries), plus
:class:`StoreLifecycle` (open, close). A backend implements all of them
(:class:`Store`).

Stores copy protos in and out (messages are mutable), so what a caller gets is
a snapshot it may change freely. Task updates are versioned compare-and-swap:
``update`` succeeds only if the stored version is still the one the caller read,
which keeps a terminal task final and two writers from losing each other's
changes (design.md, "terminal is final").

Every task belongs to an :class:`~a2a_grpc.context.Owner` (tenant + user);
asking with another owner behaves exactly like asking for a missing task
(spec §13.1).

A push config also records the **dialect** it was registered in (``"1.0"``,
``"0.3"``, …; legacy digest C21): its webhook gets bodies in that dialect.
That is optional for a backend (:class:`PushDialects`); the core goes through
:func:`put_push_config` and :func:`get_push_target`, which treat a store
without it as one where every config is v1.0.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

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
    "PushDialects",
    "PushOutbox",
    "Store",
    "StoreLifecycle",
    "StoredTask",
    "TaskExistsError",
    "TaskStore",
    "VersionConflictError",
    "get_push_target",
    "put_push_config",
]

#: The dialect of a push config registered over A2A 1.0 (and of any config a
#: store records no dialect for): its webhook gets ``StreamResponse`` bodies.
V1_DIALECT = "1.0"
log = logging.getLogger(__name__)


class VersionConflictError(Exception):
    """``update`` lost a compare-and-swap race (or the task vanished)."""


class TaskExistsError(Exception):
    """``create`` was given an id that is already stored."""


class LeaseLostError(VersionConflictError):
    """A fenced write found that its execution no longer holds the task's
    lease (it expired and another replica took the task over, or the task was
    canceled elsewhere): nothing was written, and the execution must stop."""


@dataclass(frozen=True, slots=True)
class Fence:
    """The execution lease a write is fenced by (cluster mode, design.md
    "Replicas"): the write commits only while the lease of ``task_id`` still
    has ``epoch``. Epochs are unique cluster-wide and grow with every lease
    taken, so a replica that was paused or cut off while another took the task
    over can never write again (LeaseLostError)."""

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
    task update that caused it (issue: durable push).

    ``payload`` is a serialized ``pb.StreamResponse``; ``event_id`` is stable
    across retries so receivers can drop duplicates. ``trace_context`` is the
    W3C ``traceparent`` of the span that wrote the update ("" when not
    traced): the delivery continues that trace.
    """

    task_id: str
    config_id: str
    event_id: str
    payload: bytes
    trace_context: str = ""


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


class StoreLifecycle(Protocol):
    """Opening and closing a backend (the server does both)."""

    async def open(self) -> None:
        """Connects and creates the schema if needed. Idempotent."""

    async def close(self) -> None:
        """Releases connections."""


class TaskStore(Protocol):
    """Where tasks live: the request handler and its executions use this."""

    async def create(
        self,
        task: pb.Task,
        owner: Owner,
        *,
        fence: Fence | None = None,
        events: Sequence[pb.StreamResponse] = (),
    ) -> int:
        """Stores a new task and returns its version: 1, or ``len(events)``
        when given the stream events that made it — the creation snapshot,
        then the events applied on top in the same write (a store with a
        task-event log keeps them as versions 1, 2, ...; ``task`` is the
        result). One write instead of one per event (issue 17).

        Raises TaskExistsError if the id is taken (by any owner). With a
        ``fence`` (cluster-capable stores only; others raise ValueError) the
        insert commits only while that lease holds, else LeaseLostError."""

    async def get(self, task_id: str, owner: Owner) -> StoredTask | None:
        """The task and its version, or None when missing or not ``owner``'s."""

    async def update(
        self,
        task: pb.Task,
        owner: Owner,
        expected_version: int,
        *,
        outbox: Sequence[OutboxEntry] = (),
        fence: Fence | None = None,
        events: Sequence[pb.StreamResponse] = (),
        append: pb.Artifact | None = None,
    ) -> int:
        """Replaces the task if its stored version is ``expected_version``;
        returns the new version: ``expected_version + len(events)`` (+ 1 for
        an update given no events). ``events`` are the stream events that
        made ``task`` from the stored one, in order — several when the agent
        yielded them together (issue 17: one write, not one per event). The
        ``outbox`` entries are written in the same transaction, and so are
        the events, as versions ``expected_version + 1``, ..., in a store that
        keeps a task-event log (the cluster store; others ignore them).

        ``append``: this update only appends that chunk to the artifact of its
        id (an artifact update with ``append=true``; ``task`` is the result,
        status unchanged). A store may then write just the chunk and fold it
        back in on read (``taskupdate.extend_artifact``), so that streaming an
        artifact costs its size, not its size squared (issue 10); storing
        ``task`` whole is also correct. It comes with at most one event.

        Raises VersionConflictError otherwise (nothing is written), and its
        subclass LeaseLostError when a ``fence`` is given (cluster-capable
        stores only; others raise ValueError) and its lease no longer holds."""

    async def list_tasks(self, owner: Owner, query: ListQuery) -> ListPage:
        """One page of ``owner``'s tasks matching ``query`` (spec §3.1.4)."""


class PushConfigStore(Protocol):
    """Webhook configs (spec §3.1.7–3.1.10): the handler manages them, push
    delivery reads them."""

    async def put_push_config(self, owner: Owner, config: pb.TaskPushNotificationConfig) -> None:
        """Creates or replaces the config (``config.task_id``, ``config.id``)."""

    async def get_push_config(
        self, owner: Owner, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        """The config, or None."""

    async def list_push_configs(
        self, owner: Owner, task_id: str, *, limit: int | None = None, after_id: str | None = None
    ) -> list[pb.TaskPushNotificationConfig]:
        """The task's configs ordered by creation; at most ``limit``, starting
        after the config whose id is ``after_id``."""

    async def delete_push_config(self, owner: Owner, task_id: str, config_id: str) -> bool:
        """Removes the config and its pending deliveries; False if absent."""

    async def count_push_configs(self, owner: Owner, task_id: str | None = None) -> int:
        """How many configs the owner has (on one task, when given)."""

    async def get_push_config_any_owner(
        self, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        """The config whatever its owner (task ids are globally unique): used
        by push delivery, whose outbox rows carry no owner."""


@runtime_checkable
class PushDialects(Protocol):
    """A :class:`PushConfigStore` that keeps each config's dialect (optional;
    the memory and SQL stores do)."""

    async def put_push_config(
        self, owner: Owner, config: pb.TaskPushNotificationConfig, *, dialect: str = V1_DIALECT
    ) -> None:
        """As :meth:`PushConfigStore.put_push_config`, recording ``dialect``."""

    async def get_push_target(
        self, task_id: str, config_id: str
    ) -> tuple[pb.TaskPushNotificationConfig, str] | None:
        """The config whoever owns it and its dialect, or None (for push delivery)."""


async def put_push_config(
    store: PushConfigStore, owner: Owner, config: pb.TaskPushNotificationConfig, dialect: str = V1_DIALECT
) -> None:
    """Stores ``config`` registered in ``dialect``; a store that keeps no
    dialects stores it as v1.0 (its webhook then gets v1.0 bodies: logged)."""
    if isinstance(store, PushDialects):
        await store.put_push_config(owner, config, dialect=dialect)
        return
    if dialect != V1_DIALECT:
        log.warning(
            "%s keeps no push-config dialects: config %s of task %s gets A2A 1.0 bodies, not %s",
            type(store).__name__,
            config.id,
            config.task_id,
            dialect,
        )
    await store.put_push_config(owner, config)


async def get_push_target(
    store: PushConfigStore, task_id: str, config_id: str
) -> tuple[pb.TaskPushNotificationConfig, str] | None:
    """The config (whoever owns it) and the dialect it was registered in, or
    None; ``"1.0"`` for a store that keeps no dialects."""
    if isinstance(store, PushDialects):
        return await store.get_push_target(task_id, config_id)
    config = await store.get_push_config_any_owner(task_id, config_id)
    return None if config is None else (config, V1_DIALECT)


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
