"""Task retention on SQL: terminal tasks older than a cut-off are deleted with
their push configs, outbox rows and artifact chunks, and the task counts move
with them, in one transaction per batch (see :mod:`a2a_grpc.store._retention`)."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import delete, select, tuple_

from a2a_grpc.context import Owner
from a2a_grpc.store._sql.batch import WriteConnection
from a2a_grpc.store._sql.tasks import SqlTasks
from a2a_grpc.types import TERMINAL_STATES

__all__ = ["SqlRetention"]


class SqlRetention(SqlTasks):
    """The retention half of the SQL store (``purge_terminal_tasks``)."""

    async def purge_terminal_tasks(self, before_ms: int, limit: int = 1000) -> int:
        """Deletes up to ``limit`` terminal tasks (COMPLETED, FAILED,
        CANCELED, REJECTED) whose status timestamp is before ``before_ms``
        (Unix ms), oldest first, with their push configs and outbox rows;
        returns how many tasks were deleted. A terminal task never changes
        again, so nothing racing this can lose a write."""
        purged = await self._run_write(self._purge_tx, before_ms, limit)
        if purged:
            self._memory.clear()  # forget the cached snapshots of deleted tasks
        return purged

    def _purge_tx(self, conn: WriteConnection, before_ms: int, limit: int) -> int:
        schema = self.schema
        t, c, o, k = schema.tasks.c, schema.configs.c, schema.outbox.c, schema.chunks.c
        old = t.state.in_(sorted(TERMINAL_STATES)) & (t.status_ts_ms < before_ms)
        rows = conn.execute(
            select(t.id, t.tenant, t.owner_user, t.state, t.context_id)
            .where(old)
            .order_by(t.status_ts_ms, t.id)
            .limit(limit)
        ).all()
        if not rows:
            return 0
        keys = [(r[0], r[1], r[2]) for r in rows]  # a task id names a task of one owner
        conn.execute(delete(schema.tasks).where(tuple_(t.id, t.tenant, t.owner_user).in_(keys) & old))
        conn.execute(delete(schema.configs).where(tuple_(c.task_id, c.tenant, c.owner_user).in_(keys)))
        conn.execute(delete(schema.outbox).where(tuple_(o.task_id, o.tenant, o.owner_user).in_(keys)))
        conn.execute(delete(schema.chunks).where(tuple_(k.task_id, k.tenant, k.owner_user).in_(keys)))
        moves: dict[Owner, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
        for _id, tenant, user, state, context_id in rows:
            deltas = moves[Owner(tenant, user)]
            for key in (("all", ""), ("state", str(state)), ("context", context_id)):
                deltas[key] -= 1
        for owner, deltas in moves.items():
            self._add_counts(conn, owner, deltas)
        return len(keys)
