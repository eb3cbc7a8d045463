"""The cluster store: the SQL store on PostgreSQL plus the execution leases.

One row per running execution in ``<prefix>leases``: the task id and its
owner (the primary key: one execution per task cluster-wide; a task id names
a task of one owner), the replica running it, the lease *epoch* and the
expiry. Epochs come from one sequence
(``<prefix>lease_epoch``), so they are unique cluster-wide and grow with every
lease taken: a takeover gives the task a new epoch and the old holder's
fence no longer matches, whether or not anybody wrote the task in between.
Expiry is in the database's clock (``clock_timestamp()``, seconds), so the
replicas' clocks never meet.

Every task write also appends the stream event it produced to
``<prefix>task_events`` (task id and owner, version, event bytes, whether the
task is terminal after it, commit time) in the same transaction, and sends
``pg_notify('<prefix>events', payload)``, which PostgreSQL delivers to the
listening replicas only once the transaction commits
(:mod:`a2a_grpc.cluster._bus`). The payload (:func:`notification`) names the
task by its owner and id and carries the event itself when it fits
PostgreSQL's 8000-byte limit, so a listener needs no query for it. Each
version of a task has exactly one event row, so a reader that knows version V
reads the rest with ``version > V``.

Push delivery is claimed per (task, config) pair (of one owner) in ``<prefix>push_claims``
(:meth:`ClusterStore.outbox_due`): every replica runs a dispatcher, and a
pair's rows go out from the one replica holding its claim, in outbox order;
the claim is renewed by each read and dropped when the pair has nothing
pending. The claim of a replica that died expires and another replica sends
what it left unmarked again, with the same ``A2A-Notification-Id``.

The lease rides the task's own writes where it can: a new task's is taken by
the write that creates it, in the same transaction (its fence is a
:class:`NewLease` until then: the task does not exist before that commit, so
no write of it can be fenced off), and none is taken when that write leaves
the task terminal; the fenced write that leaves a task terminal deletes the
lease row after its fence check, in the same transaction
(``on_lease_dropped`` once committed; nothing of an execution is written
after its terminal write). So an execution of one write (the echo agent's
SendMessage) runs no lease statement of its own, and a blocking caller is
answered at that commit (a new task with a push config keeps the lease its
creation took even when terminal: the creation snapshot's outbox write
follows, and drops it). An execution that continues an existing task takes
the lease before the agent runs
(:meth:`ClusterStore.acquire_lease`); one that ends without a terminal write
(input-required, auth-required) releases it as it ends
(:meth:`ClusterStore.release_lease`): both are bodies of the group commit,
sharing its transactions. What lease timing depends on (the heartbeat, the
reaper's takeovers, a forced cancel's steal) and the push claims run on the
pooled connections, each in a transaction of its own, so they never wait
behind a batch of task writes.

Every write of an execution is fenced (:meth:`ClusterStore.check_fence`): its
transaction first takes the lease row ``FOR KEY SHARE`` at the execution's
epoch and commits only if it is still there; a takeover changes the row's
epoch (a unique column, so it needs the row's ``FOR UPDATE`` lock), so the two
serialize and no write of the old holder commits after the takeover did. A
heartbeat changes only the expiry (``FOR NO KEY UPDATE``), which never waits
for the fenced writes in flight.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from collections.abc import Sequence as SequenceOf
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Double,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Sequence,
    String,
    Table,
    inspect,
    text,
)
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from a2a_grpc.context import Owner
from a2a_grpc.core.ports import Fence, LeaseLostError, OutboxEntry, OutboxRecord, TaskKey, TaskWrite
from a2a_grpc.store._sql import SqlTaskStore
from a2a_grpc.store._sql.schema import rekey
from a2a_grpc.types import is_terminal, pb

__all__ = [
    "NOTIFY_LIMIT",
    "ClusterStore",
    "NewLease",
    "TakenLease",
    "ends_task",
    "notification",
    "parse_notification",
]

_NOW = "EXTRACT(EPOCH FROM clock_timestamp())"

#: The longest NOTIFY payload, bytes: PostgreSQL refuses 8000 and more
#: (its default ``BLCKSZ``).
NOTIFY_LIMIT = 7999


def notification(key: TaskKey, version: int, event: bytes, limit: int = NOTIFY_LIMIT) -> str:
    """The NOTIFY payload of a task's new version:
    ``version:event:len(tenant):len(user):tenant user task id`` (the event in
    base64, or empty when the payload would exceed ``limit`` bytes: the
    listener then reads the row). The owner's and the task's strings go last,
    their lengths first, so they may hold any character, ``:`` included."""
    tenant, user, task_id = key
    tail = f":{len(tenant)}:{len(user)}:{tenant}{user}{task_id}"
    size = len(str(version)) + 1 + len(tail.encode())
    if size + (len(event) + 2) // 3 * 4 > limit:
        return f"{version}:{tail}"
    return f"{version}:{base64.b64encode(event).decode('ascii')}{tail}"


def parse_notification(payload: str) -> tuple[TaskKey, int, bytes | None]:
    """(the task's key, version, the event's bytes or None when it was left
    out) of a :func:`notification` payload; raises ValueError for anything else."""
    version, event, tenant_len, user_len, rest = payload.split(":", 4)
    at, end = int(tenant_len), int(tenant_len) + int(user_len)
    key = (rest[:at], rest[at:end], rest[end:])
    if not key[2] or len(rest) < end:
        raise ValueError(f"no task id in notification {payload[:80]!r}")
    try:
        data = binascii.a2b_base64(event, strict_mode=True) if event else None
    except binascii.Error as exc:
        raise ValueError(f"bad event in notification for task {key[2]!r}: {exc}") from None
    return key, int(version), data


def control_message(verb: str, key: TaskKey) -> str:
    """A control message between replicas about one task: ``verb:len(tenant):len(user):tenant user task id``."""
    tenant, user, task_id = key
    return f"{verb}:{len(tenant)}:{len(user)}:{tenant}{user}{task_id}"


def parse_control(payload: str) -> tuple[str, TaskKey]:
    """(verb, the task's key) of a :func:`control_message`; ValueError for anything else."""
    verb, tenant_len, user_len, rest = payload.split(":", 3)
    at, end = int(tenant_len), int(tenant_len) + int(user_len)
    if len(rest) <= end:
        raise ValueError(f"no task id in control message {payload[:80]!r}")
    return verb, (rest[:at], rest[at:end], rest[end:])


@dataclass(frozen=True, slots=True)
class TakenLease:
    """An expired lease a reaper took over: the task, its owner, the replica
    that held it, and the new fence (the reaper's epoch)."""

    owner: Owner
    previous_replica: str
    fence: Fence


@dataclass(frozen=True, slots=True, eq=False)
class NewLease(Fence):
    """The fence of an execution whose task does not exist yet: its lease is
    taken by the write that creates the task (:meth:`ClusterStore.create`),
    for ``replica`` and ``ttl`` seconds, unless that write leaves the task
    terminal (then no lease is needed) and not ``always`` (a second write of
    the execution follows, which drops it). ``taken`` is called once the
    creation committed, with the lease's real fence (None: no lease was
    taken). Its own epoch is 0, which no lease has: a write fenced by it
    that is not a creation fails with LeaseLostError."""

    replica: str
    ttl: float
    taken: Callable[[Fence | None], None]
    epochs: list[int]  # the epoch the creation body took (the body may run twice)
    always: bool = False


def _leases_table(md: MetaData, prefix: str) -> Table:
    return Table(
        f"{prefix}leases",
        md,
        Column("task_id", String(collation="C"), primary_key=True),
        Column("tenant", String(), primary_key=True),
        Column("owner_user", String(), primary_key=True),
        Column("replica", String(), nullable=False),
        Column("epoch", BigInteger(), nullable=False, unique=True),
        Column("expires_at", Double(), nullable=False),
    )


def _events_table(md: MetaData, prefix: str) -> Table:
    events = Table(
        f"{prefix}task_events",
        md,
        Column("task_id", String(collation="C"), primary_key=True),
        Column("tenant", String(), primary_key=True),
        Column("owner_user", String(), primary_key=True),
        Column("version", Integer(), primary_key=True),
        Column("event", LargeBinary(), nullable=False),
        Column("final", Boolean(), nullable=False),
        Column("created_at", Double(), nullable=False),
    )
    Index(f"{prefix}task_events_final", events.c.created_at, postgresql_where=events.c.final)
    return events


def _claims_table(md: MetaData, prefix: str) -> Table:
    return Table(
        f"{prefix}push_claims",
        md,
        Column("task_id", String(collation="C"), primary_key=True),
        Column("config_id", String(collation="C"), primary_key=True),
        Column("tenant", String(), primary_key=True),
        Column("owner_user", String(), primary_key=True),
        Column("replica", String(), nullable=False),
        Column("until", Double(), nullable=False),
    )


class ClusterStore(SqlTaskStore):
    """:class:`~a2a_grpc.store._sql.SqlTaskStore` on PostgreSQL with the
    lease table and the task-event log; raises ValueError for any other
    database (SQLite is one process: it has no cluster mode).
    ``idle_transaction_timeout`` (seconds; the lease TTL in ``a2a-grpc serve``)
    bounds how long a frozen replica's open transaction may hold its locks."""

    def __init__(
        self,
        url: str,
        *,
        table_prefix: str = "a2a_",
        echo: bool = False,
        idle_transaction_timeout: float = 10.0,
    ) -> None:
        super().__init__(url, table_prefix=table_prefix, echo=echo)
        self.idle_transaction_timeout = idle_transaction_timeout
        if self._is_sqlite:
            raise ValueError("cluster mode needs PostgreSQL: SQLite serves one process only")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", table_prefix):
            raise ValueError(f"table prefix {table_prefix!r} must be a plain SQL identifier")
        md = self.schema.metadata
        self.epochs = Sequence(f"{table_prefix}lease_epoch", metadata=md)
        self.leases = _leases_table(md, table_prefix)
        self.events = _events_table(md, table_prefix)
        self.push_claims = _claims_table(md, table_prefix)
        #: The NOTIFY channel of this store's task events.
        self.channel = f"{table_prefix}events"
        #: The NOTIFY channel of control messages between replicas (:func:`control_message`).
        self.control_channel = f"{table_prefix}control"
        #: This replica's name on the push claims it takes (set by the cluster).
        self.claimant = ""
        #: How long a push claim lives unless renewed, seconds.
        self.push_claim_seconds = 60.0
        #: Whether each event write also NOTIFYs (the PostgreSQL bus); another
        #: bus sets it False and is told of each commit by ``on_commit``.
        self.notify_in_transaction = True
        #: Called with (the task's key, version, the events logged: versions
        #: up to ``version``, in order) once a task write has committed.
        self.on_commit: Callable[[TaskKey, int, SequenceOf[pb.StreamResponse]], None] | None = None
        #: Called with the fence of a write that dropped its lease, once committed.
        self.on_lease_dropped: Callable[[Fence], None] | None = None
        #: Epochs whose lease a write in flight drops (the heartbeat must not
        #: take their absence for a takeover).
        self.dropping: set[int] = set()
        self._event_statements()
        self._lease_statements()
        self._sql_claim, self._sql_claimed_rows = self._claim_statements()
        self._sql_unclaim = text(
            f"DELETE FROM {self.push_claims.name} c USING {self.schema.outbox.name} o "
            "WHERE o.seq = :seq AND c.task_id = o.task_id AND c.config_id = o.config_id "
            "AND c.tenant = o.tenant AND c.owner_user = o.owner_user "
            "AND c.replica = :replica AND NOT EXISTS (SELECT 1 FROM "
            f"{self.schema.outbox.name} p WHERE p.task_id = o.task_id AND p.config_id = o.config_id "
            "AND p.tenant = o.tenant AND p.owner_user = o.owner_user AND p.state = 'pending')"
        )

    def _event_statements(self) -> None:
        ev = self.events.name
        columns = "(task_id, tenant, owner_user, version, event, final, created_at)"
        one = f"INSERT INTO {ev} {columns} VALUES (:task, :tenant, :user, :version, :event, :final, {_NOW})"
        self._sql_event = text(one)
        self._sql_notify = text("SELECT pg_notify(:channel, :payload)")
        # The event row and its NOTIFY in one statement (one round trip per write).
        self._sql_event_notify = text(f"WITH logged AS ({one}) SELECT pg_notify(:channel, :payload)")
        # Several events of one write: the rows from arrays, then one NOTIFY
        # per event in array (version) order.
        many = (
            f"INSERT INTO {ev} {columns} SELECT :task, :tenant, :user, t.v, t.e, t.f, {_NOW} "
            "FROM unnest(CAST(:versions AS INTEGER[]), CAST(:events AS BYTEA[]), CAST(:finals AS BOOLEAN[])) "
            "AS t(v, e, f)"
        )
        self._sql_events = text(many)
        self._sql_events_notify = text(
            f"WITH logged AS ({many}) "
            "SELECT pg_notify(:channel, p.payload) FROM unnest(CAST(:payloads AS TEXT[])) "
            "WITH ORDINALITY AS p(payload, n) ORDER BY p.n"
        )
        self._sql_after = text(
            f"SELECT version, event, final FROM {ev} WHERE task_id = :task AND tenant = :tenant "
            "AND owner_user = :user AND version > :after ORDER BY version"
        )
        #: The same for a raw asyncpg connection (the relay's own).
        self.raw_events_after = (
            f"SELECT version, event, final FROM {ev} WHERE task_id = $1 AND tenant = $2 AND owner_user = $3 "
            "AND version > $4 ORDER BY version"
        )
        self._sql_prune = text(
            f"DELETE FROM {ev} WHERE (task_id, tenant, owner_user) IN (SELECT task_id, tenant, owner_user "
            f"FROM {ev} WHERE final AND created_at < {_NOW} - :age LIMIT :limit)"
        )

    def _lease_statements(self) -> None:
        lt, seq = self.leases.name, self.epochs.name
        self._sql_acquire = text(
            f"INSERT INTO {lt} (task_id, tenant, owner_user, replica, epoch, expires_at) "
            f"VALUES (:task, :tenant, :user, :replica, nextval('{seq}'), {_NOW} + :ttl) "
            "ON CONFLICT (task_id, tenant, owner_user) DO NOTHING RETURNING epoch"
        )
        self._sql_renew = text(
            f"UPDATE {lt} SET expires_at = {_NOW} + :ttl WHERE epoch = ANY(:epochs) RETURNING epoch"
        )
        self._sql_release = text(f"DELETE FROM {lt} WHERE task_id = :task AND epoch = :epoch")
        self._sql_fence = text(f"SELECT 1 FROM {lt} WHERE task_id = :task AND epoch = :epoch FOR KEY SHARE")
        self._sql_take = text(
            f"WITH expired AS (SELECT epoch, replica FROM {lt} WHERE expires_at < {_NOW} "
            "ORDER BY expires_at LIMIT :limit FOR UPDATE SKIP LOCKED) "
            f"UPDATE {lt} AS l SET replica = :replica, epoch = nextval('{seq}'), expires_at = {_NOW} + :ttl "
            "FROM expired WHERE l.epoch = expired.epoch "
            "RETURNING l.task_id, l.tenant, l.owner_user, expired.replica, l.epoch"
        )
        self._sql_count = text(f"SELECT count(*) FROM {lt}")
        self._sql_steal = text(
            f"UPDATE {lt} SET replica = :replica, epoch = nextval('{seq}'), expires_at = {_NOW} + :ttl "
            "WHERE task_id = :task AND tenant = :tenant AND owner_user = :user RETURNING epoch"
        )
        self._sql_holder = text(
            f"SELECT replica FROM {lt} WHERE task_id = :task AND tenant = :tenant AND owner_user = :user"
        )
        self._sql_end_relay = text(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = :name AND pid <> pg_backend_pid()"
        )

    #: The task-event log: every write's events are kept.
    keeps_events = True

    def log_events(
        self, conn: Connection, owner: Owner, task_id: str, first: int, events: SequenceOf[pb.StreamResponse]
    ) -> None:
        """Inside a task write: appends the events (versions ``first``, ...)
        and (PostgreSQL bus) notifies the listening replicas, one notification
        per event in version order (delivered on commit; payload
        :func:`notification`). One statement, whatever the number of events."""
        data = [event.SerializeToString() for event in events]
        key = (owner.tenant, owner.user, task_id)
        if len(data) == 1:
            row: dict[str, Any] = {"task": task_id, "tenant": owner.tenant, "user": owner.user}
            row.update(version=first, event=data[0], final=ends_task(events[0]))
            if self.notify_in_transaction:
                row.update(channel=self.channel, payload=notification(key, first, data[0]))
                conn.execute(self._sql_event_notify, row)
            else:
                conn.execute(self._sql_event, row)
            return
        versions = list(range(first, first + len(data)))
        rows: dict[str, Any] = {"task": task_id, "tenant": owner.tenant, "user": owner.user}
        rows.update(versions=versions, events=data, finals=[ends_task(event) for event in events])
        if self.notify_in_transaction:
            rows.update(channel=self.channel)
            rows["payloads"] = [notification(key, v, d) for v, d in zip(versions, data, strict=True)]
            conn.execute(self._sql_events_notify, rows)
        else:
            conn.execute(self._sql_events, rows)

    async def update(self, write: TaskWrite) -> int:
        """As the SQL store's. A creation fenced by a :class:`NewLease` takes
        the task's lease in the same transaction unless the task is created
        terminal (then ``fence.taken(None)``; else ``fence.taken`` gets the
        new lease's fence, once committed). A fenced write that leaves the
        task terminal drops the lease, in the same transaction (then
        ``on_lease_dropped(fence)``, once committed; a later write with that
        fence fails with LeaseLostError). Then ``on_commit``."""
        task, fence = write.task, write.fence
        if write.expected_version == 0:
            version = await super().update(write)
            if isinstance(fence, NewLease):
                fence.taken(Fence(task.id, fence.epochs[0]) if fence.epochs else None)
        else:
            drops = fence is not None and fence.epoch > 0 and is_terminal(task.status.state)
            if drops:
                assert fence is not None
                self.dropping.add(fence.epoch)
            try:
                version = await super().update(write)
            finally:
                if drops:
                    assert fence is not None
                    self.dropping.discard(fence.epoch)
            if drops and self.on_lease_dropped is not None:
                assert fence is not None
                self.on_lease_dropped(fence)
        if self.on_commit is not None:
            key = (write.owner.tenant, write.owner.user, task.id)
            self.on_commit(key, version, write.events or (pb.StreamResponse(task=task),))
        return version

    async def events_after(
        self, key: TaskKey, after: int, *, conn: Any = None
    ) -> list[tuple[int, pb.StreamResponse, bool]]:
        """The logged events of the task ``key`` with versions above
        ``after``, in version order: (version, event, whether the task is
        terminal after it). Read on ``conn`` (a raw asyncpg connection, one
        query at a time) when given, else on the pool."""
        tenant, user, task_id = key
        if conn is not None:
            rows = await conn.fetch(self.raw_events_after, task_id, tenant, user, after)
        else:
            params = {"task": task_id, "tenant": tenant, "user": user, "after": after}
            async with self.engine.connect() as pooled:
                rows = (await pooled.execute(self._sql_after, params)).all()
        return [(int(r[0]), pb.StreamResponse.FromString(r[1]), bool(r[2])) for r in rows]

    async def prune_events(self, older_than: float, limit: int = 1000) -> int:
        """Deletes the events of up to ``limit`` tasks that became terminal
        more than ``older_than`` seconds ago; returns how many rows went."""
        async with self._write() as conn:
            result = await conn.execute(self._sql_prune, {"age": older_than, "limit": limit})
        return int(result.rowcount or 0)

    def _claim_statements(self) -> tuple[Any, Any]:
        """Claims the (task, config) pairs that have due rows and no live
        claim of another replica; then, in a second statement, reads the due
        rows of the pairs claimed: one replica delivers a pair at a time, in
        order. Two statements, so that the read has a snapshot taken after
        the claim: a claim won because another replica has just delivered a
        row and dropped its claim must see that row as delivered (one
        statement read it pending from its older snapshot and sent it again)."""
        o, c = self.schema.outbox.name, self.push_claims.name
        pair = "task_id, config_id, tenant, owner_user"
        claim = text(
            f"WITH due AS (SELECT DISTINCT {pair} FROM {o} "
            f"WHERE state = 'pending' AND next_attempt_at <= :now ORDER BY {pair} LIMIT :limit) "
            f"INSERT INTO {c} ({pair}, replica, until) "
            f"SELECT {pair}, :replica, {_NOW} + :ttl FROM due "
            f"ON CONFLICT ({pair}) DO UPDATE SET replica = :replica, until = {_NOW} + :ttl "
            f"WHERE {c}.replica = :replica OR {c}.until < {_NOW} RETURNING {pair}"
        )
        rows = text(
            f"SELECT o.seq, o.task_id, o.config_id, o.event_id, o.payload, o.attempts, o.next_attempt_at, "
            f"o.state, o.last_error, o.tenant, o.owner_user FROM {o} o JOIN unnest(CAST(:tasks AS TEXT[]), "
            "CAST(:configs AS TEXT[]), CAST(:tenants AS TEXT[]), CAST(:users AS TEXT[])) "
            "AS h(task_id, config_id, tenant, owner_user) ON o.task_id = h.task_id AND o.config_id = h.config_id "
            "AND o.tenant = h.tenant AND o.owner_user = h.owner_user "
            "WHERE o.state = 'pending' AND o.next_attempt_at <= :now ORDER BY o.seq LIMIT :limit"
        )
        return claim, rows

    async def outbox_due(self, now: float, limit: int) -> list[OutboxRecord]:
        """Due rows of the (task, config) pairs this replica claims (see the
        module docstring): a pair claimed by a live other replica is left to
        it; the claim of a dead one expires after ``push_claim_seconds`` and
        its unmarked rows are sent again, with the same notification ids."""
        params = {"now": now, "limit": limit, "replica": self.claimant, "ttl": self.push_claim_seconds}
        async with self._write() as conn:
            held = (await conn.execute(self._sql_claim, params)).all()
            if not held:
                return []
            pairs = {"tasks": [h[0] for h in held], "configs": [h[1] for h in held]}
            pairs.update(tenants=[h[2] for h in held], users=[h[3] for h in held])
            rows = (await conn.execute(self._sql_claimed_rows, {"now": now, "limit": limit, **pairs})).all()
        return [
            OutboxRecord(
                seq=r[0],
                entry=OutboxEntry(
                    task_id=r[1], config_id=r[2], event_id=r[3], payload=bytes(r[4]), owner=Owner(r[9], r[10])
                ),
                attempts=r[5],
                next_attempt_at=r[6],
                state=r[7],
                last_error=r[8],
            )
            for r in rows
        ]

    async def outbox_mark(
        self, seq: int, *, state: str, attempts: int, next_attempt_at: float, last_error: str = ""
    ) -> None:
        """As the SQL store's, then drops this replica's claim of the row's
        pair once the pair has no pending row left."""
        await super().outbox_mark(
            seq, state=state, attempts=attempts, next_attempt_at=next_attempt_at, last_error=last_error
        )
        if state != "pending":
            async with self._write() as conn:
                await conn.execute(self._sql_unclaim, {"seq": seq, "replica": self.claimant})

    def _create_schema(self, conn: Connection) -> None:
        """The SQL store's tables, then this store's of an older release
        brought to the keys of a task per owner (:meth:`_upgrade`)."""
        super()._create_schema(conn)
        self._upgrade(conn)

    def _upgrade(self, conn: Connection) -> None:
        """An older release keyed the leases, the task-event log and the push
        claims by the task id alone: the event rows get their task's owner,
        the claims (renewed by every dispatcher poll) are dropped, and each
        table gets its key with the owner. Nothing is done on tables that
        have it."""
        inspector = inspect(conn)
        events, claims, tasks = self.events.name, self.push_claims.name, self.schema.tasks.name
        if "tenant" not in {c["name"] for c in inspector.get_columns(events)}:
            owner_columns = "ADD COLUMN tenant VARCHAR NOT NULL DEFAULT '', ADD COLUMN owner_user VARCHAR NOT NULL DEFAULT ''"
            conn.execute(text(f"ALTER TABLE {events} {owner_columns}"))
            conn.execute(
                text(
                    f"UPDATE {events} e SET tenant = t.tenant, owner_user = t.owner_user "
                    f"FROM {tasks} t WHERE t.id = e.task_id"
                )
            )
        if "tenant" not in {c["name"] for c in inspector.get_columns(claims)}:
            conn.execute(text(f"DELETE FROM {claims}"))
            owner_columns = "ADD COLUMN tenant VARCHAR NOT NULL DEFAULT '', ADD COLUMN owner_user VARCHAR NOT NULL DEFAULT ''"
            conn.execute(text(f"ALTER TABLE {claims} {owner_columns}"))
        rekey(conn, self.leases, ["task_id", "tenant", "owner_user"])
        rekey(conn, self.events, ["task_id", "tenant", "owner_user", "version"])
        rekey(conn, self.push_claims, ["task_id", "config_id", "tenant", "owner_user"])

    async def _create_engine(self) -> AsyncEngine:
        """The PostgreSQL pool, its sessions ended by the server when they sit
        idle inside a transaction for ``idle_transaction_timeout`` seconds: a
        replica frozen mid-write (SIGSTOP, a long GC pause) must not hold the
        lease row it locked, or nobody could take its lease over."""
        ms = str(max(1, int(self.idle_transaction_timeout * 1000)))
        return create_async_engine(
            self.url,
            echo=self._echo,
            pool_pre_ping=True,
            connect_args={"server_settings": {"idle_in_transaction_session_timeout": ms}},
        )

    def check_fence(self, conn: Connection, fence: Fence, *, creating: bool = False) -> None:
        """Inside a write transaction: takes ``fence``'s lease row FOR KEY SHARE;
        raises LeaseLostError (rolling the write back) when the task's lease
        no longer has that epoch. A creation's :class:`NewLease` fences
        nothing (the task did not exist); any other write fenced by one fails
        (its epoch, 0, is no lease's)."""
        if creating and isinstance(fence, NewLease):
            fence.epochs.clear()  # a batch that is run again runs its bodies again
            return
        row = conn.execute(self._sql_fence, {"task": fence.task_id, "epoch": fence.epoch}).first()
        if row is None:
            raise LeaseLostError(fence.task_id)

    def fenced_write_done(
        self, conn: Connection, task: pb.Task, owner: Owner, fence: Fence, *, creating: bool
    ) -> None:
        """After a fenced write's rows, in its transaction: a creation's
        :class:`NewLease` takes the lease (unless the task is created terminal
        and the fence is not ``always``); a write that leaves the task
        terminal drops the lease row (its fence check took it FOR KEY SHARE
        in this transaction, so it is still this epoch's)."""
        terminal = is_terminal(task.status.state)
        if creating and isinstance(fence, NewLease):
            if fence.always or not terminal:
                params: dict[str, Any] = {"task": task.id, "tenant": owner.tenant, "user": owner.user}
                params.update(replica=fence.replica, ttl=fence.ttl)
                epoch = conn.execute(self._sql_acquire, params).scalar_one_or_none()
                if epoch is None:  # a stale lease row of a task id just inserted: roll back
                    raise RuntimeError(f"task {task.id} already has a lease row")
                fence.epochs.append(int(epoch))
        elif not creating and terminal and fence.epoch > 0:
            conn.execute(self._sql_release, {"task": fence.task_id, "epoch": fence.epoch})

    async def acquire_lease(self, task_id: str, owner: Owner, replica: str, ttl: float) -> Fence | None:
        """Takes the lease of ``owner``'s task ``task_id`` for ``ttl``
        seconds; None when the task already has one (running elsewhere, or expired and not yet
        taken over by a reaper). Group-committed with the task writes."""
        params = {"task": task_id, "tenant": owner.tenant, "user": owner.user, "replica": replica, "ttl": ttl}
        epoch = await self._run_write(self._scalar_tx, self._sql_acquire, params)
        return None if epoch is None else Fence(task_id, int(epoch))

    @staticmethod
    def _scalar_tx(conn: Connection, statement: Any, params: dict[str, Any]) -> Any:
        """A group-committed body of one statement that cannot fail on a
        conflict (ON CONFLICT DO NOTHING, a DELETE): its first column, if any."""
        return conn.execute(statement, params).scalar_one_or_none()

    async def renew_leases(self, epochs: list[int], ttl: float) -> set[int]:
        """Extends the leases with these epochs by ``ttl`` seconds from now;
        returns the epochs still held (the others were taken over)."""
        if not epochs:
            return set()
        async with self._write() as conn:
            rows = (await conn.execute(self._sql_renew, {"epochs": epochs, "ttl": ttl})).scalars().all()
        return {int(e) for e in rows}

    async def release_lease(self, fence: Fence) -> None:
        """Drops the lease if it still has ``fence``'s epoch (no-op otherwise)."""
        await self._run_write(
            self._scalar_tx, self._sql_release, {"task": fence.task_id, "epoch": fence.epoch}
        )

    async def take_over_expired(self, replica: str, ttl: float, limit: int = 100) -> list[TakenLease]:
        """Takes over up to ``limit`` expired leases for ``replica`` (new
        epochs, ``ttl`` seconds): from this commit on, their old holders'
        fenced writes fail. Leases another reaper is taking are skipped."""
        params = {"replica": replica, "ttl": ttl, "limit": limit}
        async with self._write() as conn:
            rows = (await conn.execute(self._sql_take, params)).all()
        return [TakenLease(Owner(r[1], r[2]), r[3], Fence(r[0], int(r[4]))) for r in rows]

    async def end_relay_session(self, replica: str) -> int:
        """Ends the PostgreSQL sessions listening for ``replica``'s event relay
        (``application_name`` ``a2a-relay-<replica>``) in this database;
        returns how many. PostgreSQL keeps every notification until each
        listening session has read it, so a frozen replica's session would
        let the notification queue fill (and then every task write fail);
        the relay of a replica that was only paused listens again and catches
        up from the event log."""
        params = {"name": f"a2a-relay-{replica}"[:63]}
        async with self.engine.connect() as conn:
            rows = (await conn.execute(self._sql_end_relay, params)).all()
        return sum(1 for r in rows if r[0])

    async def lease_holder(self, owner: Owner, task_id: str) -> str | None:
        """The replica holding the lease of ``owner``'s task ``task_id``, or None."""
        params = {"task": task_id, "tenant": owner.tenant, "user": owner.user}
        async with self.engine.connect() as conn:
            return (await conn.execute(self._sql_holder, params)).scalar_one_or_none()

    async def steal_lease(self, owner: Owner, task_id: str, replica: str, ttl: float) -> Fence | None:
        """Takes the lease of ``owner``'s task ``task_id`` from whoever holds
        it, expired or not (a new epoch: the holder's fenced writes fail from
        this commit on); None when the task has no lease. Used to force a
        cancel the holder did not answer."""
        params = {"task": task_id, "tenant": owner.tenant, "user": owner.user, "replica": replica, "ttl": ttl}
        async with self._write() as conn:
            epoch = (await conn.execute(self._sql_steal, params)).scalar_one_or_none()
        return None if epoch is None else Fence(task_id, int(epoch))

    async def send_control(self, message: str) -> None:
        """NOTIFY the replicas' relays on the control channel."""
        async with self._write() as conn:
            await conn.execute(self._sql_notify, {"channel": self.control_channel, "payload": message})

    async def lease_count(self) -> int:
        """How many leases exist (tests, health)."""
        async with self.engine.connect() as conn:
            return int((await conn.execute(self._sql_count)).scalar_one())


def ends_task(event: pb.StreamResponse) -> bool:
    """Whether the task is terminal after ``event`` (its log row's ``final``)."""
    kind = event.WhichOneof("payload")
    if kind == "task":
        return is_terminal(event.task.status.state)
    if kind == "status_update":
        return is_terminal(event.status_update.status.state)
    return False
