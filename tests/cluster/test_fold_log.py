"""Events an agent yields together (issue 17) are one write on the cluster
store too, and its task-event log keeps each of them as its own version:
what a subscriber on another replica reads is what the stream carried."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2a_grpc.cluster._store import ClusterStore
from a2a_grpc.context import CallContext
from a2a_grpc.core._executor import AgentExecutor, ExecutorContext
from a2a_grpc.core._handler import RequestHandler
from a2a_grpc.core.ports import TaskWrite, task_key
from a2a_grpc.types import pb
from tests.cluster.replicas import drop_database, fresh_database
from tests.store.storekit import PG_URL, postgres_skip_reason

pytestmark = [pytest.mark.postgres]


class _Counted(ClusterStore):
    writes = 0

    async def update(self, write: TaskWrite) -> int:
        self.writes += 1
        return await super().update(write)


class _Chunks(AgentExecutor):
    card = pb.AgentCard(name="chunks", capabilities=pb.AgentCapabilities(streaming=True))

    async def execute(self, ctx: ExecutorContext) -> AsyncIterator[Any]:
        for i in range(3):
            yield ctx.artifact([f"c{i}"], artifact_id="a", append=i > 0)
        yield ctx.status(pb.TASK_STATE_COMPLETED)


async def test_a_burst_is_one_write_and_one_logged_event_per_version() -> None:
    reason = await postgres_skip_reason()
    if reason:
        pytest.skip(reason)
    url = await fresh_database(PG_URL)
    store = _Counted(url)
    await store.open()
    handler = RequestHandler(_Chunks(), store, _Chunks.card)
    call = CallContext.from_metadata("/lf.a2a.v1.A2AService/SendStreamingMessage", (("a2a-version", "1.0"),))
    req = pb.SendMessageRequest(
        message=pb.Message(message_id="m", role=pb.ROLE_USER, parts=[pb.Part(text="x")])
    )
    try:
        streamed = [e async for e in handler.send_streaming_message(req, call)]
        assert store.writes == 1
        logged = await store.events_after(task_key(call.owner, streamed[0].task.id), 0)
        assert [v for v, _e, _f in logged] == [1, 2, 3, 4, 5]
        assert [e for _v, e, _f in logged][1:] == streamed[1:]
        assert [f for _v, _e, f in logged] == [False, False, False, False, True]
    finally:
        await handler.close()
        await store.close()
        await drop_database(PG_URL, url)
