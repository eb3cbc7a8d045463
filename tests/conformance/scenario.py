"""Request builders and small helpers shared by the scenarios."""

from __future__ import annotations

import asyncio
from typing import Any

from a2a_grpc.core._executor import text_part
from a2a_grpc.types import new_id, pb
from tests.conformance.clients import Binding


def message(*parts: pb.Part | str, task_id: str = "", context_id: str = "", **kw: Any) -> pb.Message:
    kw.setdefault("message_id", new_id())
    return pb.Message(
        role=pb.ROLE_USER,
        task_id=task_id,
        context_id=context_id,
        parts=[text_part(p) if isinstance(p, str) else p for p in parts],
        **kw,
    )


def send(
    *parts: pb.Part | str, task_id: str = "", context_id: str = "", tenant: str = "", **cfg: Any
) -> pb.SendMessageRequest:
    req = pb.SendMessageRequest(
        tenant=tenant, message=message(*parts, task_id=task_id, context_id=context_id)
    )
    if cfg:
        req.configuration.CopyFrom(pb.SendMessageConfiguration(**cfg))
    return req


def kinds(events: list[pb.StreamResponse]) -> list[str]:
    return [str(e.WhichOneof("payload")) for e in events]


async def start_holding(binding: Binding, *, tenant: str = "") -> pb.Task:
    """A task that stays WORKING until canceled (returned once WORKING)."""
    resp = await binding.call("SendMessage", send("hold", tenant=tenant, return_immediately=True))
    task = resp.task
    for _ in range(200):
        if task.status.state == pb.TASK_STATE_WORKING:
            return task
        await asyncio.sleep(0.01)
        task = await binding.call("GetTask", pb.GetTaskRequest(id=task.id, tenant=tenant))
    raise AssertionError(f"task never became WORKING: {task}")
