"""The SQL store's push outbox: rows a task update inserts in its own
transaction (see :mod:`a2a_grpc.store._sql.tasks`), which the push dispatcher
reads when due and marks after each delivery attempt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select, update

from a2a_grpc.context import Owner
from a2a_grpc.core.ports import OutboxEntry, OutboxRecord
from a2a_grpc.store._sql.batch import WriteConnection
from a2a_grpc.store._sql.engine import SqlDatabase

__all__ = ["SqlPushOutbox", "pending_rows"]


def pending_rows(entries: Sequence[OutboxEntry], now: float, owner: Owner) -> list[dict[str, Any]]:
    """The ``push_outbox`` rows for ``entries`` of ``owner``'s task (the rows
    of a write are its task's): pending, never attempted, due at ``now``
    (Unix seconds)."""
    return [
        {
            "task_id": e.task_id,
            "config_id": e.config_id,
            "event_id": e.event_id,
            "payload": e.payload,
            "attempts": 0,
            "next_attempt_at": now,
            "state": "pending",
            "last_error": "",
            "trace_context": e.trace_context or None,
            "tenant": owner.tenant,
            "owner_user": owner.user,
        }
        for e in entries
    ]


class SqlPushOutbox(SqlDatabase):
    """The outbox half of the store (the ``PushOutbox`` methods)."""

    async def outbox_due(self, now: float, limit: int) -> list[OutboxRecord]:
        """Pending rows with ``next_attempt_at <= now`` (Unix seconds), lowest
        ``seq`` first, at most ``limit``."""
        outbox = self.schema.outbox
        o = outbox.c
        stmt = (
            select(outbox).where(o.state == "pending", o.next_attempt_at <= now).order_by(o.seq).limit(limit)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).all()
        return [
            OutboxRecord(
                seq=r.seq,
                entry=OutboxEntry(
                    task_id=r.task_id,
                    config_id=r.config_id,
                    event_id=r.event_id,
                    payload=bytes(r.payload),
                    trace_context=r.trace_context or "",
                    owner=Owner(r.tenant or "", r.owner_user or ""),
                ),
                attempts=r.attempts,
                next_attempt_at=r.next_attempt_at,
                state=r.state,
                last_error=r.last_error,
            )
            for r in rows
        ]

    async def outbox_mark(
        self, seq: int, *, state: str, attempts: int, next_attempt_at: float, last_error: str = ""
    ) -> None:
        """Records a delivery attempt's outcome on row ``seq`` (no-op if gone)."""
        values = {
            "state": state,
            "attempts": attempts,
            "next_attempt_at": next_attempt_at,
            "last_error": last_error,
        }
        await self._run_write(self._mark_tx, seq, values)

    def _mark_tx(self, conn: WriteConnection, seq: int, values: dict[str, Any]) -> None:
        outbox = self.schema.outbox
        conn.execute(update(outbox).where(outbox.c.seq == seq).values(**values))

    async def outbox_count(self, state: str) -> int:
        """How many outbox rows are in ``state``."""
        outbox = self.schema.outbox
        stmt = select(func.count()).select_from(outbox).where(outbox.c.state == state)
        async with self.engine.connect() as conn:
            return int((await conn.execute(stmt)).scalar_one())
