"""Two writers on one database: an execution's write that loses the
compare-and-swap race applies its event again on the task as the other writer
left it, so neither change is lost (issue 9, "lost update").

The handler runs on one SqlTaskStore; the other writer is a second
SqlTaskStore on the same database (as a second process would be).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from storekit import make_sql_store, unique_prefix

from a2a_grpc.context import CallContext
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.core._handler import RequestHandler
from a2a_grpc.core.ports import TaskWrite, task_key
from a2a_grpc.types import pb

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


class _GatedAgent(AgentExecutor):
    """WORKING, then waits for ``release``, then an artifact and COMPLETED."""

    card = pb.AgentCard(name="gated")

    def __init__(self) -> None:
        self.working = asyncio.Event()
        self.release = asyncio.Event()

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Any]:
        yield ctx.status(pb.TASK_STATE_WORKING)
        self.working.set()  # the WORKING update is stored when the generator resumes
        await self.release.wait()
        yield ctx.artifact(["the result"], artifact_id="result")
        yield ctx.status(pb.TASK_STATE_COMPLETED)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_metadata_written_by_another_store_survives_the_agents_artifact(
    backend: str, tmp_path: Path
) -> None:
    prefix = unique_prefix()
    mine = await make_sql_store(backend, tmp_path, prefix)
    other = await make_sql_store(backend, tmp_path, prefix)
    await mine.open()
    await other.open()
    agent = _GatedAgent()
    handler = RequestHandler(agent, mine, agent.card)
    call = CallContext(method="/lf.a2a.v1.A2AService/SendMessage", protocol_version="1.0")
    try:
        req = pb.SendMessageRequest(
            message=pb.Message(message_id="m1", role=pb.ROLE_USER, parts=[pb.Part(text="go")]),
            configuration=pb.SendMessageConfiguration(return_immediately=True),
        )
        task_id = (await handler.send_message(req, call)).task.id
        ex = handler.executions.get(task_key(call.owner, task_id))
        assert ex is not None
        await asyncio.wait_for(agent.working.wait(), 10)

        # The other writer: metadata on the same task, bumping its version.
        stored = await other.get(task_id, call.owner)
        assert stored is not None and stored.task.status.state == pb.TASK_STATE_WORKING
        stored.task.metadata.update({"note": "set by the other writer"})
        await other.update(TaskWrite(stored.task, call.owner, stored.version))

        agent.release.set()
        await asyncio.wait_for(ex.signals.until_settled(), 10)
        final = await other.get(task_id, call.owner)
        assert final is not None
        assert final.task.status.state == pb.TASK_STATE_COMPLETED
        assert dict(final.task.metadata) == {"note": "set by the other writer"}
        assert [a.artifact_id for a in final.task.artifacts] == ["result"]
        assert final.task.artifacts[0].parts[0].text == "the result"
    finally:
        await handler.close()
        if backend == "postgresql":
            await mine.drop_all()
        await other.close()
        await mine.close()
