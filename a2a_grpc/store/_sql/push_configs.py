"""The SQL store's push notification configs (spec §3.1.7-§3.1.10), kept in
creation order per task and owner."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from a2a_grpc.context import Owner
from a2a_grpc.core.ports import V1_DIALECT
from a2a_grpc.store._sql.engine import SqlDatabase
from a2a_grpc.types import pb

__all__ = ["SqlPushConfigs"]


def _put_config_tx(conn: Any, change: Any, configs: Any, row: dict[str, Any]) -> None:
    """Updates the config in place (its creation order kept), or inserts it."""
    if conn.execute(change).rowcount == 0:
        conn.execute(insert(configs).values(**row))


def _delete_config_tx(conn: Any, gone: Any, stale: Any) -> bool:
    """Deletes the config and, only when it existed, its pending outbox rows."""
    if conn.execute(gone).rowcount == 0:
        return False
    conn.execute(stale)
    return True


class SqlPushConfigs(SqlDatabase):
    """The push-config half of the store (the ``PushConfigStore`` methods)."""

    def _config_key(self, owner: Owner, task_id: str, config_id: str) -> list[Any]:
        c = self.schema.configs.c
        return [c.tenant == owner.tenant, c.owner_user == owner.user, c.task_id == task_id, c.id == config_id]

    async def put_push_config(
        self, owner: Owner, config: pb.TaskPushNotificationConfig, *, dialect: str = V1_DIALECT
    ) -> None:
        """Creates or replaces (keeping its place in creation order) the
        config keyed by ``config.task_id`` and ``config.id``, registered in
        ``dialect`` (stored as NULL for v1.0)."""
        configs = self.schema.configs
        key = self._config_key(owner, config.task_id, config.id)
        data = config.SerializeToString()
        values = {"data": data, "dialect": None if dialect == V1_DIALECT else dialect}
        row = {
            "tenant": owner.tenant,
            "owner_user": owner.user,
            "task_id": config.task_id,
            "id": config.id,
            **values,
        }
        for attempt in range(2):
            try:
                await self._run_write(
                    _put_config_tx, update(configs).where(*key).values(**values), configs, row
                )
                return
            except IntegrityError:
                # A concurrent writer inserted the same key first: update it.
                if attempt:
                    raise

    async def get_push_config(
        self, owner: Owner, task_id: str, config_id: str
    ) -> pb.TaskPushNotificationConfig | None:
        """The config, or None when missing or not ``owner``'s."""
        stmt = select(self.schema.configs.c.data).where(*self._config_key(owner, task_id, config_id))
        async with self.engine.connect() as conn:
            data = (await conn.execute(stmt)).scalar_one_or_none()
        return None if data is None else pb.TaskPushNotificationConfig.FromString(data)

    async def get_push_target(
        self, owner: Owner, task_id: str, config_id: str
    ) -> tuple[pb.TaskPushNotificationConfig, str] | None:
        """``owner``'s config and the dialect it was registered in, or None."""
        c = self.schema.configs.c
        stmt = select(c.data, c.dialect).where(*self._config_key(owner, task_id, config_id))
        async with self.engine.connect() as conn:
            row = (await conn.execute(stmt)).one_or_none()
        return (
            None
            if row is None
            else (pb.TaskPushNotificationConfig.FromString(row.data), row.dialect or V1_DIALECT)
        )

    async def list_push_configs(
        self, owner: Owner, task_id: str, *, limit: int | None = None, after_id: str | None = None
    ) -> list[pb.TaskPushNotificationConfig]:
        """The task's configs in creation order, at most ``limit``, starting
        after ``after_id`` (nothing when ``after_id`` is not a config of the task)."""
        c = self.schema.configs.c
        conds: list[Any] = [c.tenant == owner.tenant, c.owner_user == owner.user, c.task_id == task_id]
        if after_id is not None:
            after_seq = select(c.seq).where(*self._config_key(owner, task_id, after_id)).scalar_subquery()
            conds.append(c.seq > after_seq)
        stmt = select(c.data).where(*conds).order_by(c.seq)
        if limit is not None:
            stmt = stmt.limit(limit)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).scalars().all()
        return [pb.TaskPushNotificationConfig.FromString(data) for data in rows]

    async def delete_push_config(self, owner: Owner, task_id: str, config_id: str) -> bool:
        """Removes the config and, in the same transaction, its pending
        outbox rows; False if absent."""
        outbox = self.schema.outbox
        o = outbox.c
        stale = delete(outbox).where(
            o.task_id == task_id,
            o.config_id == config_id,
            o.tenant == owner.tenant,
            o.owner_user == owner.user,
            o.state == "pending",
        )
        gone = delete(self.schema.configs).where(*self._config_key(owner, task_id, config_id))
        return bool(await self._run_write(_delete_config_tx, gone, stale))

    async def count_push_configs(self, owner: Owner, task_id: str | None = None) -> int:
        """How many configs ``owner`` has (on ``task_id`` only, when given)."""
        c = self.schema.configs.c
        conds: list[Any] = [c.tenant == owner.tenant, c.owner_user == owner.user]
        if task_id is not None:
            conds.append(c.task_id == task_id)
        stmt = select(func.count()).select_from(self.schema.configs).where(*conds)
        async with self.engine.connect() as conn:
            return int((await conn.execute(stmt)).scalar_one())
