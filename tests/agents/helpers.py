"""Helpers to drive an AgentExecutor directly through an ExecutorContext and read its events."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from a2a_grpc.agents._code_review import ARTIFACT_NAME
from a2a_grpc.context import CallContext
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.types import new_id, pb

DIFFS = Path(__file__).resolve().parents[2] / "examples" / "diffs"


def diff_text(name: str) -> str:
    """The text of ``examples/diffs/<name>``."""
    return (DIFFS / name).read_text(encoding="utf-8")


def new_line_of(diff: str, path: str, needle: str) -> int:
    """The new-file line number of the added line of ``path`` containing ``needle``, computed from
    the diff itself (independent of the agent)."""
    from unidiff import PatchSet

    for patched in PatchSet(diff):
        if patched.path == path:
            for hunk in patched:
                for line in hunk:
                    if line.is_added and needle in line.value:
                        return int(line.target_line_no)
    raise AssertionError(f"{needle!r} is not added to {path}")


def user_message(*parts: pb.Part, task_id: str = "", context_id: str = "") -> pb.Message:
    return pb.Message(
        message_id=new_id(), role=pb.ROLE_USER, parts=list(parts), task_id=task_id, context_id=context_id
    )


def make_ctx(
    message: pb.Message, *, task: pb.Task | None = None, accepted: Sequence[str] = ()
) -> ExecutorContext:
    return ExecutorContext(
        message=message,
        task_id=task.id if task else new_id(),
        context_id=task.context_id if task else new_id(),
        call=CallContext(method="/lf.a2a.v1.A2AService/SendMessage"),
        task=task,
        accepted_output_modes=accepted,
    )


async def run(agent: AgentExecutor, ctx: ExecutorContext) -> list[Any]:
    """All events of one execution; checks they all belong to the context's task."""
    events = [event async for event in agent.execute(ctx)]
    for event in events:
        assert event.task_id == ctx.task_id
        assert event.context_id == ctx.context_id
    return events


def statuses(events: Sequence[Any]) -> list[pb.TaskStatusUpdateEvent]:
    return [e for e in events if isinstance(e, pb.TaskStatusUpdateEvent)]


def status_text(event: pb.TaskStatusUpdateEvent) -> str:
    return "\n".join(p.text for p in event.status.message.parts)


def artifacts(events: Sequence[Any]) -> list[pb.TaskArtifactUpdateEvent]:
    updates = [e for e in events if isinstance(e, pb.TaskArtifactUpdateEvent)]
    assert all(u.artifact.name == ARTIFACT_NAME for u in updates)
    return updates


def review_data(events: Sequence[Any]) -> dict[str, Any]:
    """The review merged over all artifact chunks: findings concatenated, summary and skipped from
    the data part that has them."""
    merged: dict[str, Any] = {"findings": []}
    for update in artifacts(events):
        for part in update.artifact.parts:
            if part.WhichOneof("content") == "data":
                value = json_format.MessageToDict(part.data)
                merged["findings"].extend(value["findings"])
                for key in ("summary", "skipped"):
                    if key in value:
                        merged[key] = value[key]
    return merged
