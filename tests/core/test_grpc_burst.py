"""A burst of new gRPC calls is queued, not cancelled: grpc-core keeps at most
``grpc.server.max_pending_requests`` (1,000 by default, hard limit 3,000)
calls the application has not accepted yet and ends the rest with CANCELLED;
``A2AServer`` raises both limits (bench/results/analysis.md, hot spot 7)."""

from __future__ import annotations

import asyncio
import os

import grpc

from a2a_grpc.server import A2AServer, ServerConfig
from a2a_grpc.store._memory import InMemoryTaskStore
from a2a_grpc.types import pb, pb_grpc
from tests.core.agents import ScriptedAgent
from tests.core.helpers import VERSION_MD, msg

STREAMS = int(os.environ.get("A2A_BURST_STREAMS", "3500"))


async def test_a_burst_of_subscriptions_all_get_their_snapshot() -> None:
    agent = ScriptedAgent()
    server = A2AServer(
        agent, InMemoryTaskStore(), ServerConfig(grpc_port=0, http_port=None, grace_seconds=0.2)
    )
    await server.start()
    try:
        await _burst(server, agent)
    finally:
        await server.stop(0.2)


async def _burst(server: A2AServer, agent: ScriptedAgent) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        stub = pb_grpc.A2AServiceStub(channel)
        task = (await stub.SendMessage(msg("gate burst", return_immediately=True), metadata=VERSION_MD)).task
        await asyncio.wait_for(agent.started("burst").wait(), 5)

        async def first_event(call: grpc.aio.UnaryStreamCall) -> str:  # type: ignore[type-arg]
            try:
                event = await call.read()
            except grpc.aio.AioRpcError as exc:
                return exc.code().name
            return (
                "snapshot" if event is not grpc.aio.EOF and event.WhichOneof("payload") == "task" else "other"
            )

        # All calls are started before any is read: they reach the server in one burst.
        calls = [
            stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id), metadata=VERSION_MD)
            for _ in range(STREAMS)
        ]
        outcomes = await asyncio.wait_for(asyncio.gather(*(first_event(c) for c in calls)), 120)
        for call in calls:
            call.cancel()
    counts = {o: outcomes.count(o) for o in set(outcomes)}
    assert counts == {"snapshot": STREAMS}
    agent.gate("burst").set()
