"""An in-process store: dictionaries and sorted indexes, nothing durable.

Good for tests, demos and ``a2a-grpc serve --store memory``. Every method runs
without awaiting anything, so a compare-and-swap check and its write can never
interleave with another coroutine on the same event loop.

Tasks are keyed by owner and id (a :data:`~a2a_grpc.core.ports.TaskKey`):
another owner's task of the same id is another task. ListTasks keeps, per
owner, sorted ``(status_ts_ms, task_id)`` keys (all tasks, per contextId and
per state), so a page costs a binary search plus the page itself instead of
sorting every task on every call.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from google.protobuf.timestamp_pb2 import Timestamp

from a2a_grpc.context import Owner
from a2a_grpc.core.ports import (
    V1_DIALECT,
    ListPage,
    ListQuery,
    OutboxEntry,
    OutboxRecord,
    StoredTask,
    TaskExistsError,
    TaskKey,
    TaskWrite,
    VersionConflictError,
)
from a2a_grpc.protocol._taskupdate import extend_artifact
from a2a_grpc.types import TERMINAL_STATES, pb

__all__ = ["InMemoryTaskStore", "status_ts_ms"]

_Key = tuple[int, str]  # (status timestamp in ms, task id)


_NO_FENCE = "the in-memory store has no execution leases: cluster mode needs PostgreSQL"


def status_ts_ms(task: pb.Task) -> int:
    """``task.status.timestamp`` in milliseconds since the Unix epoch (0 when unset)."""
    return _ms(task.status.timestamp)


def _ms(ts: Timestamp) -> int:
    """``ts.ToMilliseconds()`` (ValueError out of its range), each field read
    once: that method reads both twice and checks them in Python code."""
    seconds, nanos = ts.seconds, ts.nanos
    if not (-62135596800 <= seconds <= 253402300799 and 0 <= nanos < 1_000_000_000):
        return ts.ToMilliseconds()  # (raises the ValueError)
    return seconds * 1000 + nanos // 1_000_000


def _copy_config(config: pb.TaskPushNotificationConfig) -> pb.TaskPushNotificationConfig:
    out = pb.TaskPushNotificationConfig()
    out.CopyFrom(config)
    return out


#: One stored task: (serialized task, tenant, user, version, (status ms, id),
#: context id, state, serialized artifact chunks appended since ``data`` was
#: written — folded in on read). A plain tuple of atoms, so CPython stops tracking it in
#: the cyclic GC: full collections — whose pauses were the p99 tail of a server
#: holding many tasks — then cost nothing per stored task. The task is kept
#: serialized for the same reason (a parsed proto is a tree the GC walks), and
#: a copy out is one parse either way. Rows are replaced, never changed.
_Row = tuple[bytes, str, str, int, _Key, str, int, tuple[bytes, ...]]
_DATA: Final = 0
_TENANT: Final = 1
_USER: Final = 2
_VERSION: Final = 3
_KEY: Final = 4
_CONTEXT: Final = 5
_STATE: Final = 6
_CHUNKS: Final = 7


def _row(task: pb.Task, owner: Owner, version: int, task_id: str) -> _Row:
    """The row of ``owner``'s ``task`` at ``version``."""
    status = task.status  # (read once: each read of a field is a lookup)
    key = (_ms(status.timestamp), task_id)
    return (
        task.SerializeToString(),
        owner.tenant,
        owner.user,
        version,
        key,
        task.context_id,
        status.state,
        (),
    )


def _task_of(row: _Row) -> pb.Task:
    """The row's task, its appended chunks folded in."""
    task = pb.Task.FromString(row[_DATA])
    for chunk in row[_CHUNKS]:
        extend_artifact(task, pb.Artifact.FromString(chunk))
    return task


def _appended(row: _Row, task: pb.Task, chunk: pb.Artifact) -> _Row | None:
    """``row`` one version on with ``chunk`` kept apart, or None when ``task``
    moved more than an append would (then it is stored whole)."""
    if (status_ts_ms(task), task.id) != row[_KEY] or (task.context_id, task.status.state) != (
        row[_CONTEXT],
        row[_STATE],
    ):
        return None
    data, tenant, user, version, key, context, state, chunks = row
    return (data, tenant, user, version + 1, key, context, state, (*chunks, chunk.SerializeToString()))


@dataclass(slots=True)
class _OutboxRow:
    entry: OutboxEntry
    attempts: int = 0
    next_attempt_at: float = 0.0
    state: str = "pending"
    last_error: str = ""


@dataclass(slots=True)
class _OwnerIndex:
    """Ascending ``(status_ts_ms, id)`` keys of one owner's tasks."""

    all: list[_Key] = field(default_factory=list)
    by_context: dict[str, list[_Key]] = field(default_factory=dict)
    by_state: dict[int, list[_Key]] = field(default_factory=dict)


def _insort(keys: list[_Key], key: _Key) -> None:
    bisect.insort(keys, key)


def _remove(keys: list[_Key], key: _Key) -> None:
    i = bisect.bisect_left(keys, key)
    if i < len(keys) and keys[i] == key:
        del keys[i]


class InMemoryTaskStore:
    """Every store protocol of :mod:`a2a_grpc.core.ports` (a
    :class:`~a2a_grpc.core.ports.Store`) kept in memory.

    Protos are copied on the way in and out; versions start at 1 and grow by
    one per event written. Push configs of one task are listed in creation
    order (replacing a config keeps its place). Outbox ``seq`` numbers grow
    from 1 in insertion order.
    """

    #: No task-event log: the events of a write are counted, not kept.
    keeps_events: Final = False

    def __init__(self) -> None:
        self._tasks: dict[TaskKey, _Row] = {}
        self._index: dict[tuple[str, str], _OwnerIndex] = {}  # by (tenant, user)
        # (owner, task_id) -> config id -> config, in creation order.
        self._configs: dict[tuple[Owner, str], dict[str, pb.TaskPushNotificationConfig]] = {}
        self._dialects: dict[tuple[Owner, str], dict[str, str]] = {}  # beside _configs: their dialects
        self._config_counts: dict[Owner, int] = {}
        self._outbox: dict[int, _OutboxRow] = {}
        self._pending: list[int] = []  # sorted seqs of pending rows
        self._state_counts: dict[str, int] = {}
        self._next_seq = 1

    async def open(self) -> None:
        """Nothing to connect to; idempotent."""

    async def close(self) -> None:
        """Keeps the data (a closed in-memory store may be reopened)."""

    # --- tasks ---------------------------------------------------------------

    def _index_add(self, row: _Row) -> None:
        owner = (row[_TENANT], row[_USER])
        idx = self._index.get(owner)
        if idx is None:  # (not setdefault: that would build an index per call)
            idx = self._index[owner] = _OwnerIndex()
        _insort(idx.all, row[_KEY])
        _insort(idx.by_context.setdefault(row[_CONTEXT], []), row[_KEY])
        _insort(idx.by_state.setdefault(row[_STATE], []), row[_KEY])

    def _index_remove(self, row: _Row) -> None:
        idx = self._index[(row[_TENANT], row[_USER])]
        _remove(idx.all, row[_KEY])
        _remove(idx.by_context[row[_CONTEXT]], row[_KEY])
        _remove(idx.by_state[row[_STATE]], row[_KEY])

    async def update(self, write: TaskWrite) -> int:
        """Stores ``write`` (a creation at ``expected_version`` 0) and queues
        its outbox rows; returns the new version, one on per event (the events
        are not kept: this store has no event log). An ``append`` chunk is kept
        apart (the task is not serialized again) and folded in on read.

        Raises, writing nothing: TaskExistsError when the owner already holds
        a created id; VersionConflictError when the version moved on or the
        task is missing or not the owner's; ValueError for a ``fence`` (no
        leases here: cluster mode needs PostgreSQL)."""
        task, owner, expected, events, outbox, fence, append = write
        if fence is not None:
            raise ValueError(_NO_FENCE)
        task_id = task.id
        key = (owner.tenant, owner.user, task_id)
        row = self._tasks.get(key)
        version = expected + (len(events) or 1)
        if expected == 0:
            if row is not None:
                raise TaskExistsError(task_id)
            row = self._tasks[key] = _row(task, owner, version, task_id)
            self._index_add(row)
        elif row is None or row[_VERSION] != expected:
            raise VersionConflictError(task_id)
        else:
            moved = _appended(row, task, append) if append is not None and len(events) < 2 else None
            if moved is not None:
                self._tasks[key] = moved
            else:
                was, row = row, _row(task, owner, version, task_id)
                self._tasks[key] = row
                if (was[_KEY], was[_CONTEXT], was[_STATE]) != (row[_KEY], row[_CONTEXT], row[_STATE]):
                    self._index_remove(was)  # the keys moved (an artifact update keeps them)
                    self._index_add(row)
        if outbox:
            self._queue(outbox, owner)
        return version

    def _queue(self, outbox: Sequence[OutboxEntry], owner: Owner) -> None:
        """Appends pending outbox rows of ``owner``'s task, due now."""
        now = time.time()
        for entry in outbox:
            if entry.owner != owner:  # the rows of a write are its task's
                entry = replace(entry, owner=owner)
            seq = self._next_seq
            self._next_seq += 1
            self._outbox[seq] = _OutboxRow(entry=entry, next_attempt_at=now)
            self._pending.append(seq)  # seqs only grow: stays sorted
            self._state_counts["pending"] = self._state_counts.get("pending", 0) + 1

    async def get(self, task_id: str, owner: Owner) -> StoredTask | None:
        """A copy of ``owner``'s task and its version, or None."""
        row = self._tasks.get((owner.tenant, owner.user, task_id))
        if row is None:
            return None
        return StoredTask(_task_of(row), row[_VERSION])

    async def list_tasks(self, owner: Owner, query: ListQuery) -> ListPage:
        """One page of ``owner``'s tasks (copies), newest status first, ties by
        id descending; ``total_size`` counts all pages (spec §3.1.4)."""
        idx = self._index.get((owner.tenant, owner.user))
        if idx is None:
            return ListPage(tasks=[], has_more=False, total_size=0)
        # Walk the narrowest index; a second filter is checked per task.
        filtered: list[list[_Key]] = []
        if query.context_id:
            filtered.append(idx.by_context.get(query.context_id, []))
        if query.state:
            filtered.append(idx.by_state.get(query.state, []))
        keys = min(filtered, key=len) if filtered else idx.all
        exact = len(filtered) < 2

        tasks, tenant, user = self._tasks, owner.tenant, owner.user
        lo = 0
        if query.status_timestamp_after_ms is not None:
            lo = bisect.bisect_left(keys, (query.status_timestamp_after_ms, ""))
        hi = len(keys)
        if query.after is not None:
            hi = max(lo, bisect.bisect_left(keys, query.after))

        def matches(key: _Key) -> bool:
            row = tasks[(tenant, user, key[1])]
            return (not query.context_id or row[_CONTEXT] == query.context_id) and (
                not query.state or row[_STATE] == query.state
            )

        # total_size covers every page: from the lower bound, ignoring the cursor.
        total = len(keys) - lo if exact else sum(1 for k in keys[lo:] if matches(k))

        page: list[pb.Task] = []
        has_more = False
        i = hi - 1
        while i >= lo:
            key = keys[i]
            i -= 1
            if not exact and not matches(key):
                continue
            if len(page) == query.page_size:
                has_more = True
                break
            page.append(_task_of(tasks[(tenant, user, key[1])]))
        return ListPage(tasks=page, has_more=has_more, total_size=total)

    # --- push notification configs -------------------------------------------

    async def put_push_config(
        self, owner: Owner, config: pb.TaskPushNotificationConfig, *, dialect: str = V1_DIALECT
    ) -> None:
        """Creates or replaces (keeping its place in creation order) a copy of
        ``config``, keyed by ``config.task_id`` and ``config.id``, registered
        in ``dialect``."""
        configs = self._configs.setdefault((owner, config.task_id), {})
        if config.id not in configs:
            self._config_counts[owner] = self._config_counts.get(owner, 0) + 1
        configs[config.id] = _copy_config(config)
        self._dialects.setdefault((owner, config.task_id), {})[config.id] = dialect

    async def get_push_target(
        self, owner: Owner, task_id: str, config_id: str
    ) -> tuple[pb.TaskPushNotificationConfig, str] | None:
        """A copy of ``owner``'s config and its dialect, or None."""
        config = self._configs.get((owner, task_id), {}).get(config_id)
        if config is None:
            return None
        return _copy_config(config), self._dialects[(owner, task_id)].get(config_id, V1_DIALECT)

    async def get_push_config(
        self, owner: Owner, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        """A copy of the config, or None when missing or not ``owner``'s."""
        config = self._configs.get((owner, task_id), {}).get(config_id)
        return None if config is None else _copy_config(config)

    async def list_push_configs(
        self, owner: Owner, task_id: str, *, limit: int | None = None, after_id: str | None = None
    ) -> list[pb.TaskPushNotificationConfig]:
        """The task's configs in creation order, at most ``limit``, starting
        after ``after_id`` (nothing when ``after_id`` is not a config of the task)."""
        configs = self._configs.get((owner, task_id), {})
        ids = list(configs)
        start = 0
        if after_id is not None:
            try:
                start = ids.index(after_id) + 1
            except ValueError:
                return []
        end = len(ids) if limit is None else start + limit
        return [_copy_config(configs[i]) for i in ids[start:end]]

    async def delete_push_config(self, owner: Owner, task_id: str, config_id: str) -> bool:
        """Removes the config and its pending outbox rows; False if absent."""
        configs = self._configs.get((owner, task_id))
        if configs is None or configs.pop(config_id, None) is None:
            return False
        self._dialects[(owner, task_id)].pop(config_id, None)
        if not configs:
            del self._configs[(owner, task_id)], self._dialects[(owner, task_id)]
        self._config_counts[owner] -= 1
        dropped = [
            seq
            for seq in self._pending
            if (entry := self._outbox[seq].entry).task_id == task_id
            and entry.config_id == config_id
            and entry.owner == owner
        ]
        for seq in dropped:
            del self._outbox[seq]
            _remove_int(self._pending, seq)
        self._state_counts["pending"] = self._state_counts.get("pending", 0) - len(dropped)
        return True

    async def count_push_configs(self, owner: Owner, task_id: str | None = None) -> int:
        """How many configs ``owner`` has (on ``task_id`` only, when given)."""
        if task_id is None:
            return self._config_counts.get(owner, 0)
        return len(self._configs.get((owner, task_id), {}))

    # --- push outbox ---------------------------------------------------------

    async def outbox_due(self, now: float, limit: int) -> list[OutboxRecord]:
        """Pending rows with ``next_attempt_at <= now`` (Unix seconds), lowest
        ``seq`` first, at most ``limit``."""
        out: list[OutboxRecord] = []
        for seq in self._pending:
            if len(out) >= limit:
                break
            row = self._outbox[seq]
            if row.next_attempt_at <= now:
                out.append(
                    OutboxRecord(
                        seq=seq,
                        entry=row.entry,
                        attempts=row.attempts,
                        next_attempt_at=row.next_attempt_at,
                        state=row.state,
                        last_error=row.last_error,
                    )
                )
        return out

    async def outbox_mark(
        self, seq: int, *, state: str, attempts: int, next_attempt_at: float, last_error: str = ""
    ) -> None:
        """Records a delivery attempt's outcome on row ``seq`` (no-op if gone)."""
        row = self._outbox.get(seq)
        if row is None:
            return
        if row.state != state:
            self._state_counts[row.state] -= 1
            self._state_counts[state] = self._state_counts.get(state, 0) + 1
            if row.state == "pending":
                _remove_int(self._pending, seq)
            elif state == "pending":
                bisect.insort(self._pending, seq)
        row.state = state
        row.attempts = attempts
        row.next_attempt_at = next_attempt_at
        row.last_error = last_error

    async def outbox_count(self, state: str) -> int:
        """How many outbox rows are in ``state``."""
        return self._state_counts.get(state, 0)

    # --- retention (a2a_grpc.store._retention) ----------------------------------

    async def purge_terminal_tasks(self, before_ms: int, limit: int = 1000) -> int:
        """Deletes up to ``limit`` terminal tasks whose status timestamp is
        before ``before_ms`` (Unix ms), oldest first, with their push configs
        and outbox rows; returns how many tasks were deleted."""
        doomed = sorted(
            (
                row
                for row in self._tasks.values()
                if row[_STATE] in TERMINAL_STATES and row[_KEY][0] < before_ms
            ),
            key=lambda row: row[_KEY],
        )[:limit]
        gone = {(Owner(row[_TENANT], row[_USER]), row[_KEY][1]) for row in doomed}
        for row in doomed:
            del self._tasks[(row[_TENANT], row[_USER], row[_KEY][1])]
            self._index_remove(row)
        for owner, task_id in gone:
            self._config_counts[owner] = self._config_counts.get(owner, 0) - len(
                self._configs.pop((owner, task_id), {})
            )
            self._dialects.pop((owner, task_id), None)
        if gone:
            doomed_rows = [s for s, r in self._outbox.items() if (r.entry.owner, r.entry.task_id) in gone]
            for seq in doomed_rows:
                row_state = self._outbox.pop(seq).state
                self._state_counts[row_state] -= 1
                if row_state == "pending":
                    _remove_int(self._pending, seq)
        return len(doomed)

    # --- dead letters (a2a_grpc.store._deadletters) -----------------------------

    def _record(self, seq: int) -> OutboxRecord:
        row = self._outbox[seq]
        return OutboxRecord(seq, row.entry, row.attempts, row.next_attempt_at, row.state, row.last_error)

    async def dead_letters(self, limit: int = 100, after_seq: int = 0) -> list[OutboxRecord]:
        """Dead rows with ``seq > after_seq``, lowest first, at most ``limit``."""
        seqs = sorted(s for s, r in self._outbox.items() if r.state == "dead" and s > after_seq)
        return [self._record(s) for s in seqs[:limit]]

    async def dead_letter(self, seq: int) -> OutboxRecord | None:
        """The dead row ``seq``, or None."""
        row = self._outbox.get(seq)
        return self._record(seq) if row is not None and row.state == "dead" else None

    async def redrive_dead_letter(self, seq: int) -> bool:
        """Makes the dead row ``seq`` pending again, due now, with no attempts
        counted; False when there is no such dead row."""
        if await self.dead_letter(seq) is None:
            return False
        await self.outbox_mark(
            seq, state="pending", attempts=0, next_attempt_at=time.time(), last_error="redriven"
        )
        return True

    async def drop_dead_letter(self, seq: int) -> bool:
        """Deletes the dead row ``seq``; False when there is no such dead row."""
        if await self.dead_letter(seq) is None:
            return False
        del self._outbox[seq]
        self._state_counts["dead"] -= 1
        return True


def _remove_int(seqs: list[int], seq: int) -> None:
    i = bisect.bisect_left(seqs, seq)
    if i < len(seqs) and seqs[i] == seq:
        del seqs[i]
