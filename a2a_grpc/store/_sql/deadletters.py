"""Dead letters on SQL: outbox rows in state ``dead``, listed, shown, sent
again or dropped (see :mod:`a2a_grpc.store._deadletters`)."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import delete, select, update

from a2a_grpc.context import Owner
from a2a_grpc.core.ports import OutboxEntry, OutboxRecord
from a2a_grpc.store._sql.engine import SqlDatabase

__all__ = ["SqlDeadLetters"]


def _record(r: Any) -> OutboxRecord:
    owner = Owner(r.tenant or "", r.owner_user or "")
    entry = OutboxEntry(r.task_id, r.config_id, r.event_id, bytes(r.payload), r.trace_context or "", owner)
    return OutboxRecord(r.seq, entry, r.attempts, r.next_attempt_at, r.state, r.last_error)


def _changed_one(conn: Any, stmt: Any) -> bool:
    return bool(conn.execute(stmt).rowcount == 1)


class SqlDeadLetters(SqlDatabase):
    """The dead-letter half of the SQL store."""

    async def dead_letters(self, limit: int = 100, after_seq: int = 0) -> list[OutboxRecord]:
        """Dead rows with ``seq > after_seq``, lowest first, at most ``limit``."""
        o = self.schema.outbox.c
        stmt = (
            select(self.schema.outbox)
            .where(o.state == "dead", o.seq > after_seq)
            .order_by(o.seq)
            .limit(limit)
        )
        async with self.engine.connect() as conn:
            return [_record(r) for r in (await conn.execute(stmt)).all()]

    async def dead_letter(self, seq: int) -> OutboxRecord | None:
        """The dead row ``seq``, or None."""
        o = self.schema.outbox.c
        stmt = select(self.schema.outbox).where(o.seq == seq, o.state == "dead")
        async with self.engine.connect() as conn:
            row = (await conn.execute(stmt)).first()
        return None if row is None else _record(row)

    async def redrive_dead_letter(self, seq: int) -> bool:
        """Makes the dead row ``seq`` pending again, due now, with no attempts
        counted; False when there is no such dead row."""
        o = self.schema.outbox.c
        stmt = (
            update(self.schema.outbox)
            .where(o.seq == seq, o.state == "dead")
            .values(state="pending", attempts=0, next_attempt_at=time.time(), last_error="redriven")
        )
        return bool(await self._run_write(_changed_one, stmt))

    async def drop_dead_letter(self, seq: int) -> bool:
        """Deletes the dead row ``seq``; False when there is no such dead row."""
        o = self.schema.outbox.c
        return bool(
            await self._run_write(
                _changed_one, delete(self.schema.outbox).where(o.seq == seq, o.state == "dead")
            )
        )
