"""The rules of the four push notification config operations (spec
§3.1.7–3.1.10) over a :class:`~a2a_grpc.core.ports.PushConfigStore`: generated
ids, the caller's tenant, the per-task and per-caller limits, and paging.

The handler checks the capability and that the caller's task exists first;
webhook URLs are checked by the push sink (its SSRF guard) passed to
:meth:`PushConfigs.create`. Get and List never answer
``authentication.credentials`` (A2A's proposed #1750 rule, docs/decisions.md):
the scheme stays, the secret is write-only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from a2a_grpc.context import Owner
from a2a_grpc.core.ports import V1_DIALECT, PushConfigStore
from a2a_grpc.errors import A2AError, ErrorCode
from a2a_grpc.protocol import _paging as paging
from a2a_grpc.types import new_id, pb

__all__ = ["PushConfigs"]

Check = Callable[[pb.TaskPushNotificationConfig], Awaitable[None]]


class PushConfigs:
    """A caller's webhook configs: at most ``max_per_task`` on one task and
    ``max_per_owner`` in all."""

    def __init__(self, store: PushConfigStore, *, max_per_task: int, max_per_owner: int) -> None:
        self.store = store
        self.max_per_task = max_per_task
        self.max_per_owner = max_per_owner

    async def create(
        self, req: pb.TaskPushNotificationConfig, owner: Owner, check: Check, *, dialect: str = V1_DIALECT
    ) -> pb.TaskPushNotificationConfig:
        """Stores (or replaces) the config, its id generated when empty, as
        registered in ``dialect`` (its webhook's bodies follow it), and
        returns it. Raises what ``check`` raises (INVALID_PARAMS for a bad
        webhook) and RESOURCE_EXHAUSTED when a new config is one too many."""
        config = pb.TaskPushNotificationConfig()
        config.CopyFrom(req)
        config.tenant = owner.tenant
        if not config.id:
            config.id = new_id()
        await check(config)
        if await self.store.get_push_config(owner, config.task_id, config.id) is None:
            await self._check_limits(owner, config.task_id)
        await self.store.put_push_config(owner, config, dialect=dialect)
        return config

    async def _check_limits(self, owner: Owner, task_id: str) -> None:
        if await self.store.count_push_configs(owner, task_id) >= self.max_per_task:
            raise A2AError(
                ErrorCode.RESOURCE_EXHAUSTED, f"task {task_id} already has {self.max_per_task} push configs"
            )
        if await self.store.count_push_configs(owner) >= self.max_per_owner:
            raise A2AError(
                ErrorCode.RESOURCE_EXHAUSTED, f"the caller already has {self.max_per_owner} push configs"
            )

    async def get(self, owner: Owner, task_id: str, config_id: str) -> pb.TaskPushNotificationConfig:
        """The config. Raises TASK_NOT_FOUND when the task has no such config."""
        config = await self.store.get_push_config(owner, task_id, config_id)
        if config is None:
            raise A2AError(
                ErrorCode.TASK_NOT_FOUND,
                f"push notification config {config_id} not found on task {task_id}",
                metadata={"taskId": task_id, "configId": config_id},
            )
        return _redacted(config)

    async def page(
        self, owner: Owner, task_id: str, page_size: int, page_token: str
    ) -> pb.ListTaskPushNotificationConfigsResponse:
        """One page of the task's configs in creation order (``page_size`` 0:
        100, at most 100). Raises INVALID_PARAMS for a bad ``page_token``."""
        size = min(page_size or 100, 100)
        after = paging.decode_config_token(page_token) if page_token else None
        configs = await self.store.list_push_configs(owner, task_id, limit=size + 1, after_id=after)
        token = ""
        if len(configs) > size:
            configs = configs[:size]
            token = paging.config_token(configs[-1].id)
        return pb.ListTaskPushNotificationConfigsResponse(
            configs=[_redacted(c) for c in configs], next_page_token=token
        )

    async def delete(self, owner: Owner, task_id: str, config_id: str) -> None:
        """Removes the config and its pending deliveries; idempotent."""
        await self.store.delete_push_config(owner, task_id, config_id)


def _redacted(config: pb.TaskPushNotificationConfig) -> pb.TaskPushNotificationConfig:
    """``config`` (a copy the store handed out) without its credentials."""
    if config.HasField("authentication"):
        config.authentication.ClearField("credentials")
    return config
